"""``VoiceClient``: announce through VoiceStack from any asyncio program.

``announce`` only queues, so a doorbell handler returns at once whether Home
Assistant is up or not. One background task owns the connection: it connects
and authenticates, sends what piled up while it was away (merged, see
``coalesce``), then each new message in turn; when the connection drops it
waits a backoff delay (exponential, jittered) and connects again. A refused
token stops it for good. ``close`` gives the queue a deadline to drain and
reports what was never sent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
import contextlib
from dataclasses import dataclass
import logging
from types import TracebackType
from typing import Any, Self

import aiohttp

from .backoff import Backoff
from .clock import Clock, EventLoopClock, sleep, timer
from .connection import HomeAssistantConnection, websocket_url
from .dispatch import Dispatch
from .errors import (
    AuthenticationError,
    ClientClosedError,
    ConnectionLostError,
    VoiceStackClientError,
)
from .model import Announcement, Delivery
from .outbox import OverflowPolicy
from .stats import ClientStats, DropReason

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class CloseReport:
    """What ``close`` could not send, and the error that stopped the client."""

    unsent: tuple[Announcement, ...]
    error: VoiceStackClientError | None = None

    @property
    def complete(self) -> bool:
        """Everything queued was sent and nothing failed."""
        return not self.unsent and self.error is None


class VoiceClient:
    """A queue of announcements and the connection that delivers them.

    ``url`` is Home Assistant's address (``http://homeassistant.local:8123``),
    ``token`` a long-lived access token. ``source`` is the default source of
    every message (automations and coalescing group by it). See docs/client.md.
    """

    def __init__(
        self,
        url: str,
        token: str,
        *,
        source: str | None = None,
        max_queue: int = 100,
        overflow: OverflowPolicy | str = OverflowPolicy.DROP_OLDEST,
        block_timeout_s: float | None = None,
        backoff: Backoff | None = None,
        clock: Clock | None = None,
        session: aiohttp.ClientSession | None = None,
        on_delivery: Callable[[Delivery], None] | None = None,
        connect_timeout_s: float = 10.0,
        answer_timeout_s: float = 30.0,
    ) -> None:
        """Check the arguments; nothing connects before ``start``."""
        websocket_url(url)  # a bad address fails here, not in the background
        if not token.strip():
            raise ValueError("token must not be empty")
        self.url = url
        self.source = source
        self._token = token.strip()
        self._clock = clock or EventLoopClock()
        self._backoff = backoff or Backoff()
        self._block_timeout_s = block_timeout_s
        self._session = session
        self._own_session = session is None
        self._connect_timeout_s = connect_timeout_s
        self._answer_timeout_s = answer_timeout_s
        self.stats = ClientStats()
        self._dispatch = Dispatch(
            max_queue, OverflowPolicy(overflow), self._clock, self.stats, on_delivery
        )
        self._connection: HomeAssistantConnection | None = None
        self._task: asyncio.Task[None] | None = None
        self._failure: AuthenticationError | None = None
        # Why the latest connection attempt failed (None once connected).
        self.last_error: VoiceStackClientError | None = None
        self._report: CloseReport | None = None

    async def __aenter__(self) -> Self:
        """Start delivering."""
        self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close with the default deadline; raise the failure that stopped it."""
        report = await self.close()
        if exc is None and report.error is not None:
            raise report.error

    @property
    def connected(self) -> bool:
        """Authenticated and connected right now."""
        return self._connection is not None and not self._connection.closed

    @property
    def failure(self) -> AuthenticationError | None:
        """The error that stopped the client for good (a refused token)."""
        return self._failure

    @property
    def pending(self) -> int:
        """Messages accepted and not yet sent or dropped."""
        return len(self._dispatch.unfinished)

    def start(self) -> None:
        """Start the background task that connects and sends (once)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._run(), name="voicestack-client"
            )

    async def announce(
        self,
        message: str,
        *,
        priority: str = "normal",
        category: str = "general",
        source: str | None = None,
        target: str | Iterable[str] | None = None,
        dedup_key: str | None = None,
        ttl: float | None = None,
    ) -> bool:
        """Queue one message; False if the overflow policy refused it.

        Raises ``AuthenticationError`` once the token was refused and
        ``ClientClosedError`` after ``close``.
        """
        targets = (target,) if isinstance(target, str) else target
        return await self.put(
            Announcement(
                message=message,
                priority=priority,
                category=category,
                source=source or self.source,
                target=None if targets is None else tuple(targets),
                dedup_key=dedup_key,
                ttl=ttl,
            )
        )

    async def put(self, announcement: Announcement) -> bool:
        """Queue a ready ``Announcement`` (as ``announce``)."""
        return await self._dispatch.put(announcement, self._block_timeout_s)

    async def close(self, deadline_s: float = 5.0) -> CloseReport:
        """Stop taking messages, send what is queued within ``deadline_s``, stop.

        Returns what was not sent by then (also counted as dropped ``closed``);
        a message that was in flight at the deadline is listed too, though Home
        Assistant may have received it. Closing twice returns the same report.
        """
        if self._report is not None:
            return self._report
        if self._failure is None:
            self._dispatch.outbox.refuse(ClientClosedError("the client is closed"))
        if self._task is not None:
            if self._dispatch.unfinished and not self._task.done():
                await self._drain(deadline_s)
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        unsent = self._dispatch.unfinished
        for item in unsent:
            self._dispatch.drop(item, DropReason.CLOSED)
        if self._own_session and self._session is not None:
            await self._session.close()
        self._report = CloseReport(tuple(i.announcement for i in unsent), self._failure)
        return self._report

    async def _drain(self, deadline_s: float) -> None:
        assert self._task is not None
        deadline, handle = timer(self._clock, deadline_s)
        idle = asyncio.ensure_future(self._dispatch.idle.wait())
        # Only which one ends first matters here, not what any of them returns.
        waiting: set[asyncio.Future[Any]] = {deadline, idle, self._task}
        try:
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        finally:
            handle.cancel()
            idle.cancel()

    async def _run(self) -> None:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        while True:
            self.stats.connect_attempts += 1
            try:
                self._connection = await HomeAssistantConnection.connect(
                    self._session,
                    self.url,
                    self._token,
                    timeout_s=self._connect_timeout_s,
                    answer_timeout_s=self._answer_timeout_s,
                )
            except AuthenticationError as err:
                _LOGGER.error("%s; not retrying: fix the token", err)
                self._failure = self.last_error = err
                self._dispatch.outbox.refuse(err)
                return
            except ConnectionLostError as err:
                await self._wait_to_retry(err)
                continue
            self.stats.connects += 1
            self.last_error = None
            self._backoff.reset()
            _LOGGER.info("Connected to Home Assistant %s", self._connection.ha_version)
            try:
                await self._dispatch.serve(self._connection)
            except ConnectionLostError as err:
                await self._connection.close()
                await self._wait_to_retry(err)
            except asyncio.CancelledError:
                await self._connection.close()
                raise

    async def _wait_to_retry(self, err: ConnectionLostError) -> None:
        self.last_error = err
        delay = self._backoff.next_delay()
        _LOGGER.warning("%s; connecting again in %.1f s", err, delay)
        await sleep(self._clock, delay)
