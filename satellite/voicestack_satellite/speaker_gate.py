"""Who is speaking: voiceprints of the voice that interrupted, or of an enrollment.

The GE2E encoder (``voiceprint/``) runs in a worker thread of its own, never
on the event loop: embedding 1.3 s of speech takes ~20 ms on x86-64 and a few
times that on a Pi, during which the mic and the player must keep flowing. The
model is loaded once, on first use (~50 ms). It needs Resemblyzer's weights
(``pip install --no-deps resemblyzer==0.1.4``) and ``webrtcvad-wheels``;
without them ``available`` is False, the satellite says so in ``info``, and
Home Assistant keeps the gate off.

Scores are calibrated (issue 28): each cosine is normalized against the
cohort shipped beside the encoder (adaptive s-norm, ``voiceprint/calibration``)
and falls in one of three bands: ``enrolled`` at ``ACCEPT`` or more, ``other``
under ``REJECT``, ``unsure`` between (Home Assistant keeps the answer paused
and takes the speech as a request only if it is a command for the home). The
bands come from bench/gate_family.py. Without the cohort file the raw cosine
and Home Assistant's threshold decide, with two verdicts, as before.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
import importlib.util
import logging
from typing import Final

import numpy as np

from .voiceprint import (
    NoSpeechError,
    SpeakerEncoder,
    WeightsMissingError,
    resemblyzer_weights_path,
)
from .voiceprint.calibration import Cohort, CohortStats, Score
from .voiceprint.enrollment import augment, augmentations, mean_voiceprint

_LOGGER = logging.getLogger(__name__)

ACCEPT: Final = 4.3  # s-norm at or above: the enrolled person
REJECT: Final = 3.3  # s-norm under: someone else; between: not sure


@dataclass(frozen=True, slots=True)
class GateVerdict:
    """Whose voice, and why: the verdict, the closest person, the scores."""

    verdict: str  # "enrolled", "unsure" or "other"
    person: str | None  # the enrolled person taken (verdict "enrolled" only)
    closest: str | None  # the enrolled person scoring best (None: nobody enrolled)
    score: Score | None  # raw and normalized score, cohort statistics


def gate_available() -> bool:
    """Whether the weights and webrtcvad are installed (checked without loading)."""
    try:
        resemblyzer_weights_path()
    except WeightsMissingError:
        return False
    return importlib.util.find_spec("webrtcvad") is not None


def _load_cohort() -> Cohort | None:
    """The shipped cohort, or None (logged) if it is missing or broken."""
    try:
        return Cohort.load()
    except (OSError, ValueError, KeyError) as err:
        _LOGGER.warning("Speaker gate without its cohort (raw scores): %s", err)
        return None


class SpeakerGate:
    """Embeds speech off the event loop and names the closest enrolled voice."""

    def __init__(self) -> None:
        """Nothing loaded until the first ``embed``."""
        self.available = gate_available()
        self._encoder: SpeakerEncoder | None = None
        self._cohort = _load_cohort()
        self._stats_of: np.ndarray | None = None
        self._stats: list[CohortStats] = []
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="voicestack-gate")

    async def embed(self, samples: np.ndarray) -> np.ndarray:
        """The unit voiceprint of 16 kHz ``samples``.

        Raises ``voiceprint.NoSpeechError`` when nothing is left once silences
        are trimmed, ``WeightsMissingError`` when the gate is not installed.
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, self._embed, samples)

    async def embed_enrollment(self, samples: np.ndarray) -> np.ndarray:
        """The voiceprint of one enrollment phrase, covering noise and echo.

        The normalized mean of its embeddings as recorded and with each of
        ``voiceprint.enrollment``'s backgrounds mixed in.
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, self._embed_enrollment, samples)

    async def whose(
        self,
        samples: np.ndarray,
        people: tuple[str, ...],
        voiceprints: np.ndarray | None,
        threshold: float,
    ) -> GateVerdict:
        """``judge`` the voice in ``samples`` (verdict "other" if it holds none)."""
        try:
            embedding = await self.embed(samples)
        except NoSpeechError:
            return GateVerdict("other", None, None, None)
        return self.judge(embedding, people, voiceprints, threshold)

    def _embed(self, samples: np.ndarray) -> np.ndarray:
        if self._encoder is None:
            self._encoder = SpeakerEncoder.from_resemblyzer()
        return self._encoder.embed_pcm(samples)

    def _embed_enrollment(self, samples: np.ndarray) -> np.ndarray:
        return mean_voiceprint(
            [self._embed(augment(samples, name)) for name in augmentations()]
        )

    def _enrolled_stats(self, voiceprints: np.ndarray) -> list[CohortStats]:
        """The cohort statistics of each voiceprint, kept while they stay the same."""
        if self._stats_of is not voiceprints:
            assert self._cohort is not None
            self._stats = self._cohort.stats_of_rows(voiceprints)
            self._stats_of = voiceprints
        return self._stats

    def judge(
        self,
        embedding: np.ndarray,
        people: tuple[str, ...],
        voiceprints: np.ndarray | None,
        threshold: float,
    ) -> GateVerdict:
        """The enrolled person most like ``embedding``, and the verdict's band.

        ``threshold`` (a raw cosine) decides only without the cohort.
        """
        if voiceprints is None or not people:
            return GateVerdict("other", None, None, None)
        raws = voiceprints @ embedding
        if self._cohort is None:
            best = int(np.argmax(raws))
            raw = float(raws[best])
            taken = raw >= threshold
            return GateVerdict(
                "enrolled" if taken else "other",
                people[best] if taken else None,
                people[best],
                Score(raw, raw, CohortStats(0.0, 1.0), CohortStats(0.0, 1.0)),
            )
        test = self._cohort.stats(embedding)
        scores = [
            Cohort.score(float(raw), enrolled, test)
            for raw, enrolled in zip(
                raws, self._enrolled_stats(voiceprints), strict=True
            )
        ]
        best = max(range(len(scores)), key=lambda row: scores[row].normalized)
        verdict = self.verdict_of(scores[best].normalized)
        person = people[best] if verdict == "enrolled" else None
        return GateVerdict(verdict, person, people[best], scores[best])

    @staticmethod
    def verdict_of(normalized: float) -> str:
        """The band a normalized score falls in: enrolled, unsure or other."""
        if normalized >= ACCEPT:
            return "enrolled"
        return "unsure" if normalized >= REJECT else "other"

    def close(self) -> None:
        """Stop the worker thread."""
        self._worker.shutdown(wait=True)
