"""End to end: VoiceStack drives the real satellite through a spoken command.

Real satellite subprocess hearing a Piper WAV, real Home Assistant, real whisper
and Piper servers: "Hey Jarvis. Turn on the kitchen lights." turns the light on,
and the response that reaches the satellite's file sink transcribes to the
agent's answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import ClassVar

from homeassistant.components.assist_pipeline import Pipeline, async_update_pipeline
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import Event, HomeAssistant
import pytest
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStop
from wyoming.event import Event as WyomingEvent
from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    Describe,
    Info,
    WakeModel,
    WakeProgram,
)
from wyoming.pipeline import PipelineStage as WyomingStage
from wyoming.server import AsyncEventHandler, AsyncServer
from wyoming.wake import Detection

from custom_components.voicestack.const import EVENT_UTTERANCE
from custom_components.voicestack.core.request_audio import (
    BYTES_PER_SECOND,
    MAX_QUEUED_AUDIO_BYTES,
    MAX_REQUEST_S,
)
from custom_components.voicestack.request.loop import VoiceLoop
from devstack import servers, speech
from devstack.assist_pipeline import entity_of
from devstack.fake_satellite import FakeSatellite
from devstack.manual_clock import ManualClock
from devstack.satellite import satellite
from devstack.spoken_request import spoken_request
from devstack.voicestack_entry import runtime_of, satellite_entity
from devstack.waiting import wait_for
from tests.integration.assist import (
    IDLE,
    LIGHT,
    LISTENING,
    PROCESSING,
    RESPONDING,
    add_voicestack,
    add_wyoming,
    record_states,
    set_up_assist,
    words,
)

pytestmark = pytest.mark.e2e

COMMAND = "Turn on the kitchen lights."
RUN_TIMEOUT_S = 30.0
SATELLITE = "assist_satellite.test_satellite"
# A diagnostic counter, disabled by default: the test that reads it enables it.
EMPTY_TRANSCRIPTS = "sensor.test_satellite_empty_transcripts"


async def test_a_spoken_command_switches_the_light_and_is_answered(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    mic = speech.write_wav(tmp_path / "mic.wav", spoken_request(COMMAND))
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
        playback = runtime_of(entry).hub.speaker.last
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
    mic = speech.write_wav(
        tmp_path / "mic.wav", silent_request + spoken_request(COMMAND)
    )
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

    dropped = [
        r
        for r in caplog.records
        if r.name.startswith("custom_components.voicestack")
        and "empty request, no_speech" in r.getMessage()
    ]
    assert len(dropped) == 1
    silent, command = utterances
    assert (silent.data["outcome"], silent.data["reason"]) == ("empty", "no_speech")
    assert words(command.data["text"]) == words(COMMAND)
    # The satellite dropped the request itself: no error, it is idle again.
    assert "Peer reported an error" not in sat.log_text()


async def test_tts_down_still_acts_and_the_next_request_works(
    hass: HomeAssistant,
    tmp_path: Path,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    mic = speech.write_wav(
        tmp_path / "mic.wav",
        spoken_request(COMMAND) + spoken_request("Turn off the kitchen lights."),
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
        assert not runtime_of(entry).hub.speaker.busy

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
    cut_off = speech.write_wav(tmp_path / "cut.wav", spoken_request(COMMAND))
    # Home Assistant refuses a wake word said within WAKE_WORD_COOLDOWN (2 s)
    # of the last one as a duplicate; the restarted satellite can be that quick
    # (seen on a loaded CPU): it hears 2.5 s of silence first.
    full = speech.write_wav(
        tmp_path / "full.wav", speech.pad(spoken_request(COMMAND), 2.5, 0.0)
    )
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
        in_progress = runtime_of(entry).hub.assist_in_progress

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
        playback = runtime_of(entry).hub.speaker.last
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
    Wyoming ASR server gives ``ANSWERS`` in turn, whatever it is sent, and counts
    the audio bytes it was sent and the ``audio-stop``s.
    """

    ANSWERS: ClassVar[list[str]] = []
    HEARD_BYTES: ClassVar[int] = 0
    STOPS: ClassVar[int] = 0

    async def handle_event(self, event: WyomingEvent) -> bool:
        if AudioChunk.is_type(event.type):
            _HearsNothing.HEARD_BYTES += len(event.payload or b"")
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
            _HearsNothing.STOPS += 1
            await self.write_event(Transcript(text=self.ANSWERS.pop(0)).event())
        return True


