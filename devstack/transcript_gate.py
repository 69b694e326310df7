"""A speech-to-text server that answers late, when a test says so.

A Wyoming proxy on loopback in front of a real speech-to-text server: everything
passes through both ways, except that while the gate is closed the server's
``transcript`` events are held. A test closes it to stand for a CPU too loaded
to transcribe in time (a Pi 4 running Home Assistant), then opens it at the
moment that matters, e.g. while the next utterance is streaming.
"""

from __future__ import annotations

import asyncio
import contextlib

from wyoming.event import async_read_event, async_write_event

TRANSCRIPT = "transcript"


class TranscriptGate:
    """Listens on a free loopback port while entered; ``host``/``port`` as a server."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        """Proxy for the server at ``upstream_host``:``upstream_port``; open."""
        self.host = "127.0.0.1"
        self.port = 0
        self._upstream = (upstream_host, upstream_port)
        self._open = asyncio.Event()
        self._open.set()
        self.held = 0  # transcripts that waited for the gate
        self._server: asyncio.Server | None = None
        self._pumps: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> TranscriptGate:
        """Listen on a free port."""
        self._server = await asyncio.start_server(self._serve, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Stop listening and drop every connection."""
        assert self._server is not None
        self._server.close()
        for pump in self._pumps:
            pump.cancel()
        await asyncio.gather(*self._pumps, return_exceptions=True)
        await self._server.wait_closed()

    def close(self) -> None:
        """Hold transcripts from now on."""
        self._open.clear()

    def open(self) -> None:
        """Let held and later transcripts through."""
        self._open.set()

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        up_reader, up_writer = await asyncio.open_connection(*self._upstream)
        pumps = {
            asyncio.create_task(self._pump(reader, up_writer, hold=False)),
            asyncio.create_task(self._pump(up_reader, writer, hold=True)),
        }
        self._pumps |= pumps
        try:
            await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pump in pumps:
                pump.cancel()
            self._pumps -= pumps
            writer.close()
            up_writer.close()

    async def _pump(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, hold: bool
    ) -> None:
        with contextlib.suppress(ConnectionError):
            while (event := await async_read_event(reader)) is not None:
                if hold and event.type == TRANSCRIPT and not self._open.is_set():
                    self.held += 1
                    await self._open.wait()
                await async_write_event(event, writer)
