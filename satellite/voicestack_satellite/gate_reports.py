"""Barge-in's reports from the voice gate's own objects, and its voiceprints.

voicestack-protocol defines the events (``voicestack-voice``,
``voicestack-voiceprint``, ``voicestack-barge-in-config``) with plain tuples;
the satellite's gate works in numpy and its calibration's types. This is the
satellite's side of that seam: it rounds what goes on the wire and stacks the
owner's voiceprints into the unit rows the gate compares against.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from wyoming.event import Event

from voicestack_protocol import (
    PhraseHeard,
    Voiceprint,
    VoiceprintReport,
    VoiceReport,
    voice_event,
    voiceprint_event,
)

from .voiceprint.calibration import CohortStats

if TYPE_CHECKING:
    from .voice_gate import GateVerdict


def verdict_event(stream: str, verdict: GateVerdict, seconds: float) -> Event:
    """The gate's verdict on the voice that paused ``stream``, and why.

    ``score`` stays the raw cosine (as before issue 28); ``normalized`` and
    ``cohort`` explain the band ``verdict`` (enrolled, unsure, other).
    """
    score = verdict.score
    cohort: tuple[tuple[str, float], ...] = ()
    if score is not None:
        cohort = (
            ("enrolled_mean", round(score.enrolled.mean, 4)),
            ("enrolled_std", round(score.enrolled.std, 4)),
            ("test_mean", round(score.test.mean, 4)),
            ("test_std", round(score.test.std, 4)),
        )
    return voice_event(
        VoiceReport(
            stream=stream,
            person=verdict.person,
            score=None if score is None else round(score.raw, 4),
            seconds=round(seconds, 3),
            verdict=verdict.verdict,
            normalized=None if score is None else round(score.normalized, 3),
            closest=verdict.closest,
            cohort=cohort,
        )
    )


@dataclass(frozen=True, slots=True)
class PhraseQuality:
    """How an enrollment phrase was heard (issue 28): loud enough, over what noise.

    ``level_dbfs``: the mean power of the speech windows; ``snr_db``: that over
    the room (the 10th percentile of every window's power); ``cohort``: the
    phrase's embedding against the gate's cohort (None: no cohort).
    """

    level_dbfs: float
    snr_db: float
    cohort: CohortStats | None

    def heard(self) -> PhraseHeard:
        """What ``voicestack-voiceprint`` carries of it."""
        return PhraseHeard(
            level_dbfs=round(self.level_dbfs, 1),
            snr_db=round(self.snr_db, 1),
            cohort_mean=None if self.cohort is None else round(self.cohort.mean, 4),
            cohort_std=None if self.cohort is None else round(self.cohort.std, 4),
        )


def phrase_event(
    enroll_id: str,
    embedding: np.ndarray | None = None,
    seconds: float = 0.0,
    error: str | None = None,
    quality: PhraseQuality | None = None,
) -> Event:
    """One phrase's voiceprint, or ``error`` (one of VOICEPRINT_ERRORS)."""
    if embedding is None:
        return voiceprint_event(VoiceprintReport(enroll_id, None, None, error))
    return voiceprint_event(
        VoiceprintReport(
            enroll_id,
            tuple(round(float(v), 6) for v in embedding),
            round(seconds, 3),
            None,
            quality.heard() if quality else PhraseHeard(),
        )
    )


def voiceprint_rows(
    voiceprints: tuple[Voiceprint, ...],
) -> tuple[tuple[str, ...], np.ndarray | None]:
    """The people, and their voiceprints as unit rows (None: nobody enrolled).

    The protocol refuses an all-zero embedding, so every row has a length.
    """
    if not voiceprints:
        return (), None
    matrix = np.array([v.embedding for v in voiceprints], dtype=np.float32)
    rows = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    return tuple(v.person for v in voiceprints), rows
