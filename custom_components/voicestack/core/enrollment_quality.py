"""How good an enrollment is, from how its phrases were heard (issue 28).

A voiceprint made from phrases that were cut short, too soft, or said over a
fan or a TV gates worse: the user is refused more often, and a similar voice
may pass. The satellite says per phrase how much speech it heard, at what
level, how far over the quiet around it, and how the phrase scored against
the voice gate's cohort (voices nobody enrolls); this turns that into
warnings and one figure, the **margin**: how many of the cohort's standard
deviations each phrase stands closer to the person's own voiceprint than to
its closest cohort voices (s-norm of the phrase against the voiceprint,
averaged). A voice that sounds like many others, or phrases that do not sound
alike, have a small margin.

The limits are the satellite's own measure of a phrase (``enroller.py``):
under ``SHORT_S`` of speech (the gate needs 1.3 s), speech under
``QUIET_DBFS`` (the harness's voices arrive at about -26 dBFS), less than
``NOISY_DB`` over the room. The margin's bands come from bench/gate_family.py's
voices (3 to 22; 4 for a voice close to the cohort's own espeak-ng voices).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
import math
from typing import Any, Final

from voicestack_protocol import PhraseHeard

SHORT_S: Final = 1.5  # less speech than this in a phrase: "too short"
QUIET_DBFS: Final = -40.0  # speech softer than this: "too quiet"
NOISY_DB: Final = 15.0  # speech less than this over the room's noise: "too noisy"
ALIKE: Final = 0.80  # a phrase scoring under this against the voiceprint: "unlike"
GOOD_MARGIN: Final = 8.0
FAIR_MARGIN: Final = 4.0


@dataclass(frozen=True, slots=True)
class EnrollmentQuality:
    """Warnings (phrase numbers per kind) and the margin with its rating."""

    short: tuple[int, ...]  # 1-based numbers of the phrases with too little speech
    quiet: tuple[int, ...]
    noisy: tuple[int, ...]
    unlike: tuple[int, ...]  # phrases that do not sound like the others
    margin: float | None  # None: the satellite has no cohort (an older one)
    rating: str  # "good", "fair", "poor", "unknown"

    @property
    def warnings(self) -> list[str]:
        """The kinds of trouble found, in a fixed order."""
        kinds = ("short", "quiet", "noisy", "unlike")
        return [kind for kind in kinds if getattr(self, kind)]

    def as_dict(self) -> dict[str, Any]:
        """For an action's response: every figure, phrase numbers per warning."""
        return {
            "rating": self.rating,
            "margin": None if self.margin is None else round(self.margin, 1),
            "warnings": {kind: list(getattr(self, kind)) for kind in self.warnings},
        }


def assess(
    embeddings: Sequence[Sequence[float]],
    seconds: Sequence[float],
    heard: Sequence[PhraseHeard],
) -> EnrollmentQuality:
    """The quality of an enrollment of ``embeddings`` (unit vectors, one per phrase)."""
    voiceprint = _unit_mean(embeddings)
    alike = [_dot(e, voiceprint) for e in embeddings]
    numbered = list(enumerate(zip(seconds, heard, alike, strict=True), 1))
    margins = [
        (score - h.cohort_mean) / h.cohort_std
        for _, (_, h, score) in numbered
        if h.cohort_mean is not None and h.cohort_std
    ]
    margin = sum(margins) / len(margins) if margins else None
    if margin is None:
        rating = "unknown"
    elif margin >= GOOD_MARGIN:
        rating = "good"
    else:
        rating = "fair" if margin >= FAIR_MARGIN else "poor"
    return EnrollmentQuality(
        short=tuple(n for n, (s, _, _) in numbered if s < SHORT_S),
        quiet=tuple(
            n
            for n, (_, h, _) in numbered
            if h.level_dbfs is not None and h.level_dbfs < QUIET_DBFS
        ),
        noisy=tuple(
            n
            for n, (_, h, _) in numbered
            if h.snr_db is not None and h.snr_db < NOISY_DB
        ),
        unlike=tuple(n for n, (_, _, a) in numbered if a < ALIKE),
        margin=margin,
        rating=rating,
    )


def _unit_mean(embeddings: Sequence[Sequence[float]]) -> list[float]:
    mean = [sum(column) / len(embeddings) for column in zip(*embeddings, strict=True)]
    norm = math.sqrt(sum(v * v for v in mean)) or 1.0
    return [v / norm for v in mean]


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))
