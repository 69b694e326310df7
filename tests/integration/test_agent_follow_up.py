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
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import Context, Event, HomeAssistant, callback
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.voicestack.agent.follow_up import DeviceFollowUp
from custom_components.voicestack.const import EVENT_SESSION_ENDED
from custom_components.voicestack.core.conversation.follow_up import EndReason
from custom_components.voicestack.core.conversation.policy import FollowUpPolicy
from devstack.manual_clock import ManualClock
from tests.integration.agents import ChatAgent, add_chat_agent
from tests.integration.assist import set_up_home, words
from tests.integration.test_agent import Agent, add_agent, agent_entity, set_options

ASKS = "You have milk. Shall I add bread?"
CLOSING = "Say the wake word to go on."
SATELLITE = "assist_satellite.kitchen_voice_pe"


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


def request(text: str, conversation_id: str | None) -> conversation.ConversationInput:
    """What a Voice PE's pipeline passes for ``text``."""
    return conversation.ConversationInput(
        text=text,
        context=Context(),
        conversation_id=conversation_id,
        device_id="kitchen-voice-pe",
        satellite_id=SATELLITE,
        language="en",
        agent_id="conversation.voicestack",
    )


async def test_the_window_waits_while_the_satellite_says_the_answer(
    hass: HomeAssistant,
) -> None:
    """The window (8 s + 1 s) starts when the satellite stops responding."""
    clock = ManualClock()
    ends: list[EndReason] = []
    follow = DeviceFollowUp(
        hass, FollowUpPolicy(), lambda _d, _s, reason: ends.append(reason), clock
    )
    hass.states.async_set(SATELLITE, AssistSatelliteState.PROCESSING)
    follow.begin(request("what is on my shopping list", "c1"))
    window = follow.answered("c1", agent_asked_back=True)
    hass.states.async_set(SATELLITE, AssistSatelliteState.RESPONDING)
    await hass.async_block_till_done()
    clock.advance(20)  # a long answer
    still_saying = follow.loop.status.open
    hass.states.async_set(SATELLITE, AssistSatelliteState.IDLE)
    await hass.async_block_till_done()
    clock.advance(8.9)
    in_window = follow.loop.status.open
    clock.advance(0.2)

    assert window == 8.0
    assert still_saying
    assert in_window
    assert ends == [EndReason.SILENCE]


async def test_a_request_in_another_conversation_starts_a_new_session(
    hass: HomeAssistant,
) -> None:
    """A new chat is no follow-up, however soon; the next turn of the same one is."""
    follow = DeviceFollowUp(hass, FollowUpPolicy(), lambda *_: None, ManualClock())
    follow.begin(request("what is on my shopping list", "c1"))
    follow.answered("c1", agent_asked_back=True)

    other = follow.begin(request("and the weather", "c2")).turn
    follow.answered("c2", agent_asked_back=True)
    same = follow.begin(request("yes please", "c2")).turn

    assert (other, same) == (1, 2)
