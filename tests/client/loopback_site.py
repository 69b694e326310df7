"""An aiohttp application served on a loopback port that can go down and come back.

The client's reconnect is tested by stopping the server the way a restarting
Home Assistant does (the port closes and every open connection drops) and
starting it again on the same port. Used with the fake Home Assistant of the
unit tests and with the real one's ``hass.http.app``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from aiohttp import web

from devstack.servers import LOOPBACK, free_port


class LoopbackSite:
    """``app`` on ``http://127.0.0.1:<port>``; ``stop`` and ``start`` toggle it."""

    def __init__(self, runner: web.AppRunner, port: int) -> None:
        """Use ``runner`` (set up) on ``port``; not listening yet."""
        self._runner = runner
        self.port = port
        self._site: web.TCPSite | None = None

    @property
    def url(self) -> str:
        """The base address a client is given."""
        return f"http://{LOOPBACK}:{self.port}"

    async def start(self) -> None:
        """Listen on the port (again)."""
        self._site = web.TCPSite(self._runner, LOOPBACK, self.port, reuse_address=True)
        await self._site.start()

    async def stop(self) -> None:
        """Close the port and drop every open connection."""
        if self._site is not None:
            await self._site.stop()
            self._site = None
        assert self._runner.server is not None
        for connection in self._runner.server.connections:
            connection.force_close()


@asynccontextmanager
async def serve(app: web.Application) -> AsyncIterator[LoopbackSite]:
    """Serve ``app`` on a free loopback port until the block ends."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = LoopbackSite(runner, free_port())
    await site.start()
    try:
        yield site
    finally:
        await runner.cleanup()
