"""Short commands over an answer on a real satellite, per room: the replay's check.

``bench/barge_in_rooms.py`` replays the satellite's echo path and barge-in
through each room faster than real time; this runs the real thing, in real
time, for fewer trials: a ``voicestack-satellite`` subprocess in
``devstack.room.Room`` (``quiet`` and ``hard``, their fixed seeds), owned by
this process as Home Assistant would be with nobody enrolled (every barge-in
is the user's: ``voicestack-barge-in-request`` at once). After two answers
(AEC3 converging), ``TRIALS`` commands from the same list, voices and answers
as the replay's, each at its own point of an answer; the request the
satellite streams is transcribed (whisper tiny.en) and compared word for word.

    .venv-satellite/bin/python -m bench.barge_in_live     # about 5 minutes
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
import statistics
import sys
import tempfile

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from wyoming.audio import AudioChunk
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.satellite import RunSatellite

from bench.barge_in_rooms import answer_pcm, command, heard_right
from bench.common import header, report
from devstack.room import Room
from devstack.satellite import play_answer, read_until, satellite
import voicestack_protocol as protocol

TRIALS = 8
ROOMS = ("quiet", "hard")
CONFIG = {
    "enabled": True,
    "min_speech_s": 0.3,
    "echo_cancel": True,
    "threshold": 0.7,
    "voiceprints": [],
}


async def trial(owner: AsyncTcpClient, room: Room, index: int) -> tuple[str, float]:
    """One command over one answer: what whisper heard of the request, and the pause."""
    pcm = answer_pcm(index)
    stream = f"t{index}"
    await play_answer(owner, pcm.tobytes(), stream)
    span = len(pcm) / 16000 - 2.6
    await asyncio.sleep(0.6 + span * ((index * 7) % 24) / 23)
    text, clip = command(index)
    heard = room.say_now(clip)
    try:
        await read_until(owner, protocol.BARGE_IN, len(clip) / 32000 + 2)
    except TimeoutError:
        await owner.write_event(Event(protocol.FLUSH, {}))
        await read_until(owner, "played", 10)
        return "(not caught)", float("nan")
    await owner.write_event(Event(protocol.BARGE_IN_REQUEST, {"stream": stream}))
    _stop, request = await read_until(owner, "audio-stop", 15)
    audio = b"".join(
        AudioChunk.from_event(e).audio for e in request if AudioChunk.is_type(e.type)
    )
    paused = room.pause_after(heard.at - 0.1)
    await asyncio.sleep(1.0)
    ok, said = heard_right(audio, text)
    return ("" if ok else said), (float("nan") if paused is None else paused - heard.at)


async def one_room(name: str) -> None:
    """Every trial in one room; its figures."""
    with tempfile.TemporaryDirectory() as folder:
        async with (
            Room(Path(folder), name) as room,
            satellite(Path(folder), room=room) as sat,
        ):
            owner = sat.connect()
            await owner.connect()
            hello = {"protocol": protocol.PROTOCOL_VERSION, "end_of_speech_s": 0.7}
            await owner.write_event(Event(protocol.HELLO, hello))
            await owner.write_event(RunSatellite().event())
            await owner.write_event(Event(protocol.BARGE_IN_CONFIG, CONFIG))
            for warm in range(2):
                await play_answer(owner, answer_pcm(warm).tobytes(), f"w{warm}")
                await read_until(owner, "played", 60)
            results = [await trial(owner, room, index) for index in range(TRIALS)]
            log = sat.log_text()
    right = sum(not wrong for wrong, _ in results)
    delays = [delay for _, delay in results if not math.isnan(delay)]
    report(
        f"[{name}] real satellite: {right} of {TRIALS} word for word;"
        f" onset to paused median {statistics.median(delays):.3f} s"
        f" ({len(delays)} paused); {log.count('Paused stream w')} pauses"
        " in the two answers before"
    )
    for wrong, _ in results:
        if wrong:
            report(f"    heard {wrong!r}")


def main() -> None:
    """Both rooms."""
    header("barge-in on a real satellite, per room (issue 26)")
    for name in ROOMS:
        asyncio.run(one_room(name))


if __name__ == "__main__":
    main()
