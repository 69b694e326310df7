"""The VoiceStack conversation agent, as the companion app reaches it.

The entry is added through the config flow's agent path, wrapping Home
Assistant's own agent; every request goes through HA's websocket API
(``conversation/process`` with our agent's entity id, the companion app's path)
or ``conversation.async_converse`` with a device id (what a pipeline passes for
a Voice PE). What is checked is what the person would read or hear (the
response's speech, whether the device listens on) and then the side effect
where Home Assistant keeps it: the light's state, the notes file, the lock's
unlock event. Every mode, typed and spoken to a stock satellite, is in
test_agent_modes.py; this file keeps what only text shows (whether the device
listens on) and the entry itself.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import Context, HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.voicestack.agent.config import CONF_WRAPPED_AGENT
from custom_components.voicestack.agent.runtime import TEXT_KEY, AgentRuntime
from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.core.router import Replies
from custom_components.voicestack.diagnostics import (
    async_get_config_entry_diagnostics,
)
from devstack.recording_satellite import RecordingSatellite, add_satellites
from devstack.waiting import wait_for
from tests.integration.assist import FRONT_DOOR, LIGHT, record_unlocks, set_up_home

REPLIES = Replies()


class Agent:
    """Our agent entry and a websocket client of Home Assistant's API."""

    def __init__(self, hass: HomeAssistant, entity_id: str, client: Any) -> None:
        """``client``: a connected websocket test client."""
        self.hass = hass
        self.entity_id = entity_id
        self.client = client
        self.conversation_id: str | None = None

    async def say(self, text: str) -> tuple[str, bool]:
        """One ``conversation/process`` turn: the speech, and whether it listens on."""
        await self.client.send_json_auto_id(
            {
                "type": "conversation/process",
                "text": text,
                "agent_id": self.entity_id,
                "conversation_id": self.conversation_id,
            }
        )
        msg = await self.client.receive_json()
        assert msg["success"], msg
        result = msg["result"]
        self.conversation_id = result["conversation_id"]
        speech = result["response"]["speech"].get("plain", {}).get("speech", "")
        return speech, result["continue_conversation"]


async def add_agent(hass: HomeAssistant, wrapped: str) -> dict[str, Any]:
    """The config flow's agent path, as a user takes it."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": "user"}
    )
    assert result["type"] is FlowResultType.MENU
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "agent"}
    )
    assert (result["type"], result["step_id"]) == (FlowResultType.FORM, "agent")
    return dict(
        await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_WRAPPED_AGENT: wrapped}
        )
    )


def agent_entity(hass: HomeAssistant, entry_id: str) -> str:
    """The entry's conversation entity."""
    entity_id = er.async_get(hass).async_get_entity_id(
        conversation.DOMAIN, DOMAIN, entry_id
    )
    assert entity_id is not None
    return entity_id


async def set_options(hass: HomeAssistant, **options: Any) -> AgentRuntime:
    """Change the agent entry's router options; the reloaded runtime."""
    entry = hass.config_entries.async_entries(DOMAIN)[0]
    hass.config_entries.async_update_entry(entry, options={**entry.options, **options})
    await hass.async_block_till_done()  # the options reload the entry
    assert entry.state is ConfigEntryState.LOADED
    runtime: AgentRuntime = entry.runtime_data
    return runtime


@pytest.fixture
async def agent(
    hass: HomeAssistant, config_dir: Path, hass_ws_client: WebSocketGenerator
) -> Agent:
    """The home with the front door, and our agent wrapping HA's own."""
    await set_up_home(hass, front_door=True)
    created = await add_agent(hass, conversation.HOME_ASSISTANT_AGENT)
    assert created["type"] is FlowResultType.CREATE_ENTRY
    entry = created["result"]
    assert entry.state is ConfigEntryState.LOADED
    return Agent(hass, agent_entity(hass, entry.entry_id), await hass_ws_client(hass))


async def test_dictation_writes_the_note(
    hass: HomeAssistant, agent: Agent, config_dir: Path
) -> None:
    started = await agent.say("start dictation")
    content = await agent.say("buy milk and eggs")
    stopped = await agent.say("end dictation")

    assert started == (REPLIES.dictation_started, True)
    assert content[1]  # the frame listens on for more
    assert stopped[1] is False
    notes = (config_dir / "voicestack" / "notes.txt").read_text()
    assert notes.splitlines()[-1].endswith("buy milk and eggs")
    assert hass.states.get(LIGHT).state == STATE_OFF  # nothing went to the agent


async def test_unlocking_asks_and_yes_unlocks(
    hass: HomeAssistant, agent: Agent
) -> None:
    unlocks = record_unlocks(hass)

    asked = await agent.say("unlock the front door")
    before = len(unlocks)
    done = await agent.say("yes")
    await hass.async_block_till_done()

    assert asked == ("Should I unlock the front door? Say yes or no.", True)
    assert before == 0
    assert done[1] is False
    assert len(unlocks) == 1
    assert hass.states.get(FRONT_DOOR) is not None


