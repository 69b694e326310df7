"""Announcer core under a flood: CPU per announce call, peak memory, utterances.

1000 ``Announcer.announce`` calls from 50 sources, one every 2 ms (2 s), go
through the whole HA-free pipeline of one satellite — collector (dedup, rate per
source, bounded queue), coalescer (window, summaries), orchestrator (critical path,
fates, events, metrics) — with default options and a no-op ``say`` that
"plays" at once. Then 5 s more pass so the last batch is said. The messages are
seeded-random: 1 % critical, 9 % high, 60 % normal, 30 % low, any category, one in
ten a repeat of a recent text. Each source sends 10/s, twice its rate limit.

Time is a ``ManualClock`` by default (the clock jumps 2 ms before each call and
every due timer runs, exactly as a loop would; nothing waits), or the event
loop's real clock with ``--real`` (the run then takes 2 s of wall time per pass).

Figures, median over ``--runs`` passes (anchor and announcer alternate):

- CPU per call, whole pass: process time of the pass / 1000. It includes the
  driver (advancing the clock or sleeping, yielding to the loop once per call),
  which the anchor pays too; the orchestrator's own CPU per call is the
  difference. Goal: < 100 µs.
- one ``announce()`` call alone (``perf_counter_ns`` around it): median and p99.
- anchor: the same driver where each call is a bare ``asyncio.Queue``
  ``put_nowait`` + ``get_nowait`` pair — the least any queued hand-over costs.
- peak memory (``tracemalloc``, a separate pass), utterances spoken and the fate
  of every message (the metrics invariant is checked).

    .venv/bin/python -m bench.announce_core [--runs 7] [--real]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
import statistics
import sys
import time
import tracemalloc
from typing import Any

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import figure, header, median, report
from custom_components.voicestack.core.announce import (
    CATEGORIES,
    Announcer,
    Priority,
    Spoken,
)
from custom_components.voicestack.core.clock import LoopClock
from devstack.manual_clock import ManualClock
from devstack.reproducible import seeded

CALLS = 1000
SOURCES = 50
SPAN_S = 2.0
TAIL_S = 5.0  # after the flood: the last window closes, the last batch is said
GOAL_US = 100.0
SEED = 6

Call = dict[str, Any]


def flood(seed: int = SEED) -> list[Call]:
    """The 1000 calls' arguments, made before any timing."""
    rng = seeded(seed)
    calls: list[Call] = []
    for n in range(CALLS):
        category = rng.choice(CATEGORIES)
        text = f"{category} sensor {n} changed"
        if calls and rng.random() < 0.1:  # a repeat of a recent message
            recent = rng.choice(calls[-20:])
            text, category = recent["message"], recent["category"]
        calls.append(
            {
                "message": text,
                "priority": rng.choices(list(Priority), weights=[1, 9, 60, 30])[0],
                "category": category,
                "source": f"automation.source_{n % SOURCES}",
            }
        )
    return calls


@dataclass
class Pass:
    """One pass's measurements."""

    cpu_per_call_us: float
    call_ns: list[int]
    spoken: int = 0
    summary: dict[str, Any] | None = None


async def drive(
    calls: Sequence[Call],
    make: Callable[[Any], Callable[[Call], object]],
    *,
    real: bool,
) -> tuple[Pass, Any]:
    """Run one pass: ``make(clock)`` returns the per-call function."""
    step = SPAN_S / len(calls)
    manual = ManualClock()
    clock = LoopClock() if real else manual
    call_fn = make(clock)
    timings: list[int] = []
    cpu_start = time.process_time_ns()
    for args in calls:
        if real:
            await asyncio.sleep(step)
        else:
            manual.advance(step)
        start = time.perf_counter_ns()
        call_fn(args)
        timings.append(time.perf_counter_ns() - start)
        await asyncio.sleep(0)  # let ``say`` tasks run, as a loop would
    if real:
        await asyncio.sleep(TAIL_S)
    else:
        for _ in range(int(TAIL_S / 0.1)):
            manual.advance(0.1)
            await asyncio.sleep(0)
    cpu_ns = time.process_time_ns() - cpu_start
    return Pass(cpu_ns / len(calls) / 1000, timings), call_fn


def anchor_fn(_clock: Any) -> Callable[[Call], object]:
    """A bare ``asyncio.Queue`` hand-over per call."""
    queue: asyncio.Queue[Call] = asyncio.Queue()

    def call(args: Call) -> object:
        queue.put_nowait(args)
        return queue.get_nowait()

    return call


