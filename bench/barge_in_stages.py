"""Where the time from a voice's onset to the answer pausing goes (issue 26).

Per command said over an answer (``bench/barge_in_rooms.py``'s commands, replayed
through each room preset), from the voice's first loud sample at the mic:

- each test of the onset rule (``speech_over.py``): the end of the first 10 ms
  window from the onset on that is loud, that the VAD hears as speech, that is
  over the residual bar, over the floor, and all three (the rule's onset);
- the rule: the end of the window where ``PAUSE_AFTER_S`` of speech windows
  were counted;
- the mic chunk: when the chunk holding that window reached the satellite;
- the player: when the speaker went quiet (the chunk's jitter, the blocks
  written ahead).

    .venv-satellite/bin/python -m bench.barge_in_stages [CHUNK_MS] [ROOM ...]
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
import math
from pathlib import Path
import statistics
import sys

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import header, report
from devstack.room_presets import RATE
from voicestack_satellite.barge_in import PAUSE_AFTER_S
from voicestack_satellite.barge_in_phase import windows
from voicestack_satellite.vad import WINDOW_SAMPLES

TESTS = ("loud", "VAD", "residual", "floor", "all three")
# (mic sample, loud, VAD, over the residual bar, over the floor) per window.
Window = tuple[int, bool, bool, bool, bool]


@dataclass(frozen=True)
class Stages:
    """Seconds from the onset to each stage of one pause (None: never)."""

    tests: tuple[float | None, ...]  # per TESTS
    rule: float | None  # PAUSE_AFTER_S of speech windows counted
    chunk: float | None  # the chunk holding that window reached the satellite
    paused: float  # the speaker went quiet


def stages(
    trace: list[Window], onset: int, paused: float, chunk: int, rate: float
) -> Stages:
    """The stages of the pause at mic sample ``paused`` of a voice from ``onset``."""
    after = [w for w in trace if w[0] + WINDOW_SAMPLES > onset]

    def first(test: int) -> int | None:
        for window in after:
            if all(window[1:4]) if test == 5 else window[test]:
                return window[0] + WINDOW_SAMPLES
        return None

    found = [first(test) for test in (1, 2, 3, 4, 5)]
    speech = [w[0] + WINDOW_SAMPLES for w in after if all(w[2:5])]
    count = windows(PAUSE_AFTER_S)
    rule = speech[count - 1] if len(speech) >= count else None
    arrived = None if rule is None else math.ceil(rule / chunk) * chunk

    def seconds(sample: float | None) -> float | None:
        return None if sample is None else (sample - onset) / rate

    return Stages(
        tuple(seconds(s) for s in found),
        seconds(rule),
        seconds(arrived),
        (paused - onset) / rate,
    )


def summary(found: list[Stages]) -> list[str]:
    """Median of each stage (ms after the onset), and the step between them."""
    lines = []

    def median(values: list[float | None]) -> float:
        known = [v for v in values if v is not None]
        return 1000 * statistics.median(known) if known else math.nan

    for index, name in enumerate(TESTS):
        lines.append(
            f"first window {name}: {median([s.tests[index] for s in found]):.0f} ms"
        )
    rule = median([s.rule for s in found])
    chunk = median([s.chunk for s in found])
    paused = median([s.paused for s in found])
    lines.append(f"{PAUSE_AFTER_S * 1000:.0f} ms of speech counted: {rule:.0f} ms")
    lines.append(f"its mic chunk at the satellite: {chunk:.0f} ms")
    lines.append(f"the speaker quiet: {paused:.0f} ms")
    return lines


async def main_async(chunk_ms: int, rooms: tuple[str, ...]) -> None:
    """Every room's stages."""
    from bench.barge_in_rooms import commands, p95

    chunk = round(chunk_ms * RATE / 1000)
    for room in rooms:
        found: list[Stages] = []
        results, delays = await commands(room, chunk=chunk, stages=found)
        right = sum(ok for ok, _text, _heard in results)
        report(
            f"[{room}] {chunk_ms} ms chunks: {len(delays)} paused, {right} word for"
            f" word; onset to paused median {statistics.median(delays):.3f} s,"
            f" p95 {p95(delays):.3f} s; slowest {sorted(delays)[-4:]}"
        )
        for line in summary(found):
            report(f"    {line}")


def main() -> None:
    """Print each room's stages (read in ms, then rooms; default 20 ms, quiet, hard)."""
    header("barge-in: onset to paused, stage by stage (issue 26)")
    args = sys.argv[1:]
    chunk_ms = int(args.pop(0)) if args and args[0].isdigit() else 20
    asyncio.run(main_async(chunk_ms, tuple(args) or ("quiet", "hard")))


if __name__ == "__main__":
    main()
