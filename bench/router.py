"""Frame-stack router: dispatch cost per utterance and memory per frame.

Dispatch: a ``FrameStack`` with a 6-frame stack holding 200 rules of every sync
type — the base frame has 120 exact shortcut rules, 20 regular expressions, 10
prefix phrases and a top-only agent catch-all; five frames above it carry 4 to 14
rules each (exact sets, phrases, regexes) and all end in ``CHECK_PARENT``, the
second one with a catch-all after it, as a query frame has. Actions return a
constant ``Outcome``, so the stack stays as it is and every utterance is
measured against the same rules. The utterances cycle through what really
happens: a word of the top frame, shortcuts that walk all six frames to the base
(early, late), a regex near the end of the base, a prefix phrase, content that
the base declines and the second frame's catch-all takes (the longest walk), a
long sentence, and noise. Each call is ``await router.dispatch(text)`` timed with
``perf_counter_ns``, normalization included; median and p99 over all calls.
Goal: median < 50 µs.

Anchor, measured in the same run on the same utterances: a plain dict lookup of
the lower-cased text plus one compiled regex ``fullmatch`` — the least a flat
if-chain could do.

Also: the built-in ``VoiceRouter`` (always-listening, a query open) appending
content and answering the mode query, for scale.

Memory per frame (``tracemalloc``, 1000 frames each): the built-in query,
dictation (10 utterances gathered), confirm and voice picker (4 voices) frames;
plans are shared per kind, so a frame costs its state. Anchor: a bare object
with an instance dict and an empty list.

    .venv/bin/python -m bench.router [--calls 20000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from pathlib import Path
import re
import statistics
import sys
import time
import tracemalloc

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import figure, header, median, report
from custom_components.voicestack.core.clock import LoopClock
from custom_components.voicestack.core.router import (
    CHECK_PARENT,
    CatchAllRule,
    ExactRule,
    Frame,
    FrameStack,
    Hooks,
    Outcome,
    PhraseRule,
    RegexRule,
    Rule,
    Voice,
    VoiceRouter,
)
from custom_components.voicestack.core.router.builtin import FrameKit, Settings

GOAL_US = 50.0
_DONE = Outcome(reason="bench")


def _done(_hit: object) -> Outcome:
    return _DONE


def _frame(name: str, rules: list[Rule]) -> Frame:
    return Frame(name, rules)


def build_stack() -> tuple[FrameStack, int]:
    """The 6-frame, 200-rule stack; the rule count (checked)."""
    base = [
        *(
            ExactRule(f"shortcut{i}", [f"shortcut number {i}"], _done)
            for i in range(120)
        ),
        *(
            RegexRule(
                f"regex{i}",
                rf"(set|start) timer {i} for (\d+) (minutes|seconds)",
                _done,
            )
            for i in range(20)
        ),
        *(PhraseRule(f"prefix{i}", [f"run scene {i}"], _done) for i in range(10)),
        CatchAllRule("agent", _done, top_only=True),
    ]
    frames = [_frame("base", base)]
    shapes = [  # (exact, phrase, regex, catch-all after CHECK_PARENT)
        (8, 0, 4, True),
        (8, 3, 2, False),
        (6, 0, 2, False),
        (5, 0, 1, False),
        (3, 0, 1, False),
    ]
    for level, (exact, phrase, regex, catch_all) in enumerate(shapes, start=1):
        name = f"f{level}"
        rules: list[Rule] = [
            *(
                ExactRule(f"{name}w{i}", [f"{name} word {i}"], _done)
                for i in range(exact)
            ),
            *(
                PhraseRule(f"{name}p{i}", [f"{name} phrase {i}"], _done)
                for i in range(phrase)
            ),
            *(
                RegexRule(f"{name}r{i}", rf"{name} pattern {i} (\w+)", _done)
                for i in range(regex)
            ),
            CHECK_PARENT,
        ]
        if catch_all:
            rules.append(CatchAllRule(f"{name}append", _done))
        frames.append(_frame(name, rules))
    router = FrameStack(frames[0], clock=LoopClock(), name="bench")
    for frame in frames[1:]:
        router.push(frame)
    return router, sum(len(frame.plan) for frame in frames)


UTTERANCES: tuple[tuple[str, str], ...] = (  # (text, who should take it)
    ("f5 word 2", "f5/f5w2"),
    ("Shortcut number 3.", "base/shortcut3"),
    ("shortcut number 117", "base/shortcut117"),
    ("Start timer 19 for twenty five minutes", "base/regex19"),
    ("run scene 7 in the living room", "base/prefix7"),
    ("buy milk and eggs", "f1/f1append"),
    (
        (
            "Okay so tomorrow I need to call the plumber about the leaking tap in"
            " the upstairs bathroom before nine"
        ),
        "f1/f1append",
    ),
    ("f2 phrase 1 and more", "f2/f2p1"),
    ("[BLANK_AUDIO]", "f5/none"),
)


def anchor_step(
    table: dict[str, str], pattern: re.Pattern[str]
) -> Callable[[str], object]:
    """A dict lookup plus one compiled regex match."""

    def step(text: str) -> object:
        key = text.lower()
        return table.get(key) or pattern.fullmatch(key)

    return step


async def time_dispatch(router: FrameStack, texts: Sequence[str]) -> list[float]:
    """µs per dispatch, one sample per call."""
    samples = []
    clock = time.perf_counter_ns
    for text in texts:
        began = clock()
        await router.dispatch(text)
        samples.append((clock() - began) / 1000)
    return samples


def time_anchor(step: Callable[[str], object], texts: Sequence[str]) -> list[float]:
    """µs per anchor step."""
    samples = []
    clock = time.perf_counter_ns
    for text in texts:
        began = clock()
        step(text)
        samples.append((clock() - began) / 1000)
    return samples


def p99(samples: Sequence[float]) -> float:
    """The 99th percentile."""
    return statistics.quantiles(samples, n=100)[98]


async def verify(router: FrameStack) -> None:
    """Every utterance is taken where the bench says (the figures mean something)."""
    for text, expected in UTTERANCES:
        decision = await router.dispatch(text)
        assert f"{decision.frame}/{decision.rule}" == expected, decision.explain()


async def builtin_samples(calls: int) -> tuple[list[float], list[float]]:
    """The built-in router: query content appended, and the mode query via the base."""
    router = VoiceRouter(
        Settings(query_silence_s=None), Hooks(), clock=LoopClock(), name="bench"
    )
    await router.dispatch("always listen")
    await router.dispatch("okay nabu")
    appended = await time_dispatch(router.frames, ["turn on the kitchen light"] * calls)
    mode = await time_dispatch(router.frames, ["what mode"] * calls)
    await router.close()
    return appended, mode


def bytes_per(make: Callable[[], object], count: int = 1000) -> float:
    """Average tracemalloc growth per object made and kept."""
    kept: list[object] = []
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept.extend(make() for _ in range(count))
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return grown / count


class _Bare:
    def __init__(self) -> None:
        self.items: list[str] = []


def memory() -> None:
    """Memory per built-in frame, against a bare stateful object."""
    kit = FrameKit(Settings(), Hooks())
    voices = [
        Voice(f"v{i}", name) for i, name in enumerate(("Lessac", "Amy", "Alba", "Ryan"))
    ]

    def dictation() -> Frame:
        frame = kit.gathering("dictation")
        frame.items.extend(
            f"dictated sentence number {i} with some words" for i in range(10)
        )
        return frame

    anchor = bytes_per(_Bare)
    makers: dict[str, Callable[[], object]] = {
        "query frame (empty)": lambda: kit.gathering("query"),
        "dictation frame (10 utterances)": dictation,
        "confirm frame": lambda: kit.confirm("Should I?", lambda: None),
        "voice picker (4 voices)": lambda: kit.voice_picker(voices),
    }
    for name, make in makers.items():
        figure(
            f"memory per {name}",
            bytes_per(make),
            "B",
            anchor=("bare object + list", anchor),
            precision=0,
        )


async def main(calls: int, runs: int) -> None:
    """Measure and report."""
    header("Frame-stack router")
    router, rules = build_stack()
    assert rules == 200, rules
    await verify(router)
    texts = [UTTERANCES[i % len(UTTERANCES)][0] for i in range(calls)]
    table = {f"shortcut number {i}": f"shortcut{i}" for i in range(120)}
    step = anchor_step(
        table, re.compile(r"(set|start) timer 19 for (\d+) (minutes|seconds)")
    )
    report(
        f"stack: {len(router.stack)} frames, {rules} rules; {calls} utterances per run"
    )

    medians, tails, anchor_medians, anchor_tails = [], [], [], []
    for _ in range(runs):  # alternate, so drifting load hits both alike
        await time_dispatch(router, texts[: calls // 10])  # warm-up
        samples = await time_dispatch(router, texts)
        anchor = time_anchor(step, texts)
        medians.append(statistics.median(samples))
        tails.append(p99(samples))
        anchor_medians.append(statistics.median(anchor))
        anchor_tails.append(p99(anchor))
    dispatch_median = median(medians)
    figure(
        "dispatch median",
        dispatch_median,
        "µs",
        anchor=("dict lookup + 1 regex", median(anchor_medians)),
        goal=(f"< {GOAL_US:g} µs", dispatch_median < GOAL_US),
        precision=2,
    )
    figure(
        "dispatch p99",
        median(tails),
        "µs",
        anchor=("dict lookup + 1 regex", median(anchor_tails)),
        precision=2,
    )
    for text, expected in UTTERANCES:
        one = await time_dispatch(router, [text] * (calls // 10))
        report(
            f"  {expected:<16} median {statistics.median(one):6.2f} µs  {text[:40]!r}"
        )

    appended, mode = await builtin_samples(calls)
    report(
        f"built-in router (query open): append median {statistics.median(appended):.2f} µs,"
        f" p99 {p99(appended):.2f} µs; mode query via base median"
        f" {statistics.median(mode):.2f} µs, p99 {p99(mode):.2f} µs"
    )
    memory()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20000)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.runs))
