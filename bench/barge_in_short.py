"""Short replies and resumed answers on their own echo (issue 26), per room.

``bench/barge_in_rooms.py`` counts self-pauses over ten minutes of long answers
played back to back: the echo's delay never moves there. On a real satellite
(``devstack.room.Room``) the speaker starts each run of playback (a reply after
silence, an answer resumed after a pause) 10-20 ms earlier or later against the
satellite's reference than the run before, and AEC3 then leaves the echo only
8-10 dB down for up to a second: 4 of 46 short replies stumbled for a listener.
This replays that (``Replay(start_lag_s=...)``: each run starts late by a
seeded draw from ``START_LAG_S``), nobody speaking:

- **Short replies**: per trial a long answer, an idle gap of 2-20 s (the room's
  noise goes on), then a short reply ("Turned on the switch.", 1-3 s, Piper joe
  and flite slt/rms/awb/kal). Pauses within each reply, and where (seconds in).
- **Resumes**: another voice talks over a long answer, the answer pauses, and
  the owner resumes it ``VERDICT_S`` later (as Home Assistant does on the
  gate's verdict). Pauses in the ``AFTER_RESUME_S`` after the voice ended.

Each figure twice in the same run: with the echo path's settling
(``echo_path.SETTLE_S``) and without it (the rule before: the anchor).
``--long``: instead, what the settling costs elsewhere, with and without it:
``bench/barge_in_rooms.py``'s ten minutes of long answers (self-pauses) and
its 24 commands over an answer (onset to paused; some come in an answer's
first second, where the settling asks 6 dB more of a voice).

    .venv-satellite/bin/python -m bench.barge_in_short [ROOM ...]         # ~4 min per room
    .venv-satellite/bin/python -m bench.barge_in_short --long [ROOM ...]  # ~15 min per room
"""

from __future__ import annotations

import asyncio
from pathlib import Path
import statistics
import sys
from unittest import mock

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.barge_in_replay import Replay
from bench.barge_in_rooms import answer_pcm, commands, p95, self_pauses
from bench.common import figure, header, report
from devstack.room_presets import RATE
from devstack.voices import voice
from voicestack_satellite import echo_path

ROOMS = ("simple", "quiet", "hard")
TRIALS = 16
RESUMES = 8
START_LAG_S = (0.0, 0.04)  # each run of playback starts this late (drawn per run)
GAP_S = (2.0, 20.0)
VERDICT_S = 1.5  # from the report to Home Assistant's resume
AFTER_RESUME_S = 8.0
REPLIES = (
    "Turned on the switch.",
    "Turned off the light.",
    "The fan is on.",
    "The front door is locked.",
    "It is twenty one degrees inside.",
)
REPLY_VOICES = ("joe", "flite-slt", "flite-rms", "flite-awb", "flite-kal")
INTRUDER = ("espeak-gb", "Hey, wait a moment, I have a question about that.")


def reply_pcm(index: int) -> np.ndarray:
    """The ``index``-th short reply (text and voice cycle apart)."""
    said = voice(REPLY_VOICES[index % len(REPLY_VOICES)]).say(
        REPLIES[index % len(REPLIES)]
    )
    return np.frombuffer(said, dtype=np.int16)


def replay_of(room: str, *, settle: bool) -> Replay:
    """The room's replay, the speaker's start moving; ``settle`` False: the rule before."""
    replay = Replay(room, start_lag_s=START_LAG_S)
    if not settle:
        replay.echo.settle_s = 0.0
    return replay


async def short_replies(room: str, trials: int, *, settle: bool) -> list[list[float]]:
    """Per reply: where it paused (seconds into it); nobody speaking."""
    replay = replay_of(room, settle=settle)
    gaps = np.random.default_rng([replay.preset.seed, 3])
    found = []
    for trial in range(trials):
        replay.speaker.start(answer_pcm(trial))
        await replay.play_out()
        replay.end_request()
        await replay.run(float(gaps.uniform(*GAP_S)))
        start, before = replay.mic_end, len(replay.speaker.pauses)
        replay.speaker.start(reply_pcm(trial))
        await replay.play_out()
        replay.end_request()
        found.append(
            [(pause - start) / RATE for pause in replay.speaker.pauses[before:]]
        )
    return found


