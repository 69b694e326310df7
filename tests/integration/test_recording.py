"""End to end: every request is recorded while the satellite's switch is on.

A real satellite subprocess hears a Piper WAV; real Home Assistant runs real
whisper and Piper (or an STT server that hears nothing). What the recording
library holds afterwards is checked against the WAV the satellite heard: the
same samples at the same places, the markers where the preroll splice, the wake
word and Home Assistant's VAD put them, the transcript, the route, the answer.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
import re
from typing import Any

from homeassistant.core import HomeAssistant
import pytest

from custom_components.voicestack.core.recording.recording import stt_tokens
from custom_components.voicestack.core.router.normalize import hear
from custom_components.voicestack.core.wav import read_wav
from custom_components.voicestack.recording.library import recording_library
from devstack import servers, speech
from devstack.satellite import RunningSatellite, satellite
from devstack.spoken_request import LEAD_IN_S, WAKE_PAUSE_S, spoken_request, wake_phrase
from devstack.voicestack_entry import runtime_of, satellite_entity
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack, set_up_assist, words
from tests.integration.test_voice_loop import hearing_nothing
from voicestack_satellite.mic_format import READ_SAMPLES

pytestmark = pytest.mark.e2e

RECORD = "switch.test_satellite_record_requests"
SATELLITE = "assist_satellite.test_satellite"
COMMAND = "Turn on the kitchen lights."
SECOND = "Turn off the kitchen lights."
RUN_TIMEOUT_S = 30.0
RATE = 16000
WAKE_PREROLL = 4800  # the satellite's default --wake-preroll, 0.3 s
WAKE = re.compile(r"Wake word hey_jarvis at sample (\d+)")


def wake_samples(sat: RunningSatellite) -> list[int]:
    """The absolute mic samples the satellite heard its wake word at."""
    return [int(n) for n in WAKE.findall(sat.log_text())]


def samples(pcm: bytes) -> int:
    return len(pcm) // 2


def file_start(mic_pcm: bytes, preroll: bytes, cut: int) -> int | None:
    """The mic sample the WAV began at: the satellite hears silence before it.

    The WAV starts at a mic read's boundary (the first ``run-satellite``; 20 ms
    reads since 2026-11-28: on an 80 ms step this found it 1 time in 4); the one
    start where the WAV holds the recording's preroll right before the cut.
    """
    starts = [
        start
        for start in range(0, cut - WAKE_PREROLL + 1, READ_SAMPLES)
        if mic_pcm[(cut - WAKE_PREROLL - start) * 2 : (cut - start) * 2] == preroll
    ]
    return starts[0] if len(starts) == 1 else None


# What it checks is VoiceStack's, the same on every version: the newest only,
# for the CI's 45 minutes (scripts/test deselects newest_ha on the oldest).
@pytest.mark.newest_ha
async def test_a_spoken_command_is_recorded_only_while_the_switch_is_on(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    first = spoken_request(COMMAND, trailing_s=8.0)  # time to turn the switch on
    second = spoken_request(SECOND, trailing_s=8.0)
    # Then nobody speaks after the wake word: the satellite drops the request.
    silent = speech.pad(speech.speak("Hey Jarvis."), 0.5, 5.0)
    mic_pcm = first + second + silent
    mic = speech.write_wav(tmp_path / "mic.wav", mic_pcm)
    library = recording_library(hass)
    changes: list[dict[str, Any]] = []
    received: list[int] = []  # what a running request received when it was saved

    def saved(change: dict[str, Any]) -> None:
        changes.append(change)
        if (entity := satellite_entity(hass, entry)) and entity.voice_loop.audio:
            received.append(entity.voice_loop.audio.received_bytes)

    async with AsyncExitStack() as stack:
        pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
        stack.callback(library.async_subscribe(saved))
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic), "--max-request", "4")
        )
        entry = await add_voicestack(hass, stack, sat)
        # The satellite's own end of speech waits longer than Home Assistant's
        # VAD, so the VAD ends each request and says where speech ended.
        hub = runtime_of(entry).hub
        await wait_for(lambda: hub.connected, 10, "the satellite connected")
        hub.send_hello(end_of_speech_s=3.0)
        assert hass.states.get(RECORD).state == "off"  # off by default
        await wait_for(lambda: len(wake_samples(sat)) == 1, RUN_TIMEOUT_S, "wake 1")
        await wait_for(
            lambda: (
                hass.states.get(SATELLITE).state == "idle"
                and hass.states.get("light.kitchen").state == "on"
            ),
            RUN_TIMEOUT_S,
            "the first request answered",
        )
        await hass.services.async_call(
            "switch", "turn_on", {"entity_id": RECORD}, blocking=True
        )
        await wait_for(
            lambda: len(changes) == 2, RUN_TIMEOUT_S * 2, "two requests recorded"
        )
        await hass.async_block_till_done()
        dropped_summary, summary = await library.async_list(entry.entry_id)
        meta = await library.async_get(summary["id"])
        dropped = await library.async_get(dropped_summary["id"])
        wav = read_wav((await library.async_wav_path(summary["id"])).read_bytes())
        playback = runtime_of(entry).hub.speaker.last
        recorder = entry.runtime_data.recorder
        counts = (recorder.saved, recorder.dropped)

    assert [c["type"] for c in changes] == ["added"] * 2  # not the first
    assert hass.states.get("light.kitchen").state == "off"
    assert counts == (2, 0)
    # The audio: every sample Home Assistant received, as 16 kHz mono.
    assert (wav.rate, wav.width, wav.channels) == (RATE, 2, 1)
    assert meta["samples"] == samples(wav.audio) == received[0] // 2
    assert meta["duration_s"] == round(meta["samples"] / RATE, 3)
    # Sample 0 of the recording is mic sample ``cut - preroll``: the preroll
    # and the live audio after it are the mic's, sample for sample.
    heard = wav.audio
    cut = wake_samples(sat)[1]
    start = file_start(mic_pcm, heard[: WAKE_PREROLL * 2], cut)
    assert start is not None
    origin = cut - WAKE_PREROLL - start  # in the WAV
    marks = {m["name"]: m["sample"] for m in meta["markers"]}
    assert [m["name"] for m in meta["markers"]] == [
        "preroll_start",
        "splice",
        "wake_cut",
        "speech_start",
        "speech_end",
        "stream_end",
    ]
    assert [m["sample"] for m in meta["markers"]] == sorted(marks.values())
    assert meta["preroll"] == {"samples": WAKE_PREROLL, "cut": WAKE_PREROLL}
    assert (marks["preroll_start"], marks["splice"]) == (0, WAKE_PREROLL)
    assert marks["wake_cut"] == WAKE_PREROLL
    assert marks["stream_end"] == meta["samples"]
    # Home Assistant's VAD: speech starts in the command (after 0.3 s of it)
    # and ends after its 0.7 s of silence.
    command_at = (
        samples(first)
        + round(
            (LEAD_IN_S + speech.seconds(speech.speak(wake_phrase())) + WAKE_PAUSE_S)
            * RATE
        )
        - origin
    )
    command_end = command_at + samples(speech.speak(SECOND))
    assert command_at < marks["speech_start"] < command_at + RATE
    assert command_end < marks["speech_end"] < command_end + round(1.5 * RATE)
    live = slice(marks["speech_start"] * 2, (marks["speech_start"] + RATE // 2) * 2)
    assert heard[live] == mic_pcm[origin * 2 :][live]  # the live audio, in place
    assert meta["end_of_speech"] == "ha_vad"
    assert meta["wake_word"] == {"name": "hey_jarvis", "detected_s": 0.0}
    # What became of it.
    assert meta["entry_id"] == entry.entry_id
    assert (meta["satellite"], meta["entity_id"]) == ("test-satellite", SATELLITE)
    assert meta["stt"]["engine"] == pipeline.stt_engine
    assert words(meta["stt"]["raw"]) == words(SECOND)
    assert meta["stt"]["tokens"] == stt_tokens(meta["stt"]["raw"])
    assert meta["text"] == hear(meta["stt"]["raw"]).key
    assert meta["outcome"] == "routed"
    # The agent's answer (to the second command): it matched and acted.
    assert (meta["result"], meta["failure"]) == ("success", None)
    agent = meta["agent"]
    assert (agent["response_type"], agent["error_code"]) == ("action_done", None)
    assert agent["intent"] == "HassTurnOff"
    assert agent["acted"] is True
    assert "light.kitchen" in {t["id"] for t in agent["targets"]}
    decision = meta["decision"]
    assert (decision["frame"], decision["rule"]) == ("base", "agent")
    assert decision["sent_to_agent"] is True
    assert decision["stack"] == ["base"]
    assert "base/agent" in decision["explain"]
    assert playback is not None
    assert meta["response"] == " ".join(s.text for s in playback.sentences)
    assert meta["playback"]["outcome"] == "played"
    assert [s["text"] for s in meta["playback"]["sentences"]] == [
        s.text for s in playback.sentences
    ]
    stages = [t["stage"] for t in meta["timings"]]
    assert stages == ["wake", "stream", "stt", "route", "agent", "speech"]
    ends = [t["end_s"] for t in meta["timings"]]
    assert all(end is not None for end in ends)
    assert ends[2:] == sorted(ends[2:])  # speech-to-text, route, agent, speech
    assert meta["bytes"] == summary["bytes"] > meta["samples"] * 2
    # The request nobody spoke in: recorded, with why it was dropped.
    assert (dropped["outcome"], dropped["reason"]) == ("empty", "no_speech")
    assert (dropped["result"], dropped["failure"]) == ("empty", None)
    assert dropped["end_of_speech"] == "no_speech"
    assert dropped["samples"] > 2 * RATE  # the wake word's preroll, then silence
    assert (dropped["stt"], dropped["text"], dropped["decision"]) == (None, "", None)
    assert (dropped["response"], dropped["playback"]) == ("", None)
    assert dropped["preroll"] == {"samples": WAKE_PREROLL, "cut": WAKE_PREROLL}


# What it checks is VoiceStack's, the same on every version: the newest only,
# for the CI's 45 minutes (scripts/test deselects newest_ha on the oldest).
@pytest.mark.newest_ha
async def test_empty_transcripts_are_recorded_and_the_oldest_go(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server
) -> None:
    mic = speech.write_wav(tmp_path / "mic.wav", spoken_request(COMMAND) * 3)
    library = recording_library(hass)
    changes: list[dict[str, Any]] = []
    async with AsyncExitStack() as stack:
        stt = await stack.enter_async_context(
            hearing_nothing("", "[BLANK_AUDIO]", "(noise)")
        )
        await set_up_assist(hass, stack, tmp_path, piper, stt)
        stack.callback(library.async_subscribe(changes.append))
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        entry = await add_voicestack(hass, stack, sat, options={"recordings_keep": 2})
        await hass.services.async_call(
            "switch", "turn_on", {"entity_id": RECORD}, blocking=True
        )
        assert not changes  # the first wake word comes after 1.3 s
        await wait_for(
            lambda: sum(c["type"] == "added" for c in changes) == 3,
            RUN_TIMEOUT_S * 2,
            "three requests recorded",
        )
        kept = await library.async_list(entry.entry_id)
        metas = [await library.async_get(s["id"]) for s in kept]

    added = [c["recording"] for c in changes if c["type"] == "added"]
    removed = [c["recording_id"] for c in changes if c["type"] == "removed"]
    assert [a["outcome"] for a in added] == ["empty"] * 3
    assert [a["result"] for a in added] == ["empty"] * 3
    assert [a["stt_raw"] for a in added] == ["", "[BLANK_AUDIO]", "(noise)"]
    assert removed == [added[0]["id"]]  # the oldest went
    assert [s["id"] for s in kept] == [added[2]["id"], added[1]["id"]]  # newest first
    noise, blank = metas
    assert blank["stt"]["tokens"] == ["[BLANK_AUDIO]"]
    assert noise["stt"]["tokens"] == ["(noise)"]
    for meta in metas:
        assert meta["text"] == ""
        assert meta["decision"] is None
        assert (meta["response"], meta["playback"]) == ("", None)
        assert meta["samples"] > WAKE_PREROLL
        assert meta["preroll"] == {"samples": WAKE_PREROLL, "cut": WAKE_PREROLL}
        # Home Assistant's VAD or the satellite's end of speech, whichever first.
        assert meta["end_of_speech"] in ("ha_vad", "endpointer")
