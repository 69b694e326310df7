"""Calibrated speaker scores: adaptive s-norm against voices nobody enrolls.

A raw cosine score means different things for different people and rooms: two
male voices may score 0.71 against each other in quiet, while the enrolled
user, talking over the answer's echo residual or a fan, scores 0.65 (issue 28).
Adaptive s-norm (Cumani et al. 2011; Matejka et al. 2017) measures each score
against how the same two embeddings score against a cohort of other voices:

    s_norm = ((s - mean_e) / std_e + (s - mean_t) / std_t) / 2

where ``mean_e``, ``std_e`` are the statistics of the enrolled voiceprint's
``TOP_K`` highest cosine scores against the cohort, and ``mean_t``, ``std_t``
those of the voice being judged. A noisy test embedding scores lower against
everybody, its cohort mean drops with it, and the normalized score keeps its
meaning; a voice that is close to many voices (a generic male voice) needs to
be closer still to be taken for the enrolled one.

The cohort (``cohort.json``) is data, not weights: the voiceprints of
espeak-ng variants (Debian's ``espeak-ng``; none of the voices the benchmark
judges), made once by ``scripts/make_gate_cohort.py`` with this encoder.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path
from typing import Final

import numpy as np

COHORT_PATH: Final = Path(__file__).with_name("cohort.json")
TOP_K: Final = 10  # the cohort's closest voices that set the statistics
MIN_STD: Final = 0.01  # a floor: a cohort that scores all alike divides by little


@dataclass(frozen=True, slots=True)
class CohortStats:
    """Mean and spread of an embedding's ``TOP_K`` highest cohort scores."""

    mean: float
    std: float


@dataclass(frozen=True, slots=True)
class Score:
    """One comparison, explained: the cosine, the normalized score, both cohorts."""

    raw: float
    normalized: float
    enrolled: CohortStats
    test: CohortStats


class Cohort:
    """The cohort's unit voiceprints, and the statistics of scores against them."""

    def __init__(self, embeddings: np.ndarray, top_k: int = TOP_K) -> None:
        """``embeddings``: (voices, 256) rows, normalized here."""
        if embeddings.ndim != 2 or len(embeddings) < top_k:
            raise ValueError(f"a cohort needs at least {top_k} voiceprints")
        norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
        self.embeddings = (embeddings / norms).astype(np.float32)
        self.top_k = top_k

    @classmethod
    def load(cls, path: Path = COHORT_PATH) -> Cohort:
        """The cohort shipped with the satellite (or one at ``path``)."""
        data = json.loads(path.read_text(encoding="utf-8"))
        return cls(np.array([voice["embedding"] for voice in data["voices"]]))

    def stats(self, embedding: np.ndarray) -> CohortStats:
        """How ``embedding`` scores against its ``top_k`` closest cohort voices."""
        scores = self.embeddings @ embedding
        top = np.partition(scores, -self.top_k)[-self.top_k :]
        return CohortStats(float(top.mean()), max(float(top.std()), MIN_STD))

    def stats_of_rows(self, rows: np.ndarray) -> list[CohortStats]:
        """``stats`` of each enrolled voiceprint (computed once per config)."""
        return [self.stats(row) for row in rows]

    @staticmethod
    def score(raw: float, enrolled: CohortStats, test: CohortStats) -> Score:
        """The s-norm of the cosine ``raw`` between an enrolled voice and a test."""
        normalized = (
            (raw - enrolled.mean) / enrolled.std + (raw - test.mean) / test.std
        ) / 2
        return Score(raw, float(normalized), enrolled, test)
