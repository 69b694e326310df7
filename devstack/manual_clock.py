"""A clock that moves only when the caller says so (implements core.clock.Clock).

Tests of the core and the announcer benchmark drive time with it, so timing is exact.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import heapq
import itertools


@dataclass(order=True)
class _Timer:
    due: float
    order: int
    callback: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        """Do not run it."""
        self.cancelled = True


class ManualClock:
    """``advance`` runs due callbacks in time order, at their due time."""

    def __init__(self, start: float = 1000.0) -> None:
        """Time starts at ``start`` seconds."""
        self._now = start
        self._timers: list[_Timer] = []
        self._order = itertools.count()

    def now(self) -> float:
        """The current manual time."""
        return self._now

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> _Timer:
        """Schedule ``callback`` ``delay_s`` from now."""
        timer = _Timer(self._now + max(0.0, delay_s), next(self._order), callback)
        heapq.heappush(self._timers, timer)
        return timer

    def advance(self, seconds: float) -> None:
        """Move time forward, running every callback that falls due on the way."""
        target = self._now + seconds
        while self._timers and self._timers[0].due <= target:
            timer = heapq.heappop(self._timers)
            if not timer.cancelled:
                self._now = timer.due
                timer.callback()
        self._now = target

    @property
    def pending(self) -> int:
        """Scheduled callbacks not yet run or cancelled."""
        return sum(not t.cancelled for t in self._timers)