async def test_an_expired_question_is_said_before_the_next_answer(
    hass: HomeAssistant, agent: Agent
) -> None:
    runtime = await set_options(hass, confirm_timeout_s=0.2)
    unlocks = record_unlocks(hass)

    asked = await agent.say("unlock the front door")
    (device,) = runtime.devices.values()
    await wait_for(lambda: bool(device.pending), 5, "the question expired")
    late = await agent.say("yes")
    await hass.async_block_till_done()

    assert asked[1] is True
    # The yes came too late: it is no answer, and the base frame sends it on.
    assert late[0].startswith(f"{REPLIES.confirm_expired} ")
    assert unlocks == []
    assert device.modes.router.mode == "wake_word"


async def test_each_device_has_its_own_modes(hass: HomeAssistant, agent: Agent) -> None:
    async def converse(text: str, device_id: str | None) -> str:
        result = await conversation.async_converse(
            hass,
            text,
            None,
            Context(),
            agent_id=agent.entity_id,
            device_id=device_id,
        )
        return str(result.response.speech["plain"]["speech"])

    await converse("start dictation", "kitchen-voice-pe")
    other = await converse("turn on the kitchen light", "hall-voice-pe")

    entry = hass.config_entries.async_entries(DOMAIN)[0]
    runtime: AgentRuntime = entry.runtime_data
    modes = {key: found.modes.router.mode for key, found in runtime.devices.items()}
    assert other == "Turned on the light"
    assert modes == {"kitchen-voice-pe": "dictation", "hall-voice-pe": "wake_word"}
    assert hass.states.get(LIGHT).state == STATE_ON
    assert TEXT_KEY not in modes


async def test_our_own_agent_cannot_be_wrapped(
    hass: HomeAssistant, agent: Agent
) -> None:
    refused = await add_agent(hass, agent.entity_id)

    assert refused["type"] is FlowResultType.FORM
    assert refused["errors"] == {CONF_WRAPPED_AGENT: "own_agent"}


async def test_the_options_change_the_wrapped_agent_but_not_to_ours(
    hass: HomeAssistant, agent: Agent
) -> None:
    entry = hass.config_entries.async_entries(DOMAIN)[0]
    other = await add_agent(hass, conversation.HOME_ASSISTANT_AGENT)
    other_entity = agent_entity(hass, other["result"].entry_id)

    async def choose(wrapped: str) -> dict[str, Any]:
        menu = await hass.config_entries.options.async_init(entry.entry_id)
        assert menu["type"] is FlowResultType.MENU
        assert menu["menu_options"] == [
            "agent",
            "modes",
            "vocabulary",
            "shortcuts",
            "conversations",
        ]
        form = await hass.config_entries.options.async_configure(
            menu["flow_id"], {"next_step_id": "agent"}
        )
        return dict(
            await hass.config_entries.options.async_configure(
                form["flow_id"], {CONF_WRAPPED_AGENT: wrapped}
            )
        )

    refused = await choose(other_entity)
    kept = await choose(conversation.HOME_ASSISTANT_AGENT)
    await hass.async_block_till_done()

    assert refused["errors"] == {CONF_WRAPPED_AGENT: "own_agent"}
    assert kept["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options[CONF_WRAPPED_AGENT] == conversation.HOME_ASSISTANT_AGENT
    assert entry.state is ConfigEntryState.LOADED
    assert await agent.say("turn on the kitchen light") == (
        "Turned on the light",
        False,
    )


async def test_unload_closes_the_routers_and_diagnostics_redact(
    hass: HomeAssistant, agent: Agent
) -> None:
    await agent.say("start dictation")
    await agent.say("my pin is 4711")
    entry = hass.config_entries.async_entries(DOMAIN)[0]

    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    unloaded = await hass.config_entries.async_unload(entry.entry_id)

    assert "4711" not in str(diagnostics)
    (device,) = diagnostics["devices"]
    assert diagnostics["wrapped_agent"] == conversation.HOME_ASSISTANT_AGENT
    assert (device["device"], device["mode"]) == ("**REDACTED**", "dictation")
    assert device["stack"] == ["base", "dictation"]
    assert unloaded
    assert entry.state is ConfigEntryState.NOT_LOADED
    assert hass.states.get(agent.entity_id).state == "unavailable"


async def test_announcing_works_while_an_agent_entry_is_loaded(
    hass: HomeAssistant, agent: Agent, stack: AsyncExitStack
) -> None:
    """An agent entry has no satellite: the announcer passes it by, and queues."""
    assert await async_setup_component(hass, "assist_satellite", {})
    device = RecordingSatellite("Hall")
    platform = await add_satellites(hass, [device])
    stack.push_async_callback(platform.async_reset)
    response = await hass.services.async_call(
        DOMAIN,
        "announce",
        {"message": "The mail is here.", "entity_id": device.entity_id},
        blocking=True,
        return_response=True,
    )
    assert response is not None
    (receipt,) = response["announcements"]
    assert (receipt["satellite"], receipt["status"]) == (device.entity_id, "queued")