async def resumes(room: str, trials: int, *, settle: bool) -> list[list[float]] | None:
    """Per resume: where the answer paused again (seconds after the resume).

    None when the voice did not pause an answer (nothing was resumed).
    """
    replay = replay_of(room, settle=settle)
    replay.owner_waits = True
    starts = np.random.default_rng([replay.preset.seed, 4])
    replay.speaker.start(answer_pcm(0))  # AEC3 hears one answer first
    await replay.play_out()
    name, text = INTRUDER
    intruder = voice(name).say(text)
    found = []
    for trial in range(trials):
        replay.speaker.start(answer_pcm(trial + 1))
        await replay.run(float(starts.uniform(2.0, 5.0)))
        reported = len(replay.reports)
        said = replay.say(intruder, "other")
        while len(replay.reports) == reported and replay.air.written < said.end:
            await replay.step()
        if len(replay.reports) == reported:
            return None
        await replay.run(VERDICT_S)
        replay.barge_in.resumed()
        replay.speaker.resume()
        resumed, before = replay.mic_end, len(replay.speaker.pauses)
        await replay.run(AFTER_RESUME_S)
        found.append(
            [
                (pause - resumed) / RATE
                for pause in replay.speaker.pauses[before:]
                if pause > said.end
            ]
        )
        replay.barge_in.abandon(resume=False)
        replay.speaker.flush()
        await replay.run(1.0)
    return found


def _where(found: list[list[float]]) -> str:
    return ", ".join(f"{s:.2f}" for pauses in found for s in pauses) or "none"


async def room_figures(room: str) -> None:
    """Both figures of one room, with the settling and without (the anchor)."""
    counts = {}
    for settle in (False, True):
        found = await short_replies(room, TRIALS, settle=settle)
        counts[settle] = sum(len(p) for p in found)
        report(
            f"[{room}] {'settling' if settle else 'before'}: short replies paused"
            f" {sum(bool(p) for p in found)} of {TRIALS}, at {_where(found)} s"
        )
    figure(
        f"[{room}] short replies' self-pauses",
        counts[True],
        f"per {TRIALS} replies",
        anchor=("the rule before", counts[False]),
        goal=("0", counts[True] == 0),
        precision=0,
    )
    for settle in (False, True):
        resumed = await resumes(room, RESUMES, settle=settle)
        if resumed is None:
            report(f"[{room}] the other voice paused no answer: no resume to measure")
            return
        counts[settle] = sum(len(p) for p in resumed)
        report(
            f"[{room}] {'settling' if settle else 'before'}: resumed answers paused"
            f" again {counts[settle]} times in {RESUMES} x {AFTER_RESUME_S:g} s,"
            f" at {_where(resumed)} s after the resume"
        )
    figure(
        f"[{room}] self-pauses after a resume",
        counts[True],
        f"per {RESUMES} resumes",
        anchor=("the rule before", counts[False]),
        goal=("0", counts[True] == 0),
        precision=0,
    )


async def long_figures(room: str) -> None:
    """Long answers' self-pauses and commands' onset to paused, before and with."""
    found: dict[bool, tuple[int, float, list[float], int]] = {}
    for settle in (False, True):
        with mock.patch.object(
            echo_path, "SETTLE_S", echo_path.SETTLE_S if settle else 0.0
        ):
            pauses, _reported, played, _cpu = await self_pauses(room)
            results, delays = await commands(room)
        caught = sum(heard != "(not caught)" for _ok, _text, heard in results)
        found[settle] = (pauses, played, delays, caught)
        report(
            f"[{room}] {'settling' if settle else 'before'}: {pauses} self-pauses in"
            f" {played:.0f} s of long answers; {caught} of {len(results)} commands"
            f" caught, {len(delays)} paused, onset to paused median"
            f" {statistics.median(delays):.3f} s, p95 {p95(delays):.3f} s"
        )
    pauses, played, delays, _caught = found[True]
    before = found[False]
    figure(
        f"[{room}] self-pauses per 10 min of long answers",
        pauses * 600 / played,
        "",
        anchor=("the rule before", before[0] * 600 / before[1]),
        goal=("0", pauses == 0),
    )
    for name, value in (("median", statistics.median), ("p95", p95)):
        figure(
            f"[{room}] onset to paused, {name}",
            value(delays),
            "s",
            anchor=("the rule before", value(before[2])),
            precision=3,
        )


async def main_async(rooms: tuple[str, ...], *, long: bool) -> None:
    """Every room, in order."""
    for room in rooms:
        await (long_figures(room) if long else room_figures(room))


def main() -> None:
    """Print every figure (rooms named on the command line, else all)."""
    header("short replies and resumes on their own echo (issue 26)")
    args = sys.argv[1:]
    long = "--long" in args
    rooms = tuple(arg for arg in args if arg != "--long") or ROOMS
    asyncio.run(main_async(rooms, long=long))


if __name__ == "__main__":
    main()
