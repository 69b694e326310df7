"""An event loop whose clock jumps to the next timer instead of waiting for it.

Code paced by ``loop.time()``, ``asyncio.sleep`` and ``asyncio.wait_for`` (the
player) runs unchanged and instantly, and every time it sees is exact: a test of
its arithmetic does not depend on how loaded the machine is.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
import selectors
from typing import Any


class _JumpingSelector(selectors.DefaultSelector):
    """Polls without blocking; a wait for a timer moves the clock to it."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        super().__init__()
        self._loop = loop

    def select(
        self, timeout: float | None = None
    ) -> list[tuple[selectors.SelectorKey, int]]:
        ready = super().select(0)
        if ready or timeout == 0:
            return ready
        if timeout is None:
            raise RuntimeError("virtual time: nothing scheduled, the test would hang")
        self._loop.advance(timeout)
        return ready


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """``time()`` starts at 0 and moves only when every task waits for a timer."""

    def __init__(self) -> None:
        """A loop with its own clock."""
        self._now = 0.0
        super().__init__(_JumpingSelector(self))

    def time(self) -> float:
        """The virtual time in seconds."""
        return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock (the selector does, when the loop would sleep)."""
        self._now += seconds


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to the end in virtual time."""
    loop = VirtualTimeLoop()
    try:
        return loop.run_until_complete(coro)
    finally:
        loop.close()