@asynccontextmanager
async def hearing_nothing(*answers: str) -> AsyncIterator[SimpleNamespace]:
    """A ``_HearsNothing`` server on loopback that gives ``answers``."""
    _HearsNothing.ANSWERS = list(answers)
    _HearsNothing.HEARD_BYTES = _HearsNothing.STOPS = 0
    endpoint = SimpleNamespace(host="127.0.0.1", port=servers.free_port())
    stt = AsyncServer.from_uri(f"tcp://{endpoint.host}:{endpoint.port}")
    await stt.start(_HearsNothing)
    try:
        yield endpoint
    finally:
        await stt.stop()


async def test_an_empty_transcript_is_an_event_and_a_count(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server
) -> None:
    mic = speech.write_wav(
        tmp_path / "mic.wav", spoken_request(COMMAND) + spoken_request(COMMAND)
    )
    utterances: list[Event] = []
    hass.bus.async_listen(EVENT_UTTERANCE, utterances.append)
    async with AsyncExitStack() as stack:
        endpoint = await stack.enter_async_context(hearing_nothing("[BLANK_AUDIO]", ""))
        await set_up_assist(hass, stack, tmp_path, piper, endpoint)
        seen = light_states(hass, stack)
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        await add_voicestack(
            hass, stack, sat, enable={EMPTY_TRANSCRIPTS: "empty_transcripts"}
        )
        await wait_for(lambda: len(utterances) == 2, RUN_TIMEOUT_S, "two requests")
        await hass.async_block_till_done()
        count = hass.states.get(EMPTY_TRANSCRIPTS)

    assert [(u.data["text"], u.data["outcome"]) for u in utterances] == [
        ("[BLANK_AUDIO]", "empty"),
        ("", "empty"),
    ]
    assert all(u.data["sent_to_agent"] is False for u in utterances)
    assert count is not None
    assert count.state == "2"
    assert seen == []  # nothing acted on


# -- a peer at the satellite's address that streams without end (issue 12, 8) --


@dataclass(slots=True)
class Endless:
    """VoiceStack on an endless peer, in a Home Assistant set up for it."""

    peer: FakeSatellite
    voice: VoiceLoop
    pipeline: Pipeline
    stack: AsyncExitStack


@asynccontextmanager
async def endless_request(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server
) -> AsyncIterator[Endless]:
    """Assist with an STT that hears nothing, and VoiceStack on an endless peer."""
    async with AsyncExitStack() as stack:
        stt = await stack.enter_async_context(hearing_nothing(""))
        pipeline = await set_up_assist(hass, stack, tmp_path, piper, stt)
        peer = await stack.enter_async_context(FakeSatellite())
        entry = await add_voicestack(hass, stack, peer)  # type: ignore[arg-type]
        await wait_for(lambda: peer.running, 10, "run-satellite")
        await wait_for(
            lambda: satellite_entity(hass, entry) is not None, 10, "the entity"
        )
        entity = satellite_entity(hass, entry)
        assert entity is not None
        yield Endless(peer, entity.voice_loop, pipeline, stack)


def _limit_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "custom_components.voicestack.request.loop"
        and r.levelname == "WARNING"
        and "request audio ended at its limit" in r.getMessage()
    ]


