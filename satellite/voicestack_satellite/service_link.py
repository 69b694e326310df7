"""A connection the satellite makes to a Wyoming service (``--wake-uri``, ``--event-uri``).

It reconnects with backoff for as long as the satellite runs, so a service
that restarts (an add-on update) or starts after the satellite is picked up
without a restart. The connection is a ``Peer``: bounded reads, sends that
never wait, dropped when the service stops reading. Events sent while it is
away wait, the newest ``backlog`` of them, for the next connection.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
import logging

from wyoming.event import Event

from voicestack_protocol import MAX_HEADER_BYTES

from .backoff import Backoff
from .peer import Peer

_LOGGER = logging.getLogger(__name__)

MAX_SERVICE_PAYLOAD = 64 * 1024  # a service answers with small events only


class ServiceLink:
    """Keeps one connection to ``host:port`` open; ``peer`` while connected."""

    def __init__(
        self,
        what: str,
        address: tuple[str, int],
        *,
        on_connect: Callable[[Peer], None],
        on_event: Callable[[Event], None] = lambda event: None,
        write_timeout_s: float = 5.0,
        backlog: int = 0,
    ) -> None:
        """``what`` names the service in logs; ``on_connect`` starts each connection."""
        self._what = what
        self._host, self._port = address
        self._on_connect = on_connect
        self._on_event = on_event
        self._write_timeout_s = write_timeout_s
        self.peer: Peer | None = None
        self._waiting: deque[Event] = deque(maxlen=backlog)
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Connect in the background, now and after every loss."""
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"voicestack-satellite {self._what}"
        )

    def send(self, event: Event) -> None:
        """Send now if connected, else keep it for the next connection (never waits)."""
        if (peer := self.peer) is None or peer.closed:
            if self._waiting.maxlen:
                self._waiting.append(event)
            return
        peer.send(event)

    async def close(self) -> None:
        """Stop reconnecting and close the connection."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task])
        if self.peer is not None:
            self.peer.abort()

    async def _run(self) -> None:
        backoff = Backoff()
        where = f"{self._what} tcp://{self._host}:{self._port}"
        while True:
            try:
                reader, writer = await asyncio.open_connection(
                    self._host, self._port, limit=MAX_HEADER_BYTES
                )
            except OSError as err:
                _LOGGER.warning(
                    "Cannot reach the %s: %s; retrying in %g s",
                    where,
                    err,
                    backoff.delay_s,
                )
            else:
                _LOGGER.info("Connected to the %s", where)
                backoff.reset()
                await self._serve(
                    Peer(reader, writer, write_timeout_s=self._write_timeout_s)
                )
                _LOGGER.warning(
                    "Lost the %s; reconnecting in %g s", where, backoff.delay_s
                )
            await backoff.wait()

    async def _serve(self, peer: Peer) -> None:
        self.peer = peer
        try:
            self._on_connect(peer)
            while self._waiting:
                peer.send(self._waiting.popleft())
            while (event := await peer.read(MAX_SERVICE_PAYLOAD)) is not None:
                self._on_event(event)
        finally:
            self.peer = None
            peer.abort()
