"""Saying "Stop." over an answer stops it: by ear, on a real satellite (issue 26).

"Stop." is the shortest thing said over an answer, and its vowel is loud for
only 0.2-0.3 s: with a paused answer's speech judged as a playing one's (the
residual test against an echo level that still held), the rest of the word
did not count, 0.3 s of speech was never reached and the answer resumed by
itself (bench/barge_in_stop.py). The voice is
flite awb, one the project does not tune on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
import re

from wyoming.audio import AudioChunk, AudioStop
from wyoming.event import Event

from bench.barge_in_replay import Replay
from bench.barge_in_rooms import answer_pcm
from devstack.room_presets import RATE
from devstack.satellite import read_until
from devstack.voices import voice
from tests.satellite.test_barge_in import Home, config, living_room, play_answer
from tests.satellite.test_barge_in_reply import REPLY, _heard
import voicestack_protocol as protocol

STOP = voice("flite-awb").say("Stop.")


async def _end_request(home: Home) -> None:
    """The request streams until the satellite ends it or, 1.5 s in, the owner does.

    The satellite's own end of speech may end a request this short; if not,
    Home Assistant's speech-to-text would, with a transcript.
    """
    audio, told = 0, False
    while True:
        event = await asyncio.wait_for(home.owner.read_event(), 5)
        assert event is not None, "the satellite closed during the request"
        if AudioStop.is_type(event.type):
            return
        if AudioChunk.is_type(event.type):
            audio += len(AudioChunk.from_event(event).audio)
        if audio >= 1.5 * RATE * 2 and not told:
            await home.owner.write_event(Event("transcript", {"text": "Stop."}))
            told = True


async def test_stop_over_an_answer_is_a_barge_in_and_the_reply_is_heard(
    tmp_path: Path,
) -> None:
    async with living_room(tmp_path, barge_in=config()) as home:
        await play_answer(home)
        await asyncio.sleep(2.0)
        home.room.say_now(STOP)
        report, _ = await read_until(home.owner, protocol.BARGE_IN, 5)
        await home.owner.write_event(Event(protocol.BARGE_IN_REQUEST, {"stream": "s1"}))
        flushed, _ = await read_until(home.owner, "played", 5)
        await _end_request(home)
        sent = await play_answer(home, "s2", text=REPLY)
        heard = await _heard(home, "s2", sent)

    assert report.data["stream"] == "s1"
    assert flushed.data == {"stream": "s1", "state": "flushed"}
    assert re.fullmatch(r"\s*turned on the fan\.\s*", heard), heard


async def _stops_reported(room: str, *, paused_terms: bool) -> list[bool]:
    """Per point of an answer: whether awb's "Stop." there was reported."""
    replay = Replay(room)
    replay.barge_in.over.paused_terms = paused_terms
    for index in range(4):  # AEC3 converged
        replay.speaker.start(answer_pcm(index))
        await replay.play_out()
    found = []
    for point in range(4):  # 1 to 4 s into an answer
        replay.speaker.start(answer_pcm(point))
        await replay.run(1.0 + point)
        reports = len(replay.reports)
        said = replay.say(STOP)
        await replay.run((said.end - replay.air.written) / RATE + 0.8)
        found.append(len(replay.reports) > reports)
        await replay.drop_answer(1.0)
    return found


async def test_stop_is_reported_in_the_quiet_room_on_the_mics_own_clock() -> None:
    """The quiet room replayed (its seed, the mic's clock): every "Stop." counts."""
    assert await _stops_reported("quiet", paused_terms=True) == [True] * 4
    # The rule before, same clips and points: none was (paused, then resumed).
    assert await _stops_reported("quiet", paused_terms=False) == [False] * 4
