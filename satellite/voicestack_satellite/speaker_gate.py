"""Who is speaking: voiceprints of the voice that interrupted, or of an enrollment.

The GE2E encoder (``voiceprint/``) runs in a worker thread of its own, never
on the event loop: embedding 1.3 s of speech takes ~20 ms on x86-64 and a few
times that on a Pi, during which the mic and the player must keep flowing. The
model is loaded once, on first use (~50 ms). It needs Resemblyzer's weights
(``pip install --no-deps resemblyzer==0.1.4``) and ``webrtcvad-wheels``;
without them ``available`` is False, the satellite says so in ``info``, and
Home Assistant keeps the gate off.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
import importlib.util
import logging

import numpy as np

from .voiceprint import (
    NoSpeechError,
    SpeakerEncoder,
    WeightsMissingError,
    resemblyzer_weights_path,
)

_LOGGER = logging.getLogger(__name__)


def gate_available() -> bool:
    """Whether the weights and webrtcvad are installed (checked without loading)."""
    try:
        resemblyzer_weights_path()
    except WeightsMissingError:
        return False
    return importlib.util.find_spec("webrtcvad") is not None


class SpeakerGate:
    """Embeds speech off the event loop and names the closest enrolled voice."""

    def __init__(self) -> None:
        """Nothing loaded until the first ``embed``."""
        self.available = gate_available()
        self._encoder: SpeakerEncoder | None = None
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="voicestack-gate")

    async def embed(self, samples: np.ndarray) -> np.ndarray:
        """The unit voiceprint of 16 kHz ``samples``.

        Raises ``voiceprint.NoSpeechError`` when nothing is left once silences
        are trimmed, ``WeightsMissingError`` when the gate is not installed.
        """
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._worker, self._embed, samples)

    async def whose(
        self,
        samples: np.ndarray,
        people: tuple[str, ...],
        voiceprints: np.ndarray | None,
        threshold: float,
    ) -> tuple[str | None, float | None]:
        """``closest`` for the voice in ``samples``; (None, None) if it holds none."""
        try:
            embedding = await self.embed(samples)
        except NoSpeechError:
            return None, None
        return self.closest(embedding, people, voiceprints, threshold)

    def _embed(self, samples: np.ndarray) -> np.ndarray:
        if self._encoder is None:
            self._encoder = SpeakerEncoder.from_resemblyzer()
        return self._encoder.embed_pcm(samples)

    @staticmethod
    def closest(
        embedding: np.ndarray,
        people: tuple[str, ...],
        voiceprints: np.ndarray | None,
        threshold: float,
    ) -> tuple[str | None, float | None]:
        """The enrolled person most like ``embedding`` if at ``threshold``, and the score.

        (None, None) when nobody is enrolled.
        """
        if voiceprints is None or not people:
            return None, None
        scores = voiceprints @ embedding
        best = int(np.argmax(scores))
        score = float(scores[best])
        return (people[best] if score >= threshold else None), score

    def close(self) -> None:
        """Stop the worker thread."""
        self._worker.shutdown(wait=True)
