"""End to end: VoiceStack drives the real satellite through a spoken command.

Real satellite subprocess hearing a Piper WAV, real Home Assistant, real whisper
and Piper servers: "Hey Jarvis. Turn on the kitchen lights." turns the light on,
and the response that reaches the satellite's file sink transcribes to the
agent's answer.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import Event, HomeAssistant
import pytest
from wyoming.asr import Transcript
from wyoming.audio import AudioStop
from wyoming.event import Event as WyomingEvent
from wyoming.info import AsrModel, AsrProgram, Attribution, Describe, Info
from wyoming.server import AsyncEventHandler, AsyncServer

from custom_components.voicestack.const import EVENT_UTTERANCE
from tests import servers, speech
from tests.integration.assist import (
    IDLE,
    LIGHT,
    LISTENING,
    PROCESSING,
    RESPONDING,
    add_voicestack,
    record_states,
    set_up_assist,
    wait_for,
    words,
)
from tests.satellite.harness import satellite

pytestmark = pytest.mark.e2e

COMMAND = "Turn on the kitchen lights."
RUN_TIMEOUT_S = 30.0
SATELLITE = "assist_satellite.test_satellite"


def spoken_request() -> bytes:
    """Lead-in, the wake word, the pause a user leaves for the chime, the command."""
    return (
        speech.pad(speech.speak("Hey Jarvis."), 0.5, 0.7)
        + speech.speak(COMMAND)
        + speech.silence(3.0)
    )


async def test_a_spoken_command_switches_the_light_and_is_answered(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    mic = speech.write_wav(tmp_path / "mic.wav", spoken_request())
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
        states = log.names()
        playback = entry.runtime_data.speaker.last
        playing_s = log.last_entered(IDLE) - log.last_entered(RESPONDING)

    assert hass.states.get(LIGHT).state == STATE_ON
    assert states[-4:] == [LISTENING, PROCESSING, RESPONDING, IDLE]
    (utterance,) = utterances
    assert words(utterance.data["text"]) == words(COMMAND)
    assert utterance.data["wake_word"] == "hey_jarvis"
    # The base frame's catch-all sends a wake-word request to the agent.
    assert (utterance.data["frame"], utterance.data["rule"]) == ("base", "agent")
    assert utterance.data["sent_to_agent"] is True
    assert playback is not None
    assert playback.outcome == "played"
    answer = " ".join(s.text for s in playback.sentences)
    played = speech.read_wav_pcm(tmp_path / "played.1.wav")
    assert words(speech.transcribe(played)) == words(answer)
    assert playing_s >= speech.seconds(played) - 0.1


def wake_and_say(command: str, after_s: float = 3.0) -> bytes:
    """The wake word, the pause for the chime, ``command``, then silence."""
    return (
        speech.pad(speech.speak("Hey Jarvis."), 0.5, 0.7)
        + speech.speak(command)
        + speech.silence(after_s)
    )


def light_states(hass: HomeAssistant, stack: AsyncExitStack) -> list[str]:
    """Every state the kitchen light takes from now on."""
    seen: list[str] = []

    def record(event: Event) -> None:
        if event.data["entity_id"] == LIGHT and event.data["new_state"]:
            seen.append(event.data["new_state"].state)

    stack.callback(hass.bus.async_listen("state_changed", record))
    return seen


async def test_nothing_heard_is_reported_and_the_next_wake_word_works(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    silent_request = speech.pad(speech.speak("Hey Jarvis."), 0.5, 4.0)
    mic = speech.write_wav(tmp_path / "mic.wav", silent_request + wake_and_say(COMMAND))
    utterances: list[Event] = []
    hass.bus.async_listen(EVENT_UTTERANCE, utterances.append)

    async with AsyncExitStack() as stack:
        await set_up_assist(hass, stack, tmp_path, piper, whisper)
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic), "--max-request", "2.5")
        )
        await add_voicestack(hass, stack, sat)
        await wait_for(
            lambda: hass.states.get(LIGHT).state == STATE_ON,
            RUN_TIMEOUT_S,
            "the second request switches the light",
        )

    warnings = [
        r
        for r in caplog.records
        if r.name.startswith("custom_components.voicestack")
        and r.levelname == "WARNING"
        and "nothing heard after the wake word" in r.getMessage()
    ]
    assert len(warnings) == 1
    assert [words(u.data["text"]) for u in utterances] == [words(COMMAND)]
    assert "Peer reported an error" in sat.log_text()  # the satellite was told


async def test_tts_down_still_acts_and_the_next_request_works(
    hass: HomeAssistant,
    tmp_path: Path,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    mic = speech.write_wav(
        tmp_path / "mic.wav",
        wake_and_say(COMMAND) + wake_and_say("Turn off the kitchen lights."),
    )
    async with AsyncExitStack() as stack:
        piper = stack.enter_context(servers.piper_server())
        await set_up_assist(hass, stack, tmp_path, piper, whisper)
        seen = light_states(hass, stack)
        piper.process.terminate()  # the TTS engine goes down
        await asyncio.to_thread(piper.process.wait)
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        entry = await add_voicestack(hass, stack, sat)
        await wait_for(lambda: seen[-1:] == [STATE_OFF], RUN_TIMEOUT_S, "on, then off")
        await wait_for(
            lambda: hass.states.get(SATELLITE).state == IDLE, 5, "idle again"
        )
        assert not entry.runtime_data.speaker.busy

    failures = [
        r
        for r in caplog.records
        if r.name.startswith("custom_components.voicestack")
        and "request failed" in r.getMessage()
    ]
    assert seen == [STATE_ON, STATE_OFF]
    assert len(failures) == 2  # one line per failed response, no traceback spam
    assert not list(tmp_path.glob("played.*.wav"))


async def test_a_satellite_lost_mid_request_leaves_ha_ready_for_the_next(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    cut_off = speech.write_wav(tmp_path / "cut.wav", wake_and_say(COMMAND))
    full = speech.write_wav(tmp_path / "full.wav", wake_and_say(COMMAND))
    async with AsyncExitStack() as stack:
        await set_up_assist(hass, stack, tmp_path, piper, whisper)
        first = satellite(tmp_path, "--mic-file", str(cut_off))
        sat = await first.__aenter__()
        entry = await add_voicestack(hass, stack, sat)
        await wait_for(
            lambda: hass.states.get(SATELLITE).state == LISTENING, 15, "listening"
        )
        await first.__aexit__(None, None, None)  # gone in the middle of the request
        await wait_for(
            lambda: hass.states.get(SATELLITE).state == "unavailable", 10, "lost"
        )
        light_during = hass.states.get(LIGHT).state
        in_progress = entry.runtime_data.assist_in_progress

        await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(full), port=sat.port)
        )
        await wait_for(lambda: hass.states.get(LIGHT).state == STATE_ON, 45, "light on")

    assert light_during == STATE_OFF
    assert in_progress is False


async def test_announce_plays_through_the_speaker(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    mic = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    message = "The washing machine is done."
    async with AsyncExitStack() as stack:
        await set_up_assist(hass, stack, tmp_path, piper, whisper)
        log = record_states(hass, stack)
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        entry = await add_voicestack(hass, stack, sat)
        await wait_for(lambda: hass.states.get(SATELLITE).state == IDLE, 10, "up")
        announced: list[Event] = []
        hass.bus.async_listen("voicestack_announcement", announced.append)
        await hass.services.async_call(
            "assist_satellite",
            "announce",
            {"entity_id": SATELLITE, "message": message, "preannounce": False},
            blocking=True,
        )
        # Queued, not "busy": the call returns at once; the announcer says it.
        await wait_for(
            lambda: [e.data["status"] for e in announced] == ["started", "finished"],
            20,
            "the announcement was said",
        )
        playback = entry.runtime_data.speaker.last
        states = log.names()

    assert states[-2:] == [RESPONDING, IDLE]
    assert playback is not None
    assert playback.outcome == "played"
    assert announced[-1].data["text"] == message
    assert announced[-1].data["entity_id"] == SATELLITE
    played = speech.read_wav_pcm(tmp_path / "played.1.wav")
    assert words(speech.transcribe(played)) == words(message)


class _HearsNothing(AsyncEventHandler):
    """A speech-to-text service that finds no words: the edge whisper has too.

    Whisper answers "[BLANK_AUDIO]" or nothing for noise, but not on cue; this
    Wyoming ASR server gives ``ANSWERS`` in turn, whatever it is sent.
    """

    ANSWERS: ClassVar[list[str]] = []

    async def handle_event(self, event: WyomingEvent) -> bool:
        if Describe.is_type(event.type):
            attribution = Attribution(name="test", url="")
            model = AsrModel(
                name="nothing",
                attribution=attribution,
                installed=True,
                description="hears nothing",
                version="1",
                languages=["en"],
            )
            program = AsrProgram(
                name="nothing",
                attribution=attribution,
                installed=True,
                description="hears nothing",
                version="1",
                models=[model],
            )
            await self.write_event(Info(asr=[program]).event())
        elif AudioStop.is_type(event.type):
            await self.write_event(Transcript(text=self.ANSWERS.pop(0)).event())
        return True


async def test_an_empty_transcript_is_an_event_and_a_count(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server
) -> None:
    mic = speech.write_wav(
        tmp_path / "mic.wav", wake_and_say(COMMAND) + wake_and_say(COMMAND)
    )
    _HearsNothing.ANSWERS = ["[BLANK_AUDIO]", ""]
    utterances: list[Event] = []
    hass.bus.async_listen(EVENT_UTTERANCE, utterances.append)
    endpoint = SimpleNamespace(host="127.0.0.1", port=servers.free_port())
    stt = AsyncServer.from_uri(f"tcp://{endpoint.host}:{endpoint.port}")
    await stt.start(_HearsNothing)
    try:
        async with AsyncExitStack() as stack:
            await set_up_assist(hass, stack, tmp_path, piper, endpoint)
            seen = light_states(hass, stack)
            sat = await stack.enter_async_context(
                satellite(tmp_path, "--mic-file", str(mic))
            )
            await add_voicestack(hass, stack, sat)
            await wait_for(lambda: len(utterances) == 2, RUN_TIMEOUT_S, "two requests")
            await hass.async_block_till_done()
            count = hass.states.get("sensor.test_satellite_empty_transcripts")
    finally:
        await stt.stop()

    assert [(u.data["text"], u.data["outcome"]) for u in utterances] == [
        ("[BLANK_AUDIO]", "empty"),
        ("", "empty"),
    ]
    assert all(u.data["sent_to_agent"] is False for u in utterances)
    assert count is not None
    assert count.state == "2"
    assert seen == []  # nothing acted on
