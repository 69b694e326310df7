"""The satellite's one retry delay: 1 s, doubling to 30 s, back to 1 s on success.

Used wherever the satellite tries again on its own: the mic command that died
(``mic.py``) and the Wyoming services it connects to (``service_link.py``).

No jitter, unlike Home Assistant's side (``custom_components/voicestack/core/
backoff.py``, which spreads the reconnects of every satellite after a restart):
here one satellite retries its own recorder and its own services, so there is
no crowd to spread. The satellite is a separate install and does not import
the integration, hence a module of its own.
"""

from __future__ import annotations

import asyncio

START_S = 1.0
MAX_S = 30.0


class Backoff:
    """The delay before the next attempt; ``wait`` sleeps it and doubles it."""

    def __init__(self, start_s: float = START_S, max_s: float = MAX_S) -> None:
        """Delays from ``start_s``, doubling up to ``max_s``."""
        self.start_s = start_s
        self.max_s = max_s
        self.delay_s = start_s

    def reset(self) -> None:
        """An attempt worked: the next wait is the shortest again."""
        self.delay_s = self.start_s

    async def wait(self) -> None:
        """Sleep the current delay, then make the next one twice as long."""
        await asyncio.sleep(self.delay_s)
        self.delay_s = min(self.delay_s * 2, self.max_s)
