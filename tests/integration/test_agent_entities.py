"""An agent device's mode select and sensors, as a Home Assistant user sees them.

Requests reach the VoiceStack agent as the companion app's (websocket
``conversation/process``, no device: the ``text`` key) or as a pipeline's for a
Voice PE (``conversation.async_converse`` with its device id; the websocket
command takes no device id in 2026.3). What is checked: where the entities show
(the Voice PE's own device page, the agent's device for text), that the select
changes what the device's next request does (dictated, not sent to the agent:
the light keeps its state), their categories and defaults, and that they go
unavailable when the router closes (to make room, or on unload).
"""

from __future__ import annotations

from pathlib import Path

from homeassistant.components import conversation
from homeassistant.const import STATE_OFF, STATE_ON, STATE_UNAVAILABLE, EntityCategory
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import device_registry as dr, entity_registry as er
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.voicestack.agent import runtime as agent_runtime
from custom_components.voicestack.agent.runtime import TEXT_KEY
from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.core.router import Replies
from tests.integration.assist import LIGHT, set_up_home
from tests.integration.test_agent import Agent, add_agent, agent_entity

REPLIES = Replies()
VOICE_PE_MAC = "20:f8:3b:00:11:22"


@pytest.fixture
async def agent(
    hass: HomeAssistant, config_dir: Path, hass_ws_client: WebSocketGenerator
) -> Agent:
    """The home with the kitchen light, and our agent wrapping HA's own."""
    await set_up_home(hass)
    created = await add_agent(hass, conversation.HOME_ASSISTANT_AGENT)
    assert created["type"] is FlowResultType.CREATE_ENTRY
    return Agent(
        hass,
        agent_entity(hass, created["result"].entry_id),
        await hass_ws_client(hass),
    )


@pytest.fixture
def voice_pe(hass: HomeAssistant) -> dr.DeviceEntry:
    """A Voice PE as ESPHome registers it (its own config entry)."""
    esphome = MockConfigEntry(domain="esphome", title="Kitchen Voice PE")
    esphome.add_to_hass(hass)
    return dr.async_get(hass).async_get_or_create(
        config_entry_id=esphome.entry_id,
        identifiers={("esphome", "kitchen-voice-pe")},
        connections={(dr.CONNECTION_NETWORK_MAC, VOICE_PE_MAC)},
        name="Kitchen Voice PE",
        manufacturer="Nabu Casa",
    )


def entry_id(hass: HomeAssistant) -> str:
    """The agent entry's id."""
    return hass.config_entries.async_entries(DOMAIN)[0].entry_id


def entities_of(hass: HomeAssistant, key: str) -> dict[str, er.RegistryEntry]:
    """The agent entry's entities for ``key``, by description key."""
    prefix = f"{entry_id(hass)}-{key}-"
    return {
        e.unique_id.removeprefix(prefix): e
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry_id(hass))
        if e.unique_id.startswith(prefix)
    }


async def converse(hass: HomeAssistant, agent: Agent, text: str, device_id: str) -> str:
    """A pipeline's request for ``device_id`` (what a Voice PE's pipeline passes)."""
    result = await conversation.async_converse(
        hass, text, None, Context(), agent_id=agent.entity_id, device_id=device_id
    )
    return str(result.response.speech["plain"]["speech"])


async def select(hass: HomeAssistant, entity_id: str, option: str) -> None:
    """The select's option chosen, as a dashboard does."""
    await hass.services.async_call(
        "select",
        "select_option",
        {"entity_id": entity_id, "option": option},
        blocking=True,
    )


