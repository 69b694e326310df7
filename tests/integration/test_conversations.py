"""Follow-up conversations that end well: bounded turns, stop words, memory.

Real Home Assistant, Piper, whisper and the satellite subprocess with a live mic;
the agent is scripted (it stands in for an LLM agent, none can run here) and
records what it was asked, with which conversation id. The follow-up loop's
own rules run on the newest Home Assistant only (``newest_ha``); the memory
policy, which rests on Home Assistant's conversation ids, on both.
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

from custom_components.voicestack.const import (
    EVENT_SESSION_ENDED,
    EVENT_TURN,
)
from custom_components.voicestack.logbook import describe_session_end, describe_turn
from devstack import servers, speech
from devstack.transcript_gate import TranscriptGate
from devstack.waiting import wait_for
from tests.integration.agents import ScriptedAgent, use_agent
from tests.integration.assist import SWITCH, set_up_assist, words
from tests.integration.dialog import Dialog, open_dialog

pytestmark = pytest.mark.e2e

FOLLOW_UP = "assist_satellite.test_satellite"


def answer_plainly(_user_input: conversation.ConversationInput) -> tuple[str, bool]:
    """An answer that asks nothing back."""
    return "Okay.", False


def ask_back(_user_input: conversation.ConversationInput) -> tuple[str, bool]:
    """Every answer asks something back (an LLM that keeps talking)."""
    return "Anything else?", True


class ActingAgent(ScriptedAgent):
    """Switches what the request names and says so.

    "Kitchen" toggles the kitchen power (a real entity, in the request's
    context, as an LLM agent's tools do). With ``report`` its intent response
    also lists what it acted on, as the default agent's does; without, only the
    state change tells. It answers in a conversation of its own numbering when
    none is given, so a test can tell which conversation each turn continued.
    """

    def __init__(self, hass: HomeAssistant, *, report: bool = True) -> None:
        """Acting in ``hass``."""
        super().__init__(answer_plainly)
        self.hass = hass
        self.report = report

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """Record; "Done." with the named things as the targets acted on."""
        self.inputs.append(user_input)
        response = intent.IntentResponse(language=user_input.language)
        named = [
            name
            for name in ("hallway", "kitchen", "living room")
            if name in user_input.text.lower()
        ]
        if "kitchen" in named:
            await self.hass.services.async_call(
                "input_boolean",
                "toggle",
                {"entity_id": SWITCH},
                blocking=True,
                context=user_input.context,
            )
        response.async_set_results(
            [
                intent.IntentResponseTarget(
                    type=intent.IntentResponseTargetType.ENTITY, name=name, id=name
                )
                for name in named
                if self.report
            ]
        )
        response.async_set_speech("Done.")
        return conversation.ConversationResult(
            response=response,
            conversation_id=user_input.conversation_id or f"c{len(self.inputs)}",
        )


async def acting_agent(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    *,
    report: bool = True,
) -> ActingAgent:
    """An ``ActingAgent`` as the pipeline's agent until ``stack`` closes."""
    agent = ActingAgent(hass, report=report)
    await use_agent(hass, stack, pipeline, agent.reply, agent=agent)
    return agent


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


@pytest.mark.newest_ha  # the loop's own: the memory policy runs on both
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


@pytest.mark.newest_ha  # the loop's own: the memory policy runs on both
async def test_at_the_turn_limit_a_question_is_followed_by_the_closing(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    def offer_more(_user_input: conversation.ConversationInput) -> tuple[str, bool]:
        return "The kitchen is warm. Shall I check another room?", False

    await use_agent(hass, stack, pipeline, offer_more)
    dialog, turns, ended = await dialog_with(
        hass, stack, tmp_path, follow_up_mode="always", follow_up_max_turns=2
    )

    await dialog.wake_and_say("How warm is the kitchen?")
    await dialog.answer("And the bedroom?")

    first, last = await asyncio.to_thread(dialog.replies)
    heard = words(last)
    # By ear: the first answer's question is answered in its window; the last
    # one's is not, so the closing follows it, once, after the question.
    assert "wake" not in words(first), first
    after_the_question = heard[heard.index("room") + 1 :]
    assert after_the_question[:4] == ["say", "the", "wake", "word"], last
    assert [t.data["end_reason"] for t in turns] == [None, "max_turns"]
    assert turns[1].data["response"].endswith("Say the wake word to go on.")
    assert [e.data["reason"] for e in ended] == ["max_turns"]


@pytest.mark.newest_ha  # the loop's own: the memory policy runs on both
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
        # Shared: carried within the session, dropped when it ends. (Each turn
        # that starts one gets a fresh id, as in Home Assistant's pipeline: its
        # chat session's, in which the agent's answer is streamed.)
        ("shared", [0, 0, 1]),
        # Independent: every turn is a conversation of its own.
        ("independent", [0, 1, 2]),
    ],
)
async def test_the_memory_policy_decides_which_conversation_a_turn_continues(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    memory: str,
    expected: list[int],
) -> None:
    agent = await acting_agent(hass, stack, pipeline)
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

    ids = [i.conversation_id for i in agent.inputs]
    assert None not in ids
    # Each turn's conversation, numbered in the order they began.
    assert [list(dict.fromkeys(ids)).index(i) for i in ids] == expected


