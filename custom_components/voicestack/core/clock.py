"""Time for the HA-free core: read it and schedule on it, never sleep.

Windows, debounces, rate limits and silence timers take a ``Clock`` so tests drive
them with a manual clock, exactly and instantly; in Home Assistant the event
loop's clock is used.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol


class Cancellable(Protocol):
    """A scheduled call that can be called off."""

    def cancel(self) -> None:
        """Do not run it."""


class Clock(Protocol):
    """Monotonic time in seconds and delayed callbacks."""

    def now(self) -> float:
        """Monotonic seconds."""

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` after ``delay_s`` seconds."""


class LoopClock:
    """The running event loop's clock."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        """Use ``loop``, or the running loop at each call."""
        self._loop = loop

    def _get_loop(self) -> asyncio.AbstractEventLoop:
        return self._loop or asyncio.get_running_loop()

    def now(self) -> float:
        """``loop.time()``."""
        return self._get_loop().time()

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancellable:
        """``loop.call_later``."""
        return self._get_loop().call_later(max(0.0, delay_s), callback)