async def test_selecting_dictation_on_the_text_clients_select_dictates(
    hass: HomeAssistant, agent: Agent, config_dir: Path
) -> None:
    """The companion app's path: the select opens dictation, the next text is a note."""
    assert await agent.say("turn on the kitchen light") == (
        "Turned on the light",
        False,
    )
    mode = entities_of(hass, TEXT_KEY)["mode"]
    conversation_entity = er.async_get(hass).async_get(agent.entity_id)
    assert conversation_entity is not None
    assert mode.device_id == conversation_entity.device_id  # the agent's own device
    assert hass.states.get(mode.entity_id).state == "wake_word"

    await select(hass, mode.entity_id, "dictation")
    dictated = await agent.say("turn off the kitchen light")
    gathered = hass.states.get(entities_of(hass, TEXT_KEY)["gathered_text"].entity_id)
    selected = hass.states.get(mode.entity_id)
    stopped = await agent.say("end dictation")

    assert dictated[1] is True  # dictation listens on
    assert hass.states.get(LIGHT).state == STATE_ON  # the words were not a command
    notes = (config_dir / "voicestack" / "notes.txt").read_text()
    assert notes.splitlines()[-1].endswith("turn off the kitchen light")
    assert selected.state == "dictation"
    assert selected.attributes["stack"] == ["base", "dictation"]
    assert int(gathered.state) == len("turn off the kitchen light")
    assert gathered.attributes["mode"] == "dictation"
    assert stopped[1] is False
    assert hass.states.get(mode.entity_id).state == "wake_word"


async def test_a_voice_pe_shows_its_modes_on_its_own_device_page(
    hass: HomeAssistant, agent: Agent, voice_pe: dr.DeviceEntry
) -> None:
    assert await converse(hass, agent, "turn on the kitchen light", voice_pe.id) == (
        "Turned on the light"
    )
    found = entities_of(hass, voice_pe.id)
    mode = found["mode"]

    await select(hass, mode.entity_id, "dictation")
    dictated = await converse(hass, agent, "turn off the kitchen light", voice_pe.id)
    mode_state = hass.states.get(mode.entity_id)

    assert sorted(found) == ["gathered_text", "last_request", "mode", "waiting_replies"]
    assert {e.device_id for e in found.values()} == {voice_pe.id}
    assert mode.entity_id == "select.kitchen_voice_pe_voice_mode"
    # The Voice PE stays ESPHome's device: the entities show on it, no more.
    ours = dr.async_entries_for_config_entry(dr.async_get(hass), entry_id(hass))
    assert [d.name for d in ours] == ["VoiceStack conversation agent"]
    assert mode_state.state == "dictation"
    assert mode_state.attributes["options"] == [
        "wake_word",
        "query",
        "dictation",
        "inventory",
        "confirm",
    ]
    assert dictated == ""  # dictation says nothing while it takes notes
    assert hass.states.get(LIGHT).state == STATE_ON
    for diagnostic in ("last_request", "waiting_replies"):
        assert found[diagnostic].entity_category is EntityCategory.DIAGNOSTIC
        assert found[diagnostic].disabled_by is er.RegistryEntryDisabler.INTEGRATION
    assert found["gathered_text"].disabled_by is None
    assert entities_of(hass, TEXT_KEY) == {}  # the text clients never asked


async def test_a_satellite_named_without_its_device_shows_them_on_its_device(
    hass: HomeAssistant, agent: Agent, voice_pe: dr.DeviceEntry
) -> None:
    """A caller that passes only the satellite entity (``satellite_id``)."""
    satellite = er.async_get(hass).async_get_or_create(
        "assist_satellite", "esphome", "kitchen-voice-pe", device_id=voice_pe.id
    )
    result = await conversation.async_converse(
        hass,
        "start dictation",
        None,
        Context(),
        agent_id=agent.entity_id,
        satellite_id=satellite.entity_id,
    )

    assert result.response.speech["plain"]["speech"] == REPLIES.dictation_started
    mode = entities_of(hass, satellite.entity_id)["mode"]
    assert mode.device_id == voice_pe.id
    assert hass.states.get(mode.entity_id).state == "dictation"


