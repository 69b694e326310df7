"""Waiting for a condition with a bound, never "sleep and hope"."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def wait_for(
    condition: Callable[[], bool],
    timeout_s: float,
    what: str,
    *,
    interval_s: float = 0.05,
) -> None:
    """Poll ``condition`` every ``interval_s`` while the loop keeps running.

    The deadline is the event loop's clock, so a loop with virtual time waits in
    virtual seconds. Raises TimeoutError naming ``what`` after ``timeout_s``.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while not condition():
        if loop.time() > deadline:
            raise TimeoutError(f"{what} not within {timeout_s:g} s")
        await asyncio.sleep(interval_s)
