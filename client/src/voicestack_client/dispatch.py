"""From the queue to ``voicestack.announce`` calls on one connection at a time.

``Dispatch`` owns what was accepted and not yet finished: the queue, the
messages in flight, and each message's end (sent, dropped with a reason).
Given a connection it sends the backlog merged (``coalesce``), then each new
message as it comes; a message whose call was cut off by a lost connection
goes back to the front of the queue, so it is sent again (at least once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import logging

from .clock import Clock
from .coalesce import Outgoing, coalesce, single
from .connection import HomeAssistantConnection
from .errors import (
    ConnectionLostError,
    ServiceCallError,
    ServiceNotFoundError,
    ServiceValidationError,
)
from .model import DOMAIN, SERVICE, Announcement, Delivery, receipts_of
from .outbox import Outbox, OverflowPolicy, Queued
from .stats import ClientStats, DropReason

_LOGGER = logging.getLogger(__name__)


class Dispatch:
    """The queue, the messages not yet finished, and sending them."""

    def __init__(
        self,
        max_queue: int,
        overflow: OverflowPolicy,
        clock: Clock,
        stats: ClientStats,
        on_delivery: Callable[[Delivery], None] | None,
    ) -> None:
        """Nothing queued yet."""
        self._clock = clock
        self._stats = stats
        self._on_delivery = on_delivery
        self.outbox = Outbox(max_queue, overflow, clock, stats, self.drop)
        self._unfinished: dict[Queued, None] = {}  # accepted, not yet sent/dropped
        self.idle = asyncio.Event()  # set while nothing is unfinished
        self.idle.set()

    @property
    def unfinished(self) -> list[Queued]:
        """Accepted messages not yet sent or dropped, in the order they came."""
        return list(self._unfinished)

    async def put(self, announcement: Announcement, timeout_s: float | None) -> bool:
        """Queue ``announcement`` under the overflow policy; False if refused."""
        item = await self.outbox.put(announcement, timeout_s)
        if item is None:
            return False
        self._unfinished[item] = None
        self.idle.clear()
        return True

    async def serve(self, connection: HomeAssistantConnection) -> None:
        """Send the backlog merged, then each new message; raise when lost."""
        now = self._clock.now()
        backlog = coalesce(self._fresh(self.outbox.take_all(), now), now)
        for index, outgoing in enumerate(backlog):
            try:
                await self._send(connection, outgoing)
            except (ConnectionLostError, asyncio.CancelledError):
                self.outbox.put_back(i for o in backlog[index:] for i in o.originals)
                raise
        lost = asyncio.ensure_future(connection.wait_closed())
        take: asyncio.Future[Queued] | None = None
        try:
            while True:
                take = asyncio.ensure_future(self.outbox.take())
                await asyncio.wait({take, lost}, return_when=asyncio.FIRST_COMPLETED)
                if not take.done():
                    raise ConnectionLostError(
                        "the connection to Home Assistant was lost"
                    )
                await self._send_one(connection, take.result())
        finally:
            lost.cancel()
            if take is not None:
                take.cancel()

    async def _send_one(
        self, connection: HomeAssistantConnection, item: Queued
    ) -> None:
        now = self._clock.now()
        if not self._fresh([item], now):
            return
        try:
            await self._send(connection, single(item, now))
        except (ConnectionLostError, asyncio.CancelledError):
            self.outbox.put_back([item])
            raise

    def _fresh(self, items: list[Queued], now: float) -> list[Queued]:
        """``items`` whose ttl has not run out; the others are dropped."""
        fresh = []
        for item in items:
            left = item.ttl_left(now)
            if left is not None and left <= 0:
                self.drop(item, DropReason.EXPIRED)
            else:
                fresh.append(item)
        return fresh

    async def _send(self, connection: HomeAssistantConnection, out: Outgoing) -> None:
        originals = tuple(item.announcement for item in out.originals)
        try:
            response = await connection.call_service(
                DOMAIN, SERVICE, out.sent.service_data(), return_response=True
            )
        except ServiceNotFoundError as err:
            raise ConnectionLostError(
                f"{DOMAIN}.{SERVICE} is not available (is VoiceStack loaded?): {err}"
            ) from err
        except ServiceCallError as err:
            _LOGGER.error("Home Assistant refused %r: %s", out.sent.message, err)
            reason = (
                DropReason.REJECTED
                if isinstance(err, ServiceValidationError)
                else DropReason.FAILED
            )
            for item in out.originals:
                self.drop(item, reason)
            self._deliver(Delivery(out.sent, originals, error=err))
            return
        self._stats.calls += 1
        self._stats.sent += len(originals)
        self._stats.coalesced += len(originals) - 1
        for item in out.originals:
            self._finish(item)
        self._deliver(Delivery(out.sent, originals, receipts_of(response)))

    def _deliver(self, delivery: Delivery) -> None:
        if self._on_delivery is None:
            return
        try:
            self._on_delivery(delivery)
        except Exception:
            _LOGGER.exception("on_delivery failed")

    def drop(self, item: Queued, reason: DropReason) -> None:
        """Give ``item`` up for ``reason``: counted, logged, finished."""
        self._stats.dropped[reason] += 1
        a = item.announcement
        _LOGGER.warning(
            "Dropped a message from %s (%s): %r", a.source, reason, a.message
        )
        self._finish(item)

    def _finish(self, item: Queued) -> None:
        self._unfinished.pop(item, None)
        if not self._unfinished:
            self.idle.set()
