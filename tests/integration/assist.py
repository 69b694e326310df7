"""Home Assistant with real engines for the voice tests: Assist set up as a user would.

Whisper and Piper run as subprocess servers and are added as entries of HA's own
``wyoming`` integration; a pipeline uses them with HA's default conversation
agent, which can switch a template light named "Kitchen light".
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
import re
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import Pipeline
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
from homeassistant.core import Event, HomeAssistant
from homeassistant.helpers import area_registry as ar, entity_registry as er
from homeassistant.setup import async_setup_component
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.const import DOMAIN
from devstack import servers
from devstack.assist_pipeline import create_preferred_pipeline
from devstack.satellite import RunningSatellite
from devstack.state_log import SatelliteStateLog

FRONT_DOOR = "lock.front_door"
LIGHT = "light.kitchen"
SWITCH = "input_boolean.kitchen_power"

IDLE = AssistSatelliteState.IDLE
LISTENING = AssistSatelliteState.LISTENING
PROCESSING = AssistSatelliteState.PROCESSING
RESPONDING = AssistSatelliteState.RESPONDING


def words(text: str) -> list[str]:
    """Lower-case words without punctuation."""
    return re.findall(r"[a-z']+", text.lower())


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


KITCHEN_LIGHT = {
    "name": "Kitchen light",
    "unique_id": "kitchen_light",
    "default_entity_id": LIGHT,
    "state": f"{{{{ is_state('{SWITCH}', 'on') }}}}",
    "turn_on": {"action": "input_boolean.turn_on", "target": {"entity_id": SWITCH}},
    "turn_off": {"action": "input_boolean.turn_off", "target": {"entity_id": SWITCH}},
}
FAN = "switch.fan"
# A fan as a template switch: ``input_boolean.fan_power`` is its power.
FAN_SWITCH = {
    "name": "Fan",
    "unique_id": "fan",
    "default_entity_id": FAN,
    "state": "{{ is_state('input_boolean.fan_power', 'on') }}",
    "turn_on": {
        "action": "input_boolean.turn_on",
        "target": {"entity_id": "input_boolean.fan_power"},
    },
    "turn_off": {
        "action": "input_boolean.turn_off",
        "target": {"entity_id": "input_boolean.fan_power"},
    },
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
    return await create_preferred_pipeline(
        hass, stt_entry, tts_entry, "Kitchen test pipeline"
    )


def record_states(hass: HomeAssistant, stack: AsyncExitStack) -> SatelliteStateLog:
    """Start recording the assist_satellite entities' states."""
    log = SatelliteStateLog()
    stack.callback(hass.bus.async_listen(EVENT_STATE_CHANGED, log.record))
    return log


async def add_voicestack(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    sat: RunningSatellite,
    *,
    options: dict[str, Any] | None = None,
    enable: dict[str, str] | None = None,
) -> MockConfigEntry:
    """A VoiceStack entry for ``sat`` (with ``options``), unloaded with ``stack``.

    ``enable`` maps entity ids to their description keys: entities disabled by
    default that the test reads, enabled in the entity registry before setup as
    a user would enable them.
    """
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="test-satellite",
        data={CONF_HOST: "127.0.0.1", CONF_PORT: sat.port},
        unique_id=f"test-{sat.port}",
        options=options or {},
    )
    entry.add_to_hass(hass)
    registry = er.async_get(hass)
    for entity_id, key in (enable or {}).items():
        platform, object_id = entity_id.split(".")
        registry.async_get_or_create(
            platform,
            DOMAIN,
            f"{entry.unique_id}-{key}",
            config_entry=entry,
            suggested_object_id=object_id,
            disabled_by=None,
        )
    assert await hass.config_entries.async_setup(entry.entry_id)

    async def unload() -> None:
        assert await hass.config_entries.async_unload(entry.entry_id)

    stack.push_async_callback(unload)
    return entry
