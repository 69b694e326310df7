"""Where a barge-in is, and its timings counted in the VAD's 10 ms windows."""

from __future__ import annotations

from enum import Enum

from .audio import RATE
from .vad import WINDOW_SAMPLES


def windows(seconds: float) -> int:
    """How many 10 ms VAD windows ``seconds`` is."""
    return max(1, round(seconds * RATE / WINDOW_SAMPLES))


class Phase(Enum):
    """Where a barge-in is."""

    WATCH = "watch"  # listening for speech over an answer
    PAUSED = "paused"  # paused on speech, not yet a barge-in
    WAITING = "waiting"  # reported; capturing, waiting for the owner
    HOLD = "hold"  # resumed over someone else: their speech goes by
