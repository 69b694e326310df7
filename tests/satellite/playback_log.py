"""What a Player reports, kept in order: the listener its own tests subscribe."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import NamedTuple


class Progress(NamedTuple):
    """One ``on_progress`` report (samples in the stream's own rate)."""

    stream_id: str
    played: int
    total: int | None
    state: str


@dataclass
class PlaybackLog:
    """``player.subscribe(log)``: every progress report, and when each stream ended."""

    progress: list[Progress] = field(default_factory=list)
    ended_at: dict[str, float] = field(default_factory=dict)  # stream -> loop time
    _ended: asyncio.Event = field(default_factory=asyncio.Event)

    def on_progress(
        self, stream_id: str, played: int, total: int | None, state: str
    ) -> None:
        """Keep the report."""
        self.progress.append(Progress(stream_id, played, total, state))

    def on_played(self, stream_id: str, state: str) -> None:
        """Note when the stream ended (``played`` or ``flushed``)."""
        self.ended_at[stream_id] = asyncio.get_running_loop().time()
        self._ended.set()

    async def wait_ended(self, streams: int) -> None:
        """Until ``streams`` streams have ended."""
        while len(self.ended_at) < streams:
            self._ended.clear()
            await self._ended.wait()
