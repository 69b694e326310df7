"""Where a barge-in is, and its timings counted in the VAD's 10 ms windows."""

from __future__ import annotations

from enum import Enum

from .audio import RATE
from .echo_path import SETTLE_S
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


class Playback:
    """Where the run of playback going on began, on the mic's timeline.

    A run begins when the player plays after silence (an answer, a resume):
    for its first ``SETTLE_S`` AEC3 is finding the echo again (``echo_path``)
    and leaves it loud enough to pause the answer now and then (the first
    answer after a start, 0.07-0.15 s in, 4 runs in 6 on a loaded machine):
    such a pause is judged on the playing terms, or its echo becomes a report.
    """

    def __init__(self) -> None:
        """Nothing playing."""
        self.since: int | None = None

    def heard(self, playing: bool, at: int) -> None:
        """The mic chunk from mic sample ``at`` on; ``playing``: the player plays."""
        if not playing:
            self.since = None
        elif self.since is None:
            self.since = at

    def settled(self, at: int) -> bool:
        """Whether the run had played ``SETTLE_S`` by mic sample ``at``."""
        return self.since is not None and at - self.since >= SETTLE_S * RATE