async def test_the_select_refuses_confirm(hass: HomeAssistant, agent: Agent) -> None:
    await agent.say("turn on the kitchen light")
    mode = entities_of(hass, TEXT_KEY)["mode"]

    with pytest.raises(ServiceValidationError) as refused:
        await select(hass, mode.entity_id, "confirm")

    assert refused.value.translation_key == "confirm_not_selectable"
    assert hass.states.get(mode.entity_id).state == "wake_word"


async def test_a_device_id_no_device_has_gets_modes_but_no_entities(
    hass: HomeAssistant, agent: Agent
) -> None:
    started = await converse(hass, agent, "start dictation", "no-such-device")

    assert started == REPLIES.dictation_started
    assert entities_of(hass, "no-such-device") == {}


async def test_a_router_closed_to_make_room_leaves_its_entities_unavailable(
    hass: HomeAssistant,
    agent: Agent,
    voice_pe: dr.DeviceEntry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(agent_runtime, "MAX_DEVICES", 1)
    await agent.say("start dictation")
    text_mode = entities_of(hass, TEXT_KEY)["mode"].entity_id
    dictating = hass.states.get(text_mode).state

    await converse(hass, agent, "turn on the kitchen light", voice_pe.id)
    closed = hass.states.get(text_mode).state
    back = await agent.say("turn off the kitchen light")

    assert dictating == "dictation"
    assert closed == STATE_UNAVAILABLE
    assert back == ("Turned off the light", False)  # a fresh router: base frame
    assert hass.states.get(text_mode).state == "wake_word"
    assert hass.states.get(LIGHT).state == STATE_OFF


async def test_unload_leaves_the_entities_unavailable(
    hass: HomeAssistant, agent: Agent, voice_pe: dr.DeviceEntry
) -> None:
    await agent.say("start dictation")
    await converse(hass, agent, "start dictation", voice_pe.id)
    ids = [
        e.entity_id
        for key in (TEXT_KEY, voice_pe.id)
        for e in entities_of(hass, key).values()
        if e.disabled_by is None
    ]
    runtime = hass.config_entries.async_entries(DOMAIN)[0].runtime_data

    assert await hass.config_entries.async_unload(entry_id(hass))
    await hass.async_block_till_done()

    assert len(ids) == 4  # select and gathered text, per device
    assert {hass.states.get(i).state for i in ids} == {STATE_UNAVAILABLE}
    assert runtime.devices == {}


async def test_after_a_reload_the_select_works_before_the_device_asks(
    hass: HomeAssistant, agent: Agent, config_dir: Path
) -> None:
    await agent.say("start dictation")
    mode = entities_of(hass, TEXT_KEY)["mode"].entity_id

    assert await hass.config_entries.async_reload(entry_id(hass))
    await hass.async_block_till_done()
    reloaded = hass.states.get(mode).state
    await select(hass, mode, "dictation")
    dictated = await agent.say("turn on the kitchen light")
    await agent.say("end dictation")

    assert reloaded == "wake_word"  # the old router's frames closed with it
    assert dictated[1] is True
    assert hass.states.get(LIGHT).state == STATE_OFF
    notes = (config_dir / "voicestack" / "notes.txt").read_text()
    assert notes.splitlines()[-1].endswith("turn on the kitchen light")


async def test_a_removed_device_takes_its_entities_along(
    hass: HomeAssistant, agent: Agent, voice_pe: dr.DeviceEntry
) -> None:
    await converse(hass, agent, "start dictation", voice_pe.id)
    ids = [e.entity_id for e in entities_of(hass, voice_pe.id).values()]

    dr.async_get(hass).async_remove_device(voice_pe.id)
    await hass.async_block_till_done()
    await converse(hass, agent, "turn off the kitchen light", voice_pe.id)
    runtime = hass.config_entries.async_entries(DOMAIN)[0].runtime_data

    assert len(ids) == 4
    assert entities_of(hass, voice_pe.id) == {}
    assert [hass.states.get(i) for i in ids] == [None] * 4
    # Its modes go on without entities: the words were dictated.
    assert runtime.get(voice_pe.id).modes.router.state().gathered_chars > 0
