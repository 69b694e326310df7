"""What a person in the room heard: the speaker's sound, as phrases with their times.

``devstack.room.Room`` keeps everything its speaker played with the loop time it
arrived. An ear lays that out on one timeline, splits it where the speaker was
quiet for ``GAP_S`` or more (Piper's pauses between sentences are shorter;
a pause, a flush or the end of an answer are longer) and transcribes each
phrase with whisper tiny.en (``devstack.speech.transcribe``). A test asserts
what was heard, in what order and with what gaps (``assert_heard``), not only
that something was done.

The ear listens to the speaker itself, not through the room: a person hears
a reverberant room, but understands it as well as the dry sound, and whisper
tiny.en does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import difflib
import re
from typing import Protocol

import numpy as np

from devstack import speech
from devstack.room_presets import RATE

GAP_S = 0.3  # quiet this long splits two phrases
FRAME = 160  # 10 ms
QUIET = 327  # a 10 ms frame whose peak is below this (-40 dBFS) is quiet
MIN_RATIO = 0.8  # the words of a phrase match the expected ones this well


class Speaker(Protocol):
    """What an ear listens to: ``devstack.room.Room``."""

    speaker: list[tuple[float, np.ndarray]]  # (arrival, int16 samples)


@dataclass(frozen=True, slots=True)
class Phrase:
    """Speech with no quiet of ``GAP_S`` in it, from ``start`` to ``end`` (loop time)."""

    text: str
    start: float
    end: float

    def __str__(self) -> str:
        """Times and text, as a failure message lists them: ``[12.34-15.60] Hi.``."""
        return f"[{self.start:.2f}-{self.end:.2f}] {self.text}"


def sounds(
    played: Sequence[tuple[float, np.ndarray]],
    since: float = 0.0,
    gap_s: float = GAP_S,
) -> list[tuple[float, np.ndarray]]:
    """(start, samples) of each sound in ``played`` after loop time ``since``.

    Blocks play as a sound card plays them: back to back, or when they arrive
    if the speaker had run out; a sound ends where ``gap_s`` of quiet (or
    nothing played) begins, and starts and ends at its first and last loud
    10 ms frame.
    """
    blocks = [(at, samples) for at, samples in played if at >= since]
    if not blocks:
        return []
    origin = blocks[0][0]
    starts, end = [], 0
    for at, samples in blocks:
        starts.append(max(round((at - origin) * RATE), end))
        end = starts[-1] + len(samples)
    timeline = np.zeros(end + FRAME, dtype=np.int16)
    for start, (_at, samples) in zip(starts, blocks, strict=True):
        timeline[start : start + len(samples)] = samples
    frames = len(timeline) // FRAME
    peaks = np.abs(timeline[: frames * FRAME].astype(np.int32)).reshape(frames, FRAME)
    loud = np.flatnonzero(peaks.max(axis=1) >= QUIET)
    if not len(loud):
        return []
    gap = round(gap_s * RATE / FRAME)
    splits = np.flatnonzero(np.diff(loud) > gap)
    firsts = np.concatenate([[loud[0]], loud[splits + 1]])
    lasts = np.concatenate([loud[splits], [loud[-1]]])
    return [
        (origin + first * FRAME / RATE, timeline[first * FRAME : (last + 1) * FRAME])
        for first, last in zip(firsts, lasts, strict=True)
    ]


class Ear:
    """A person in ``room``: what it played, as phrases."""

    def __init__(self, room: Speaker) -> None:
        """Listens to ``room.speaker`` (kept by the room as it plays)."""
        self._room = room

    def heard(self, since: float = 0.0) -> list[Phrase]:
        """Every phrase played after loop time ``since``, transcribed, in order."""
        return [
            Phrase(
                speech.transcribe(speech.pad(samples.tobytes(), 0.2, 0.2)),
                start,
                start + len(samples) / RATE,
            )
            for start, samples in sounds(self._room.speaker, since)
        ]


def words(text: str) -> list[str]:
    """Lower-case words without punctuation: what matching compares."""
    return re.findall(r"[a-z0-9']+", text.lower())


def similarity(heard: str, expected: str) -> float:
    """How alike two texts' words are, 0 to 1 (difflib's ratio)."""
    return difflib.SequenceMatcher(None, words(heard), words(expected)).ratio()


def match(
    phrases: Sequence[Phrase], expected: Sequence[str], min_ratio: float = MIN_RATIO
) -> list[Phrase | None]:
    """For each expected text in order, the run of phrases that says it (or None).

    A run is one or more consecutive phrases after the previous match (an
    answer's sentences may be phrases of their own); the best-matching run
    whose words are at least ``min_ratio`` alike wins.
    """
    found: list[Phrase | None] = []
    cursor = 0
    for text in expected:
        best: tuple[float, int, Phrase] | None = None
        for first in range(cursor, len(phrases)):
            for last in range(first, len(phrases)):
                run = phrases[first : last + 1]
                joined = Phrase(
                    " ".join(p.text for p in run), run[0].start, run[-1].end
                )
                ratio = similarity(joined.text, text)
                if ratio >= min_ratio and (best is None or ratio > best[0]):
                    best = (ratio, last + 1, joined)
        if best is None:
            found.append(None)
        else:
            cursor = best[1]
            found.append(best[2])
    return found


def transcript(phrases: Sequence[Phrase]) -> str:
    """Every phrase on a line of its own, with its times and the gap before it."""
    lines, previous = [], None
    for phrase in phrases:
        gap = "" if previous is None else f" (after {phrase.start - previous:.2f} s)"
        lines.append(f"  {phrase}{gap}")
        previous = phrase.end
    return "\n".join(lines) or "  (nothing)"


def assert_heard(
    room: Speaker,
    expected: Sequence[str],
    *,
    since: float = 0.0,
    only: bool = True,
    min_ratio: float = MIN_RATIO,
) -> list[Phrase]:
    """Assert a person in ``room`` heard ``expected``, in that order; the matches.

    ``only``: nothing else was heard either (no phrase outside the matches).
    Words are compared lower-case without punctuation, fuzzily (``min_ratio``),
    so whisper's small slips pass and a lost or extra clause does not. On
    failure the message holds everything heard, with times and gaps.
    """
    phrases = Ear(room).heard(since)
    found = match(phrases, expected, min_ratio)
    problems = [
        f"not heard: {text!r}"
        for text, phrase in zip(expected, found, strict=True)
        if phrase is None
    ]
    if only and not problems:
        covered = [p for p in found if p is not None]
        extra = [
            phrase
            for phrase in phrases
            if not any(m.start <= phrase.start and phrase.end <= m.end for m in covered)
        ]
        problems += [f"heard besides: {phrase}" for phrase in extra]
    assert not problems, (
        "\n".join(problems) + f"\nheard since {since:.2f}:\n" + transcript(phrases)
    )
    return [p for p in found if p is not None]
