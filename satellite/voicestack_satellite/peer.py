"""One TCP connection from a peer (Home Assistant), with safe reads and writes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from wyoming.event import Event, async_write_event

from .wire import MAX_HEADER_BYTES, ProtocolError, read_event

_LOGGER = logging.getLogger(__name__)


class Peer:
    """A connected peer; writes never raise, a dead peer is just closed."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Wrap an accepted connection."""
        self._reader = reader
        self._writer = writer
        host, port = writer.get_extra_info("peername")[:2]
        self.name = f"{host}:{port}"
        self._lock = asyncio.Lock()
        self.closed = False
        self.extensions = False  # sent voicestack-hello: wants our extra events
        self.end_of_speech_s: float | None = None  # asked us to end requests
        self.last_seen = time.monotonic()  # when the peer last sent anything
        reader._limit = MAX_HEADER_BYTES  # noqa: SLF001 - StreamReader has no setter

    async def read(self, max_payload: int) -> Event | None:
        """Next event, or ``None`` when the peer is gone or sent garbage."""
        try:
            event = await read_event(self._reader, max_payload)
        except ProtocolError as err:
            _LOGGER.warning("Dropping connection from %s: %s", self.name, err)
        except (ConnectionError, OSError) as err:
            _LOGGER.info("Connection from %s lost: %s", self.name, err)
        else:
            self.last_seen = time.monotonic()
            return event
        return None

    async def send(self, event: Event) -> None:
        """Write one event; a failed write closes the connection."""
        if self.closed:
            return
        async with self._lock:
            try:
                await async_write_event(event, self._writer)
            except (ConnectionError, OSError) as err:
                _LOGGER.info("Cannot write to %s: %s", self.name, err)
                await self.close()

    async def close(self) -> None:
        """Close the connection (idempotent)."""
        if self.closed:
            return
        self.closed = True
        self._writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await self._writer.wait_closed()