@pytest.mark.newest_ha  # the loop's own: the memory policy runs on both
async def test_fragments_after_an_action_make_one_request_and_one_answer(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    # Like an LLM agent: nothing in its answer says it acted; the state change does.
    agent = await acting_agent(hass, stack, pipeline, report=False)
    dialog, turns, _ended = await dialog_with(
        hass, stack, tmp_path, follow_up_mode="always"
    )

    await dialog.wake_and_say("Turn on the kitchen power.")
    first = await asyncio.to_thread(speech.speak, "Turn on the kitchen light.")
    second = await asyncio.to_thread(speech.speak, "And the living room lamp.")
    # (1 s first: the satellite has opened its window when the user speaks.)
    await dialog.mic.say(first + speech.silence(0.8) + second, lead_s=1.0)
    await wait_for(lambda: len(turns) >= 2, 60, "the fragments' turn")
    await wait_for(lambda: not dialog.hub.assist_in_progress, 30, "the answer")

    buffered = [
        u.data["text"] for u in dialog.utterances if u.data["outcome"] == "buffered"
    ]
    first_turn, second_turn = (t.data for t in turns)
    assert first_turn["buffering_next"]  # the kitchen power changed: buffer armed
    assert len(buffered) == 2, buffered
    assert second_turn["fragments"] == 2
    assert second_turn["turn"] == 2
    assert len(agent.texts) == 2, agent.texts  # one request for both fragments
    assert {"kitchen", "living"} <= set(words(agent.texts[1])), agent.texts
    assert second_turn["response"] == "Done."
    assert len(turns) == 2  # one answer, not two


@pytest.mark.newest_ha  # the loop's own: the memory policy runs on both
async def test_a_late_transcript_of_one_fragment_does_not_cut_the_next(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    """On a loaded CPU a fragment's text comes while the next one streams.

    Seen in CI: "And the living room lamp." became "and the living" and "living
    room lamp": the first fragment's transcript, sent on to the satellite, ended
    the request streaming then (the second fragment). The gate holds whisper's
    transcripts until the second fragment streams, so the race is certain.
    """
    gate = await stack.enter_async_context(TranscriptGate(whisper.host, whisper.port))
    pipeline = await set_up_assist(hass, stack, tmp_path, piper, gate)
    agent = await acting_agent(hass, stack, pipeline, report=False)
    dialog, turns, _ended = await dialog_with(
        hass, stack, tmp_path, follow_up_mode="always"
    )
    await dialog.wake_and_say("Turn on the kitchen power.")
    requests: list[str] = []
    stack.callback(
        dialog.hub.async_subscribe_events(
            lambda event: (
                requests.append(event.type) if event.type == "run-pipeline" else None
            )
        )
    )

    gate.close()
    first = await asyncio.to_thread(speech.speak, "Turn on the kitchen light.")
    second = await asyncio.to_thread(speech.speak, "And the living room lamp.")
    said = asyncio.create_task(
        dialog.mic.say(first + speech.silence(0.8) + second, lead_s=1.0)
    )
    await wait_for(
        lambda: len(requests) >= 2 and gate.held == 1,
        30,
        "the first fragment's text held while the second streams",
    )
    gate.open()
    await said
    await wait_for(lambda: len(turns) >= 2, 60, "the fragments' turn")
    await wait_for(lambda: not dialog.hub.assist_in_progress, 30, "the answer")

    buffered = [
        u.data["text"] for u in dialog.utterances if u.data["outcome"] == "buffered"
    ]
    assert len(buffered) == 2, buffered
    assert turns[1].data["fragments"] == 2
    assert len(agent.texts) == 2, agent.texts
    assert {"kitchen", "living", "room", "lamp"} <= set(words(agent.texts[1]))


@pytest.mark.newest_ha  # the loop's own: the memory policy runs on both
async def test_a_stop_word_after_fragments_drops_them_and_ends_the_session(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    agent = await acting_agent(hass, stack, pipeline)
    dialog, turns, ended = await dialog_with(
        hass, stack, tmp_path, follow_up_mode="always"
    )

    await dialog.wake_and_say("Turn off the hallway light.")
    fragment = await asyncio.to_thread(speech.speak, "Turn on the kitchen light.")
    stop = await asyncio.to_thread(speech.speak, "That's all, thanks.")
    await dialog.mic.say(fragment + speech.silence(0.8) + stop, lead_s=1.0)
    await wait_for(lambda: ended, 60, "the session's end")

    sensor = hass.states.get("sensor.test_satellite_follow_up")
    assert [e.data["reason"] for e in ended] == ["stop_word"]
    assert len(agent.texts) == 1  # neither the fragment nor "stop" reached it
    assert turns[-1].data["end_reason"] == "stop_word"
    assert sensor.state == "idle"
    assert sensor.attributes["fragments_dropped"] == 1
    assert not sensor.attributes["buffering"]


@pytest.mark.newest_ha  # the loop's own: the memory policy runs on both
async def test_an_emergency_fragment_sends_the_buffer_at_once(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    agent = await acting_agent(hass, stack, pipeline)
    # The longest pause: without the bypass the fragments would wait 5 s.
    dialog, turns, _ended = await dialog_with(
        hass,
        stack,
        tmp_path,
        follow_up_mode="always",
        follow_up_quiet_s=5.0,
        follow_up_max_s=15.0,
    )

    await dialog.wake_and_say("Turn off the hallway light.")
    fragment = await asyncio.to_thread(speech.speak, "Turn on the kitchen light.")
    emergency = await asyncio.to_thread(speech.speak, "Help, call the fire brigade.")
    await dialog.mic.say(fragment + speech.silence(0.8) + emergency, lead_s=1.0)
    await wait_for(lambda: len(turns) >= 2, 60, "the fragments' turn")

    buffered = [u for u in dialog.utterances if u.data["outcome"] == "buffered"]
    routed = [u for u in dialog.utterances if u.data["outcome"] == "routed"]
    assert len(buffered) == 2, [u.data["text"] for u in dialog.utterances]
    assert turns[1].data["fragments"] == 2
    assert "help" in words(agent.texts[1]), agent.texts
    # Sent with the emergency, not after the 5 s pause the buffer would wait.
    sent_after = (routed[-1].time_fired - buffered[-1].time_fired).total_seconds()
    assert sent_after < 5.0