class AnnouncerPass:
    """One satellite's announcer with a no-op speaker, counting utterances."""

    def __init__(self, clock: Any) -> None:
        """Default options, one satellite."""
        self.clock = clock
        self.spoken = 0
        self.announcer = Announcer(clock)
        self.announcer.add_speaker("bench", self.say, self.stop)

    async def say(self, _text: str, _ids: tuple[str, ...]) -> Spoken:
        """Played at once."""
        self.spoken += 1
        return Spoken("played", self.clock.now())

    async def stop(self) -> bool:
        """Nothing to stop."""
        return True

    def __call__(self, args: Call) -> object:
        """One ``announce`` call."""
        return self.announcer.announce(**args)


async def announcer_pass(calls: Sequence[Call], *, real: bool) -> Pass:
    """The pipeline pass, with its utterances and fates."""
    result, fn = await drive(calls, AnnouncerPass, real=real)
    assert isinstance(fn, AnnouncerPass)
    result.spoken = fn.spoken
    snapshot = fn.announcer.metrics().total
    assert snapshot.balanced, snapshot
    result.summary = snapshot.as_dict()
    await fn.announcer.shutdown(goodbye=False)
    return result


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[max(0, round(pct / 100 * len(ordered)) - 1)]


async def peak_memory(calls: Sequence[Call], *, real: bool) -> int:
    """Peak bytes allocated during one announcer pass (tracemalloc)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base, _ = tracemalloc.get_traced_memory()
    await announcer_pass(calls, real=real)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak - base


async def main(argv: Sequence[str] | None = None) -> None:
    """Measure; print figures."""
    parser = argparse.ArgumentParser(
        prog="bench.announce_core", description=__doc__.split("\n\n", 1)[0]
    )
    parser.add_argument("--runs", type=int, default=7, help="passes of each kind")
    parser.add_argument("--real", action="store_true", help="real time, not manual")
    args = parser.parse_args(argv)
    header("announcer core under a flood (bench/announce_core.py)")
    mode = "real clock, 2 s per pass" if args.real else "manual clock"
    report(
        f"flood: {CALLS} calls from {SOURCES} sources over {SPAN_S:.0f} s ({mode}),"
        f" one satellite, default options, no-op say; {args.runs} passes each"
    )
    calls = flood()
    await announcer_pass(calls, real=args.real)  # warm-up (imports, caches)
    ours: list[Pass] = []
    anchors: list[Pass] = []
    for run in range(args.runs):
        if run % 2:
            ours.append(await announcer_pass(calls, real=args.real))
            anchors.append((await drive(calls, anchor_fn, real=args.real))[0])
        else:
            anchors.append((await drive(calls, anchor_fn, real=args.real))[0])
            ours.append(await announcer_pass(calls, real=args.real))

    cpu = median(p.cpu_per_call_us for p in ours)
    cpu_anchor = median(p.cpu_per_call_us for p in anchors)
    spread = statistics.pstdev(p.cpu_per_call_us for p in ours)
    figure(
        "CPU per call, whole pass",
        cpu,
        "µs",
        detail=f" (±{spread:.1f} over passes)",
        anchor=("Queue put+get, same driver", cpu_anchor),
    )
    figure(
        "orchestrator CPU per call (whole pass minus the anchor's)",
        cpu - cpu_anchor,
        "µs",
        goal=(f"< {GOAL_US:.0f} µs", cpu - cpu_anchor < GOAL_US),
    )
    call_us = [ns / 1000 for p in ours for ns in p.call_ns]
    anchor_us = [ns / 1000 for p in anchors for ns in p.call_ns]
    figure(
        "announce() call, median",
        median(call_us),
        "µs",
        anchor=("Queue put+get", median(anchor_us)),
        precision=2,
    )
    figure(
        "announce() call, p99",
        percentile(call_us, 99),
        "µs",
        anchor=("Queue put+get", percentile(anchor_us, 99)),
        precision=2,
    )
    peak = await peak_memory(calls, real=args.real)
    figure("peak memory (tracemalloc)", peak / 1024, "KiB")
    summary = ours[-1].summary or {}
    report(
        f"utterances spoken: {ours[-1].spoken} for {CALLS} calls "
        f"(coalesced {summary['coalesced']}, dropped {summary['dropped']})"
    )


if __name__ == "__main__":
    asyncio.run(main())
