"""Follow-up conversations that end well: bounded turns, stop words, memory.

Real Home Assistant, Piper, whisper and the satellite subprocess with a live mic;
the agent is scripted (it stands in for an LLM agent, none can run here) and
records what it was asked, with which conversation id.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.core import Event, HomeAssistant
from homeassistant.helpers import intent
import pytest

from custom_components.voicestack.const import EVENT_SESSION_ENDED, EVENT_TURN
from custom_components.voicestack.logbook import describe_session_end, describe_turn
from devstack import speech
from tests.integration.agents import ScriptedAgent, use_agent
from tests.integration.assist import words
from tests.integration.dialog import Dialog, open_dialog

pytestmark = pytest.mark.e2e

FOLLOW_UP = "assist_satellite.test_satellite"


def answer_plainly(_user_input: conversation.ConversationInput) -> tuple[str, bool]:
    """An answer that asks nothing back."""
    return "Okay.", False


def ask_back(_user_input: conversation.ConversationInput) -> tuple[str, bool]:
    """Every answer asks something back (an LLM that keeps talking)."""
    return "Anything else?", True


class NumberingAgent(ScriptedAgent):
    """Answers in a conversation of its own numbering when none is given."""

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """Record; continue the given conversation or open conversation N."""
        self.inputs.append(user_input)
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_speech("Okay.")
        return conversation.ConversationResult(
            response=response,
            conversation_id=user_input.conversation_id or f"c{len(self.inputs)}",
        )


async def dialog_with(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    **options: Any,
) -> tuple[Dialog, list[Event], list[Event]]:
    """A live satellite with ``options``; its turn and session events recorded."""
    turns: list[Event] = []
    ended: list[Event] = []
    stack.callback(hass.bus.async_listen(EVENT_TURN, turns.append))
    stack.callback(hass.bus.async_listen(EVENT_SESSION_ENDED, ended.append))
    dialog = await open_dialog(hass, stack, tmp_path, options=options)
    return dialog, turns, ended


async def test_three_turns_then_the_loop_closes_and_speech_without_a_wake_word_is_ignored(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    agent = await use_agent(hass, stack, pipeline, answer_plainly)
    dialog, turns, ended = await dialog_with(
        hass, stack, tmp_path, follow_up_mode="always", follow_up_max_turns=3
    )

    await dialog.wake_and_say("What time is it?")
    await dialog.answer("What day is it?")
    await dialog.answer("What is the weather like?")
    # The window is closed: this is heard by nobody.
    await dialog.mic.say(await asyncio.to_thread(speech.speak, "Turn on the radio."))
    await dialog.wake_and_say("What is the date today?")

    summary = [(t.data["turn"], t.data["text"], t.data["end_reason"]) for t in turns]
    first, second, third, fourth = (t.data for t in turns)
    assert [t["turn"] for t in (first, second, third, fourth)] == [1, 2, 3, 1], summary
    assert {first["session_id"], second["session_id"], third["session_id"]} == {
        first["session_id"]
    }
    assert fourth["session_id"] != first["session_id"]
    assert [t["listen_s"] for t in (first, second, third)] == [8.0, 8.0, None]
    assert (third["session_ended"], third["end_reason"]) == (True, "max_turns")
    assert ended[0].data["reason"] == "max_turns"
    assert ended[0].data["turns"] == 3
    assert len(agent.texts) == 4
    assert not any("radio" in words(text) for text in agent.texts), agent.texts
    assert describe_turn(third).startswith("turn 3 of 3: ")
    assert describe_turn(third).endswith("→ agent, waiting for the wake word")
    assert describe_session_end(ended[0].data) == (
        "conversation ended after 3 turns: the turn limit was reached"
    )
    assert (
        hass.states.get("sensor.test_satellite_follow_up").attributes["ended_max_turns"]
        == 1
    )


async def test_stop_ends_the_conversation_after_the_first_turn(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    agent = await use_agent(hass, stack, pipeline, ask_back)
    dialog, turns, ended = await dialog_with(hass, stack, tmp_path)

    await dialog.wake_and_say("What is on my shopping list?")
    follow_up = hass.states.get("sensor.test_satellite_follow_up").state
    await dialog.answer("Stop.")

    first, stop = (t.data for t in turns)
    assert follow_up == "turn 1 of 3"
    assert first["listen_s"] == 8.0
    assert stop["turn"] == 2
    assert (stop["frame"], stop["sent_to_agent"], stop["response"]) == (
        None,
        False,
        "",
    )
    assert (stop["session_ended"], stop["end_reason"]) == (True, "stop_word")
    assert [e.data["reason"] for e in ended] == ["stop_word"]
    assert len(agent.texts) == 1  # "stop" never reached the agent
    assert describe_turn(stop).startswith("turn 2 of 3: ")
    assert "ended the conversation" in describe_turn(stop)
    assert hass.states.get("sensor.test_satellite_follow_up").state == "idle"


@pytest.mark.parametrize(
    ("memory", "expected"),
    [
        # Shared: carried within the session, dropped when it ends.
        ("shared", [None, "c1", None]),
        # Independent: every turn is a conversation of its own.
        ("independent", [None, None, None]),
    ],
)
async def test_the_memory_policy_decides_which_conversation_a_turn_continues(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    memory: str,
    expected: list[str | None],
) -> None:
    agent = NumberingAgent(answer_plainly)
    await use_agent(hass, stack, pipeline, agent.reply, agent=agent)
    dialog, _turns, _ended = await dialog_with(
        hass,
        stack,
        tmp_path,
        follow_up_mode="always",
        follow_up_max_turns=2,
        follow_up_memory=memory,
    )

    await dialog.wake_and_say("What time is it?")
    await dialog.answer("And what day is it?")
    await dialog.wake_and_say("What is the weather like?")

    assert [i.conversation_id for i in agent.inputs] == expected
