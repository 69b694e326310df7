"""Speculative speech-to-text with real parts: whisper starts at a pause, never on half a command.

Real satellite subprocess hearing a Piper WAV in real time, real Home Assistant,
real whisper and Piper servers. A command that ends is answered from the
transcript speculation started 0.3 s into the quiet (the satellite ends the
request only after 0.7 s); a command with a 0.5 s pause inside is transcribed
whole: the speculation on its first half is dropped when the speaker goes on.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
import logging
from pathlib import Path

from homeassistant.const import STATE_ON
from homeassistant.core import Event, HomeAssistant
import pytest

from custom_components.voicestack.const import EVENT_UTTERANCE
from custom_components.voicestack.request.speculation import SpeculationCounts
from devstack import servers, speech
from devstack.satellite import satellite
from devstack.spoken_request import LEAD_IN_S, WAKE_PAUSE_S, spoken_request
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import (
    LIGHT,
    add_voicestack,
    record_states,
    set_up_assist,
    words,
)

pytestmark = pytest.mark.e2e

COMMAND = "Turn on the kitchen lights."
RUN_TIMEOUT_S = 30.0


async def run_request(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    pcm: bytes,
) -> tuple[list[Event], SpeculationCounts]:
    """The satellite hears ``pcm`` once; what was heard, and the speculations.

    The answer must come out of the satellite's speaker whole: a request answered
    from a speculative transcript cancels the pipeline's own run, which must not
    take the reply with it.
    """
    mic = speech.write_wav(tmp_path / "mic.wav", pcm)
    utterances: list[Event] = []
    hass.bus.async_listen(EVENT_UTTERANCE, utterances.append)
    async with AsyncExitStack() as stack:
        await set_up_assist(hass, stack, tmp_path, piper, whisper)
        log = record_states(hass, stack)
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        entry = await add_voicestack(hass, stack, sat)
        await wait_for(log.answered, RUN_TIMEOUT_S, "responding, then idle again")
        runtime = runtime_of(entry)
    playback = runtime.hub.speaker.last
    assert playback is not None
    assert playback.outcome == "played"
    answer = " ".join(sentence.text for sentence in playback.sentences)
    played = speech.read_wav_pcm(tmp_path / "played.1.wav")
    assert words(speech.transcribe(played)) == words(answer)
    return utterances, runtime.hub.stt_speculations


async def test_a_command_that_ends_is_answered_from_the_speculative_transcript(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="custom_components.voicestack.request.loop")
    utterances, counts = await run_request(
        hass, tmp_path, piper, whisper, spoken_request(COMMAND)
    )

    assert counts == SpeculationCounts(started=1, used=1, dropped=0)
    (utterance,) = utterances
    assert words(utterance.data["text"]) == words(COMMAND)
    assert f"speculative transcript {utterance.data['text']!r}" in caplog.text
    assert hass.states.get(LIGHT).state == STATE_ON


async def test_speech_after_a_pause_longer_than_the_speculation_is_heard_whole(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    # "Turn on … the kitchen lights.": 0.5 s of silence between, more than the
    # 0.3 s that start a speculation, less than the 0.7 s that end the request.
    wake = speech.pad(speech.speak("Hey Jarvis."), LEAD_IN_S, WAKE_PAUSE_S)
    halves = [speech.speak("Turn on"), speech.speak("the kitchen lights.")]
    pcm = wake + speech.with_pauses(halves, 0.5) + speech.silence(3.0)

    utterances, counts = await run_request(hass, tmp_path, piper, whisper, pcm)

    # The first half's speculation was dropped; the whole command's was used.
    assert counts == SpeculationCounts(started=2, used=1, dropped=1)
    (utterance,) = utterances
    assert words(utterance.data["text"]) == words(COMMAND)
    assert hass.states.get(LIGHT).state == STATE_ON
