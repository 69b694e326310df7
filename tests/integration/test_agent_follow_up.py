"""Follow-up turns through the VoiceStack agent: the satellite's limit, stop words, memory.

The companion app's path (HA's websocket ``conversation/process``, the
conversation id carried from answer to request as the app does). The wrapped
agent is a scripted one that asks back, as an LLM agent does (Home Assistant's
own never asks); it is the only fake. What is checked is what the person reads
(the answer, whether the app listens on), what reached the wrapped agent, and
the session's end event.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.voicestack.const import EVENT_SESSION_ENDED
from tests.integration.agents import ChatAgent, add_chat_agent
from tests.integration.assist import set_up_home, words
from tests.integration.test_agent import Agent, add_agent, agent_entity, set_options

ASKS = "You have milk. Shall I add bread?"
CLOSING = "Say the wake word to go on."


def always_asks(user_input: conversation.ConversationInput) -> tuple[str, bool]:
    """Every answer asks something back."""
    return ASKS, True


@pytest.fixture
async def wrapped(hass: HomeAssistant) -> ChatAgent:
    """The agent VoiceStack's wraps."""
    await set_up_home(hass)
    return add_chat_agent(hass, always_asks)


@pytest.fixture
async def app(
    hass: HomeAssistant, wrapped: ChatAgent, hass_ws_client: WebSocketGenerator
) -> Agent:
    """The companion app talking to VoiceStack's agent, which wraps ``wrapped``."""
    created = await add_agent(hass, wrapped.agent_id)
    assert created["type"] is FlowResultType.CREATE_ENTRY
    entity_id = agent_entity(hass, created["result"].entry_id)
    return Agent(hass, entity_id, await hass_ws_client(hass))


def record_session_ends(hass: HomeAssistant) -> list[dict[str, Any]]:
    """``voicestack_session_ended`` data, from now on."""
    ends: list[dict[str, Any]] = []

    @callback
    def record(event: Event) -> None:
        ends.append(dict(event.data))

    hass.bus.async_listen(EVENT_SESSION_ENDED, record)
    return ends


async def test_the_turn_limit_ends_with_the_closing_and_stops_listening(
    hass: HomeAssistant, app: Agent, wrapped: ChatAgent
) -> None:
    await set_options(hass, follow_up_max_turns=2)
    ends = record_session_ends(hass)

    first = await app.say("what is on my shopping list")
    second = await app.say("tell me more")
    third = await app.say("what is on my shopping list")  # a new session

    assert first == (ASKS, True)
    assert second == (f"{ASKS} {CLOSING}", False)
    assert third == (ASKS, True)
    assert [(end["turns"], end["reason"]) for end in ends] == [(2, "max_turns")]
    # Shared memory: the session's turns in one conversation, the next session new.
    ids = [user_input.conversation_id for user_input in wrapped.inputs]
    assert ids == [None, wrapped.answered_in[0], None]


async def test_a_stop_word_ends_the_session_and_reaches_no_one(
    hass: HomeAssistant, app: Agent, wrapped: ChatAgent
) -> None:
    ends = record_session_ends(hass)

    asked = await app.say("what is on my shopping list")
    stopped = await app.say("That's all, thanks.")
    app.conversation_id = None  # a new chat: "stop" right away is a command
    command = await app.say("stop")

    assert asked == (ASKS, True)
    assert stopped == ("", False)
    assert [(end["turns"], end["reason"]) for end in ends] == [(2, "stop_word")]
    assert [words(text) for text in wrapped.texts] == [
        ["what", "is", "on", "my", "shopping", "list"],
        ["stop"],
    ]
    assert command == (ASKS, True)


async def test_independent_memory_gives_each_turn_its_own_conversation(
    hass: HomeAssistant, app: Agent, wrapped: ChatAgent
) -> None:
    await set_options(hass, follow_up_memory="independent")

    await app.say("what is on my shopping list")
    await app.say("and in the fridge")

    assert [user_input.conversation_id for user_input in wrapped.inputs] == [
        None,
        None,
    ]


async def test_off_answers_once_per_request(
    hass: HomeAssistant, app: Agent, wrapped: ChatAgent
) -> None:
    """*Off*: one question per wake word, even when the agent asks back."""
    await set_options(hass, follow_up_mode="off")
    ends = record_session_ends(hass)

    speech, listens = await app.say("what is on my shopping list")

    assert (speech, listens) == (ASKS, False)
    assert [end["reason"] for end in ends] == ["answered"]


async def test_the_options_offer_the_conversations_form(
    hass: HomeAssistant, app: Agent
) -> None:
    entry = hass.config_entries.async_entries("voicestack")[0]
    menu = await hass.config_entries.options.async_init(entry.entry_id)
    form = await hass.config_entries.options.async_configure(
        menu["flow_id"], {"next_step_id": "conversations"}
    )

    assert "conversations" in menu["menu_options"]
    assert (form["type"], form["step_id"]) == (FlowResultType.FORM, "conversations")