async def test_a_request_that_streams_without_end_ends_at_the_limit(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """30 s after speech-to-text started, the audio ends as at an end of speech.

    The peer streams 10 ms of silence every 50 ms: Home Assistant's own VAD
    would end it only after 15 s of audio (75 s here). The deadline runs on a
    manual clock; everything else is real.
    """
    clock = ManualClock()
    utterances: list[Event] = []
    hass.bus.async_listen(EVENT_UTTERANCE, utterances.append)
    async with endless_request(hass, tmp_path, piper) as endless:
        peer, voice = endless.peer, endless.voice
        voice.clock = clock
        streaming = asyncio.create_task(peer.stream(320, 0.05))
        try:
            await wait_for(
                lambda: _HearsNothing.HEARD_BYTES >= 3200, 20, "speech-to-text hears"
            )
            clock.advance(MAX_REQUEST_S - 0.001)
            await asyncio.sleep(0.2)  # time for a stop to reach either peer
            stops_before = _HearsNothing.STOPS
            told_before = "voice-stopped" in peer.received
            clock.advance(0.001)
            await wait_for(lambda: _HearsNothing.STOPS == 1, 10, "the end of audio")
            await wait_for(lambda: utterances != [], 10, "the request's outcome")
            await wait_for(lambda: "voice-stopped" in peer.received, 5, "told")
            audio = voice.audio
            assert audio is not None
            streamed = audio.received_bytes
            await wait_for(
                lambda: audio.received_bytes >= streamed + 3200, 10, "more audio"
            )
        finally:
            streaming.cancel()

    assert (stops_before, told_before) == (0, False)
    assert _limit_warnings(caplog) == [
        "test-satellite: request audio ended at its limit: still streaming after 30 s"
    ]
    assert [u.data["outcome"] for u in utterances] == ["empty"]
    assert audio.dropped_bytes > 0  # what came after the end was not kept
    assert audio.peak_bytes <= MAX_QUEUED_AUDIO_BYTES
    assert _HearsNothing.STOPS == 1


async def test_a_peer_flooding_audio_cannot_grow_home_assistant(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
) -> None:
    """The reproduction of issue 12 item 8: RSS went from 189 to 504 MB.

    The peer sends 64 KiB chunks (2 s of audio each) as fast as Home Assistant
    reads them, 32 MiB in all. Home Assistant reads every byte, keeps at most
    the queue's bound waiting, drops the rest once the request's audio ended,
    and stays connected.
    """
    total = 32 * 1024 * 1024
    chunk = 64 * 1024
    async with endless_request(hass, tmp_path, piper) as endless:
        peer, voice = endless.peer, endless.voice
        streaming = asyncio.create_task(peer.stream(chunk, 0, total))
        try:
            await asyncio.wait_for(streaming, 60)
            audio = voice.audio
            assert audio is not None
            await wait_for(
                lambda: audio.received_bytes == peer.sent_bytes, 30, "all read"
            )
            await wait_for(lambda: _HearsNothing.STOPS == 1, 30, "the end of audio")
            connected = voice.hub.connected
        finally:
            streaming.cancel()

    assert connected
    assert audio.ended
    assert audio.received_bytes == total
    assert audio.peak_bytes <= MAX_QUEUED_AUDIO_BYTES
    assert audio.queued_bytes == 0  # nothing of it is held once the request ended
    # The pipeline read until its VAD gave up (15 s of audio, in whole chunks);
    # the rest was dropped as it came.
    assert audio.received_bytes - audio.dropped_bytes <= 15 * BYTES_PER_SECOND + chunk


class _WakesOnCue(AsyncEventHandler):
    """Home Assistant's wake word engine, as a Wyoming server: detects on cue.

    It counts the audio it is sent and answers ``detection`` of ``hey_endless``
    to the first chunk after ``CUE`` is set.
    """

    CUE: ClassVar[asyncio.Event]
    HEARD_BYTES: ClassVar[int] = 0

    async def handle_event(self, event: WyomingEvent) -> bool:
        if Describe.is_type(event.type):
            attribution = Attribution(name="test", url="")
            model = WakeModel(
                name="hey_endless",
                attribution=attribution,
                installed=True,
                description="Hey Endless",
                version="1",
                languages=["en"],
                phrase="Hey Endless",
            )
            program = WakeProgram(
                name="on-cue",
                attribution=attribution,
                installed=True,
                description="detects on cue",
                version="1",
                models=[model],
            )
            await self.write_event(Info(wake=[program]).event())
        elif AudioChunk.is_type(event.type):
            _WakesOnCue.HEARD_BYTES += len(event.payload or b"")
            if self.CUE.is_set():
                self.CUE.clear()
                await self.write_event(Detection(name="hey_endless").event())
        return True


async def test_the_wake_word_stage_has_no_limit_and_the_request_after_it_has(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A stock satellite streams until Home Assistant's wake word engine hears it.

    That may take hours: the 30 s start at the detection, not before.
    """
    clock = ManualClock()
    _WakesOnCue.CUE = asyncio.Event()
    _WakesOnCue.HEARD_BYTES = 0
    wake = SimpleNamespace(host="127.0.0.1", port=servers.free_port())
    wake_server = AsyncServer.from_uri(f"tcp://{wake.host}:{wake.port}")
    await wake_server.start(_WakesOnCue)
    try:
        async with endless_request(hass, tmp_path, piper) as endless:
            peer, voice = endless.peer, endless.voice
            wake_entry = await add_wyoming(hass, endless.stack, wake.host, wake.port)
            await async_update_pipeline(
                hass,
                endless.pipeline,
                wake_word_entity=entity_of(hass, wake_entry, "wake_word"),
                wake_word_id="hey_endless",
            )
            voice.clock = clock
            streaming = asyncio.create_task(
                peer.stream(320, 0.05, start_stage=WyomingStage.WAKE)
            )
            try:
                await wait_for(
                    lambda: _WakesOnCue.HEARD_BYTES >= 3200, 20, "the wake engine hears"
                )
                clock.advance(24 * 3600)
                await asyncio.sleep(0.2)  # time for a stop to reach the peer
                told_before = "voice-stopped" in peer.received
                heard_before = _HearsNothing.HEARD_BYTES
                _WakesOnCue.CUE.set()
                await wait_for(
                    lambda: _HearsNothing.HEARD_BYTES >= 3200, 20, "speech-to-text"
                )
                clock.advance(MAX_REQUEST_S - 0.001)
                await asyncio.sleep(0.2)
                stops_before = _HearsNothing.STOPS
                clock.advance(0.001)
                await wait_for(lambda: _HearsNothing.STOPS == 1, 10, "the end")
                await wait_for(lambda: "voice-stopped" in peer.received, 5, "told")
            finally:
                streaming.cancel()
    finally:
        await wake_server.stop()

    assert (told_before, heard_before, stops_before) == (False, 0, 0)
    assert "detection" in peer.received  # the satellite was told of the wake word
    assert _limit_warnings(caplog) == [
        "test-satellite: request audio ended at its limit: still streaming after 30 s"
    ]


async def test_a_pipeline_agent_that_is_gone_fails_one_request_cleanly(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The pipeline names an agent that was removed: one warning, no traceback.

    Both the agent's warm-up (started while speech-to-text listens) and the
    request end in one logged line; the satellite is idle again and the light
    untouched.
    """
    mic = speech.write_wav(tmp_path / "mic.wav", spoken_request(COMMAND))
    async with AsyncExitStack() as stack:
        pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
        await async_update_pipeline(
            hass, pipeline, conversation_engine="conversation.removed_agent"
        )
        log = record_states(hass, stack)
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        await add_voicestack(hass, stack, sat)
        await wait_for(
            lambda: PROCESSING in log.names() and log.names()[-1] == IDLE,
            RUN_TIMEOUT_S,
            "processed, then idle again",
        )
        await hass.async_block_till_done()

    assert hass.states.get(LIGHT).state == STATE_OFF
    lines = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("custom_components.voicestack")
        and "conversation.removed_agent" in r.getMessage()
    ]
    assert len(lines) == 1, lines
    assert "never retrieved" not in caplog.text
    assert "Traceback" not in caplog.text
