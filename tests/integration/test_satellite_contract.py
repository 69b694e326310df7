"""Home Assistant's satellite contract, end to end on a real satellite.

Real satellite subprocess with a live mic, real Home Assistant, whisper and
Piper servers; a scripted agent only where an LLM would answer.

- "Set a timer for 3 seconds" starts a timer that rings on the satellite, and
  "cancel my timer" cancels one (HA's timer intents, VoiceStack's handler);
- ``ask_question``'s spoken answer goes back to the caller, never to the agent;
- ``start_conversation`` gives the agent its ``extra_system_prompt`` (cut to
  its limit), with the satellite's entity and device;
- ``announce`` plays the preannounce chime first and returns once played.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
import json
from pathlib import Path
from typing import Any

from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.components.assist_satellite.const import PREANNOUNCE_URL
from homeassistant.const import STATE_OFF
from homeassistant.core import Event, HomeAssistant, callback
import pytest

from custom_components.voicestack.announce.media_audio import async_decode_media
from custom_components.voicestack.request.speech_output import (
    read_stream,
    start_synthesis,
)
from custom_components.voicestack.text_limits import MAX_PROMPT_LENGTH
from devstack import speech
from devstack.waiting import wait_for
from tests.integration.agents import use_agent
from tests.integration.assist import (
    LIGHT,
    words,
)
from tests.integration.dialog import Dialog, open_dialog

pytestmark = pytest.mark.e2e

SATELLITE = "assist_satellite.test_satellite"
TIMEOUT_S = 30.0


def timer_events(hooks: Path) -> list[str]:
    """The timer events the satellite received, from its ``--event-command``."""
    if not hooks.exists():
        return []
    lines = [json.loads(line) for line in hooks.read_text().splitlines() if line]
    return [line["event"] for line in lines if line["state"] == "timer"]


async def test_a_spoken_timer_rings_on_the_satellite_and_can_be_cancelled(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    hooks = tmp_path / "hooks.jsonl"
    dialog = await open_dialog(
        hass,
        stack,
        tmp_path,
        satellite_args=("--event-command", f"tee -a {hooks}", "--timer-repeat", "1"),
    )

    await dialog.wake_and_say("Set a timer for 3 seconds.")
    await wait_for(
        lambda: timer_events(hooks)[-1:] == ["timer-finished"],
        TIMEOUT_S,
        "the timer finished",
    )
    await wait_for(
        lambda: any(tmp_path.glob("played-sounds.timer*.wav")), 10, "the ring"
    )
    await dialog.wake_and_say("Set a timer for 10 minutes.")
    await dialog.wake_and_say("Cancel my timer.")
    await wait_for(
        lambda: timer_events(hooks)[-1:] == ["timer-cancelled"],
        TIMEOUT_S,
        "the timer cancelled",
    )

    assert timer_events(hooks) == [
        "timer-started",
        "timer-finished",
        "timer-started",
        "timer-cancelled",
    ], dialog.heard()
    (ring,) = tmp_path.glob("played-sounds.timer*.wav")
    assert speech.seconds(speech.read_wav_pcm(ring)) > 0.2
    assert [u.data["sent_to_agent"] for u in dialog.utterances] == [True] * 3


async def _asked(dialog: Dialog) -> None:
    """Until the question was played, and the satellite listens without a wake word.

    Home Assistant's state turns to listening only once speech starts.
    """
    played = dialog.tmp_path / "played.1.wav"
    await wait_for(played.exists, TIMEOUT_S, "the question played")
    await wait_for(lambda: not dialog.hub.speaker.busy, TIMEOUT_S, "played")


async def test_the_answer_to_ask_question_goes_to_the_caller_only(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    agent = await use_agent(hass, stack, pipeline, lambda _: ("Agent answer.", False))
    dialog = await open_dialog(hass, stack, tmp_path)
    answers = [
        {"id": "light", "sentences": ["[turn on] the kitchen light"]},
        {"id": "fan", "sentences": ["[turn on] the fan"]},
    ]
    asked = hass.async_create_task(
        hass.services.async_call(
            "assist_satellite",
            "ask_question",
            {
                "entity_id": SATELLITE,
                "question": "Which one should I turn on?",
                "answers": answers,
                "preannounce": False,
            },
            blocking=True,
            return_response=True,
        )
    )
    await _asked(dialog)
    # Half a second after the question: a word begun within the satellite's echo
    # tail (0.3 s, docs/satellite.md "Playback") is taken for the reply's echo.
    await dialog.mic.say(
        await asyncio.to_thread(speech.speak, "Turn on the kitchen light."),
        lead_s=0.5,
    )
    response: Any = await asyncio.wait_for(asyncio.shield(asked), TIMEOUT_S)

    assert response["id"] == "light", response
    assert words(response["sentence"]) == words("turn on the kitchen light")
    assert agent.inputs == []  # not sent to the agent as a command as well
    assert dialog.utterances == []  # nor routed
    assert hass.states.get(LIGHT).state == STATE_OFF
    (question,) = dialog.replies()
    assert words(question) == words("Which one should I turn on?")


async def test_start_conversation_gives_the_agent_its_prompt_and_the_satellite(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = await use_agent(hass, stack, pipeline, lambda _: ("Very well.", False))
    dialog = await open_dialog(hass, stack, tmp_path)
    prompt = "You asked whether dinner should be served in the kitchen."
    # A prompt over the limit reaches the agent cut (a paid LLM reads it all).
    padding = " Be brief." * (MAX_PROMPT_LENGTH // 10)

    await hass.services.async_call(
        "assist_satellite",
        "start_conversation",
        {
            "entity_id": SATELLITE,
            "start_message": "Dinner is ready. Shall I serve it in the kitchen?",
            "extra_system_prompt": prompt + padding,
            "preannounce": False,
        },
        blocking=True,
    )
    await _asked(dialog)
    await dialog.answer("Yes, in the kitchen please.")
    await dialog.wake_and_say("What is the weather like today?")

    first, second = agent.inputs
    assert words(first.text) == words("yes in the kitchen please"), dialog.heard()
    assert first.extra_system_prompt == (prompt + padding)[:MAX_PROMPT_LENGTH]
    assert "longer than 10000 characters; it was cut" in caplog.text
    assert first.satellite_id == SATELLITE
    assert first.device_id == dialog.hub.device_id()
    assert first.device_id is not None
    # Given once, as Home Assistant's own satellites give it.
    assert second.extra_system_prompt is None
    assert second.satellite_id == SATELLITE


async def test_announce_preannounces_and_returns_once_played(
    hass: HomeAssistant, tmp_path: Path, stack: AsyncExitStack, pipeline: Pipeline
) -> None:
    dialog = await open_dialog(hass, stack, tmp_path)
    # Two messages: the same one twice within 10 s would be dropped as a repeat.
    messages = {True: "The washing machine is done.", False: "The dryer is done."}
    announced: list[Event] = []

    @callback
    def record(event: Event) -> None:
        """Seen as the event fires, as the announce call itself sees it."""
        announced.append(event)

    stack.callback(hass.bus.async_listen("voicestack_announcement", record))

    for preannounce, message in messages.items():
        await hass.services.async_call(
            "assist_satellite",
            "announce",
            {"entity_id": SATELLITE, "message": message, "preannounce": preannounce},
            blocking=True,
        )
        # Returned once played: the Speaker is done, and the announcer said so.
        assert dialog.hub.speaker.last is not None
        assert dialog.hub.speaker.last.outcome == "played"
        assert [e.data["status"] for e in announced][-1] == "finished"

    chime = await async_decode_media(hass, PREANNOUNCE_URL)
    spoken = {
        preannounce: await read_stream(start_synthesis(hass, pipeline, message))
        for preannounce, message in messages.items()
    }
    # Each part is a stream of its own: the chime, then each message.
    played = [speech.read_wav_pcm(tmp_path / f"played.{n}.wav") for n in range(1, 4)]
    assert not (tmp_path / "played.4.wav").exists()
    expected = [chime.seconds, spoken[True].seconds, spoken[False].seconds]
    assert [speech.seconds(pcm) for pcm in played] == pytest.approx(expected, abs=0.05)
    assert words(speech.transcribe(played[2])) == words(messages[False])
