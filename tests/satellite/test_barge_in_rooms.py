"""Barge-in in the hard room, on a real satellite: no stutter, the whole command.

The ``hard`` preset (devstack/room_presets.py, its own fixed seed): RT60
0.55 s, the speaker 1 m from the mic and compressing past -6 dBFS, the user
3 m away, the mic's clock 80 ppm slow against the speaker's, jittered
capture, a fan 10 dB under the user's voice. The answers are long and in
voices the satellite was not tuned on (flite); the owner is the test, as Home
Assistant would be with nobody enrolled. How often, over many answers and
points, is measured in bench/barge_in_rooms.py; these pin one seeded case each.

Both fail today, and are marked so (not strictly: a real-time room does not
replay sample for sample): measured on 2026-11-27, the hard room still pauses
on the answer's own echo 6 times per 10 minutes of answers (53 before the
echo's tail and the noise floor), all in the first minute while AEC3
converges, which is where these answers play; and 6 of 24 short commands come
back word for word (docs/barge-in.md, "Limits"; docs/benchmarks.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event

from devstack import speech
from devstack.ear import words
from devstack.satellite import read_until
from devstack.voices import voice
from tests.satellite.owner import audio_of
from tests.satellite.test_barge_in import Home, config, living_room
from voicestack_satellite import protocol

ANSWERS = (
    (
        "flite-slt",
        (
            "Here is the news from your home tonight, room by room, as it stands."
            " The kitchen light is off, and the living room lamp has been on since six."
            " The fan is off, and everything else in the house is quiet and calm."
        ),
    ),
    (
        "flite-rms",
        (
            "Tomorrow will be sunny in the morning, with rain in the afternoon."
            " The wind picks up after four, so bring the washing in before then."
        ),
    ),
)
COMMAND = "Turn off the light."
COMMAND_VOICE = "flite-awb"


async def _play(home: Home, pcm: bytes, stream: str) -> None:
    """One answer, marked ``barge_in`` (a voice response speech may pause)."""
    start = AudioStart(rate=16000, width=2, channels=1).event()
    start.data.update({protocol.STREAM: stream, protocol.BARGE_IN_FIELD: True})
    await home.owner.write_event(start)
    chunk = AudioChunk(rate=16000, width=2, channels=1, audio=pcm)
    await home.owner.write_event(chunk.event())
    await home.owner.write_event(AudioStop().event())


@pytest.mark.xfail(
    reason="the hard room still pauses on AEC3's residual (bench/barge_in_rooms.py)",
    strict=False,
)
async def test_the_answers_own_echo_pauses_nothing_in_the_hard_room(
    tmp_path: Path,
) -> None:
    """Two long answers play to their ends; not one pause, not one report."""
    async with living_room(tmp_path, barge_in=config(), preset="hard") as home:
        events = []
        for index, (name, text) in enumerate(ANSWERS):
            await _play(home, voice(name).say(text), f"s{index}")
            played, before = await read_until(home.owner, "played", 60)
            assert played.data == {"stream": f"s{index}", "state": "played"}
            events += before

    assert protocol.BARGE_IN not in {event.type for event in events}
    assert "Paused stream" not in home.sat.log_text()


@pytest.mark.xfail(
    reason="the first word is lost under the echo (bench/barge_in_rooms.py)",
    strict=False,
)
async def test_a_short_command_over_an_answer_in_the_hard_room_is_heard_whole(
    tmp_path: Path,
) -> None:
    """It pauses the answer, and whisper hears the request word for word."""
    async with living_room(tmp_path, barge_in=config(), preset="hard") as home:
        name, text = ANSWERS[0]
        await _play(home, voice(name).say(text), "s1")
        await asyncio.sleep(3.0)
        heard = home.room.say_now(voice(COMMAND_VOICE).say(COMMAND))
        report, _ = await read_until(home.owner, protocol.BARGE_IN, 5)
        paused = home.room.pause_after(heard.at - 0.1)
        await home.owner.write_event(Event(protocol.BARGE_IN_REQUEST, {"stream": "s1"}))
        await read_until(home.owner, protocol.PREROLL, 5)
        _stop, request = await read_until(home.owner, "audio-stop", 10)

    assert report.data["stream"] == "s1"
    assert paused is not None
    assert paused - heard.at < 0.25
    assert words(speech.transcribe(audio_of(request))) == words(COMMAND)
