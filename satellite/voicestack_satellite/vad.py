"""Voice activity detection with pymicro-vad (10 ms windows at 16 kHz)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from pymicro_vad import MicroVad

WINDOW_SAMPLES = 160  # 10 ms: what pymicro-vad judges at a time


class SpeechDetector:
    """Tells, per chunk of any length, whether it holds speech.

    Leftover samples that do not fill a 10 ms window carry over to the next chunk,
    so results do not depend on how the mic happens to chunk its audio.
    """

    def __init__(self, threshold: float = 0.5) -> None:
        """Create the detector; ``threshold`` is the speech probability."""
        self._process_10ms = _new_vad()
        self._threshold = threshold
        self._leftover = np.zeros(0, dtype=np.int16)

    def process(self, samples: np.ndarray) -> tuple[bool, int]:
        """Return (any window was speech, index of the first speech window's end).

        The index is relative to ``samples`` (-1 when no speech).
        """
        audio = np.concatenate([self._leftover, samples])
        usable = len(audio) - len(audio) % WINDOW_SAMPLES
        first = -1
        for start in range(0, usable, WINDOW_SAMPLES):
            window = audio[start : start + WINDOW_SAMPLES].tobytes()
            if self._process_10ms(window) >= self._threshold and first < 0:
                first = max(0, start + WINDOW_SAMPLES - len(self._leftover))
        self._leftover = audio[usable:]
        return first >= 0, first

    def windows(self, samples: np.ndarray) -> list[bool]:
        """Whether each complete 10 ms window (leftovers carried over) is speech."""
        audio = np.concatenate([self._leftover, samples])
        usable = len(audio) - len(audio) % WINDOW_SAMPLES
        self._leftover = audio[usable:]
        return [
            self._process_10ms(audio[start : start + WINDOW_SAMPLES].tobytes())
            >= self._threshold
            for start in range(0, usable, WINDOW_SAMPLES)
        ]

    def reset(self) -> None:
        """Forget state between utterances."""
        self._process_10ms = _new_vad()
        self._leftover = np.zeros(0, dtype=np.int16)


def _new_vad() -> Callable[[bytes], float]:
    """A fresh detector's 10 ms function (a new one is cheaper than a reset).

    pymicro-vad 2.x names it ``process_10ms``; 1.0.1 (Home Assistant's pin) exposes
    the C++ class's ``Process10ms``. Same 10 ms in, probability out.
    """
    vad = MicroVad()
    process: Callable[[bytes], float] = (
        getattr(vad, "process_10ms", None) or vad.Process10ms
    )
    return process
