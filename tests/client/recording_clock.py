"""A manual clock that also remembers every delay it was asked to wait."""

from __future__ import annotations

from collections.abc import Callable

from devstack.manual_clock import ManualClock
from voicestack_client.clock import Cancellable


class RecordingClock(ManualClock):
    """``ManualClock`` (time moves only on ``advance``) plus ``delays`` asked for."""

    def __init__(self, start: float = 1000.0) -> None:
        """Time starts at ``start``; no delays yet."""
        super().__init__(start)
        self.delays: list[float] = []

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancellable:
        """Schedule as ``ManualClock`` does, and record ``delay_s``."""
        self.delays.append(delay_s)
        return super().call_later(delay_s, callback)
