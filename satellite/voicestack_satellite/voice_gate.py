"""Who is speaking: voiceprints of the voice that interrupted, or of an enrollment.

The GE2E encoder (``voiceprint/``) runs in a worker thread of its own, never
on the event loop: embedding 1.3 s of speech takes ~20 ms on x86-64 and a few
times that on a Pi, during which the mic and the player must keep flowing. The
model is loaded once, on first use (~50 ms). It needs Resemblyzer's weights
(``pip install --no-deps resemblyzer==0.1.4``) and ``webrtcvad-wheels``;
without them ``available`` is False, the satellite says so in ``info``, and
Home Assistant keeps the gate off.

Scores are explained (issue 28): each cosine is also normalized against the
cohort shipped beside the encoder (adaptive s-norm, ``voiceprint/calibration``)
and both go to Home Assistant with the cohort's statistics. The verdict rests on
the raw cosine and Home Assistant's threshold: ``enrolled`` at the threshold or
more, ``unsure`` up to ``UNSURE_BAND`` under it, ``other`` below. Measured on a
family of synthetic voices (bench/gate_family.py), deciding on the s-norm
accepted the user less often in every condition than the cosine, so it
explains the verdict but does not make it. Without the cohort file the
normalized score is the raw one.
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

_LOGGER = logging.getLogger(__name__)

UNSURE_BAND: Final = 0.05  # a cosine this far under the threshold: not sure
# Judged speech shorter than the encoder's one partial window (1.6 s) is looped
# to fill it (``voiceprint.encoder.loop``), not padded with zeros.
LOOP_S: Final = 1.6


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
        _LOGGER.warning("Voice gate without its cohort (raw scores): %s", err)
        return None


class VoiceGate:
    """Embeds speech off the event loop and names the closest enrolled voice."""

    def __init__(self) -> None:
        """Nothing loaded until the first ``embed``."""
        self.available = gate_available()
        self._encoder: SpeakerEncoder | None = None
        self._cohort = _load_cohort()
        self._stats_of: np.ndarray | None = None
        self._stats: list[CohortStats] = []
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="voicestack-gate")

    async def embed(
        self, samples: np.ndarray, *, loop_s: float | None = None
    ) -> np.ndarray:
        """The unit voiceprint of 16 kHz ``samples``.

        ``loop_s``: speech shorter than this is looped to it, never padded with
        zeros (``voiceprint.encoder.loop``). Raises ``voiceprint.NoSpeechError``
        when nothing is left once silences are trimmed, ``WeightsMissingError``
        when the gate is not installed.
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, self._embed, samples, loop_s)

    async def whose(
        self,
        samples: np.ndarray,
        people: tuple[str, ...],
        voiceprints: np.ndarray | None,
        threshold: float,
    ) -> GateVerdict:
        """``judge`` the voice in ``samples`` (verdict "other" if it holds none).

        The speech is looped to ``LOOP_S``: a short command ("Turn on the fan.",
        0.8 s) padded with zeros scored 0.64 against its own speaker's
        voiceprint in a reverberant room, 0.71 looped, while other voices kept
        their scores (bench/gate_rooms.py). Enrollment phrases are embedded as
        they are: looping them too took the user less often, others more.
        """
        try:
            embedding = await self.embed(samples, loop_s=LOOP_S)
        except NoSpeechError:
            return GateVerdict("other", None, None, None)
        return self.judge(embedding, people, voiceprints, threshold)

    def _embed(self, samples: np.ndarray, loop_s: float | None = None) -> np.ndarray:
        if self._encoder is None:
            self._encoder = SpeakerEncoder.from_resemblyzer()
        return self._encoder.embed_pcm(samples, loop_s=loop_s)

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

        ``threshold``: the raw cosine at which a voice is the enrolled person.
        """
        if voiceprints is None or not people:
            return GateVerdict("other", None, None, None)
        raws = voiceprints @ embedding
        best = int(np.argmax(raws))
        raw = float(raws[best])
        if self._cohort is None:
            score = Score(raw, raw, CohortStats(0.0, 1.0), CohortStats(0.0, 1.0))
        else:
            enrolled = self._enrolled_stats(voiceprints)[best]
            score = Cohort.score(raw, enrolled, self._cohort.stats(embedding))
        verdict = self.verdict_of(raw, threshold)
        person = people[best] if verdict == "enrolled" else None
        return GateVerdict(verdict, person, people[best], score)

    def cohort_stats(self, embedding: np.ndarray) -> CohortStats | None:
        """How ``embedding`` scores against its closest cohort voices (None: no cohort)."""
        return None if self._cohort is None else self._cohort.stats(embedding)

    @staticmethod
    def verdict_of(raw: float, threshold: float) -> str:
        """The band a cosine falls in against ``threshold``: enrolled, unsure, other."""
        if raw >= threshold:
            return "enrolled"
        return "unsure" if raw >= threshold - UNSURE_BAND else "other"

    def close(self) -> None:
        """Stop the worker thread."""
        self._worker.shutdown(wait=True)
