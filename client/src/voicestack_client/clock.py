"""Time for the client's timing decisions, injectable so tests are exact.

Backoff sleeps, the block policy's timeout, ``close``'s deadline and ``ttl``
accounting read and schedule on a ``Clock``; tests pass a manual clock and
move time themselves, so nothing really sleeps. Network I/O keeps aiohttp's
own (real) timeouts.

The same ``Clock`` shape as the integration's ``core/clock.py`` (so one manual
clock, ``devstack/manual_clock.py``, drives both in tests), but a copy of its
own: the client is a standalone package and cannot import the integration.
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
    """Monotonic seconds and delayed callbacks."""

    def now(self) -> float:
        """Monotonic seconds."""

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancellable:
        """Run ``callback`` after ``delay_s`` seconds."""


class EventLoopClock:
    """The running event loop's own time (the default)."""

    def now(self) -> float:
        """``loop.time()`` of the running loop."""
        return asyncio.get_running_loop().time()

    def call_later(self, delay_s: float, callback: Callable[[], None]) -> Cancellable:
        """``loop.call_later`` on the running loop."""
        return asyncio.get_running_loop().call_later(max(0.0, delay_s), callback)


def timer(clock: Clock, delay_s: float) -> tuple[asyncio.Future[None], Cancellable]:
    """A future that completes after ``delay_s`` on ``clock``, and its handle."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def fire() -> None:
        if not done.done():
            done.set_result(None)

    return done, clock.call_later(delay_s, fire)


async def sleep(clock: Clock, delay_s: float) -> None:
    """Wait ``delay_s`` seconds of ``clock``."""
    done, handle = timer(clock, delay_s)
    try:
        await done
    finally:
        handle.cancel()
