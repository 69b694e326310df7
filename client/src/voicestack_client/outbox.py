"""The bounded queue of messages waiting to be sent, and what happens when it is full.

A doorbell or a backup job must never block forever or eat memory because Home
Assistant is down, so the queue holds at most ``max_size`` messages and a
policy decides what gives way: the oldest message, the newest one, or the
caller (who waits for room, with an optional timeout).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from .clock import Clock, timer
from .model import Announcement
from .stats import ClientStats, DropReason


class OverflowPolicy(StrEnum):
    """What a full queue does with a new message."""

    DROP_OLDEST = "drop_oldest"  # take it; the oldest waiting message is dropped
    DROP_NEWEST = "drop_newest"  # refuse it (``announce`` returns False)
    BLOCK = "block"  # the caller waits for room (up to its timeout)


@dataclass(frozen=True, slots=True, eq=False)
class Queued:
    """A message and when (on the client's clock) it entered the queue.

    Compared by identity: two equal messages queued at once are two messages.
    """

    announcement: Announcement
    queued_at: float

    def ttl_left(self, now: float) -> float | None:
        """Seconds of its ttl still left at ``now``; ``None`` without a ttl."""
        ttl = self.announcement.ttl
        return None if ttl is None else ttl - (now - self.queued_at)


class Outbox:
    """FIFO of ``Queued`` messages, bounded by ``max_size`` under a policy.

    ``on_drop`` hears every message the queue gives up, with its reason.
    """

    def __init__(
        self,
        max_size: int,
        policy: OverflowPolicy,
        clock: Clock,
        stats: ClientStats,
        on_drop: Callable[[Queued, DropReason], None],
    ) -> None:
        """An empty queue."""
        if max_size < 1:
            raise ValueError(f"max_size must be at least 1, got {max_size!r}")
        self.max_size = max_size
        self.policy = OverflowPolicy(policy)
        self._clock = clock
        self._stats = stats
        self._on_drop = on_drop
        self._items: deque[Queued] = deque()
        self._changed = asyncio.Event()  # set when an item arrives
        self._room: deque[asyncio.Future[None]] = deque()  # blocked callers
        self._refusal: Exception | None = None

    def __len__(self) -> int:
        """Messages waiting."""
        return len(self._items)

    @property
    def full(self) -> bool:
        """No room for another message."""
        return len(self._items) >= self.max_size

    async def put(
        self, announcement: Announcement, timeout_s: float | None
    ) -> Queued | None:
        """Queue ``announcement``; ``None`` if the policy refused it.

        With ``block``, waits for room up to ``timeout_s`` seconds of the clock
        (``None``: as long as it takes). Raises the refusal set by ``refuse``.
        """
        if self.policy is OverflowPolicy.BLOCK:
            deadline = None if timeout_s is None else self._clock.now() + timeout_s
            while self.full and self._refusal is None:
                if not await self._wait_for_room(deadline):
                    self._drop_new(announcement, DropReason.TIMEOUT)
                    return None
        if self._refusal is not None:
            raise self._refusal
        if self.full:
            if self.policy is OverflowPolicy.DROP_NEWEST:
                self._drop_new(announcement, DropReason.NEWEST)
                return None
            self._on_drop(self._items.popleft(), DropReason.OLDEST)
        item = Queued(announcement, self._clock.now())
        self._items.append(item)
        self._stats.queued += 1
        self._changed.set()
        return item

    async def _wait_for_room(self, deadline: float | None) -> bool:
        """Wait until a slot frees (True) or ``deadline`` passes (False)."""
        room: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._room.append(room)
        waits: set[asyncio.Future[None]] = {room}
        handle = None
        if deadline is not None:
            expired, handle = timer(self._clock, deadline - self._clock.now())
            waits.add(expired)
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            if handle is not None:
                handle.cancel()
            if room in self._room:
                self._room.remove(room)
        return room.done() or not self.full

    def _drop_new(self, announcement: Announcement, reason: DropReason) -> None:
        self._on_drop(Queued(announcement, self._clock.now()), reason)

    def take_all(self) -> list[Queued]:
        """Every waiting message, oldest first; the queue is then empty."""
        items = list(self._items)
        self._items.clear()
        self._made_room()
        return items

    async def take(self) -> Queued:
        """The oldest message, waiting for one if the queue is empty."""
        while not self._items:
            self._changed.clear()
            await self._changed.wait()
        item = self._items.popleft()
        self._made_room()
        return item

    def put_back(self, items: Iterable[Queued]) -> None:
        """Return unsent messages to the front, in order (a send failed).

        If that overfills the queue, the drop policies trim it as they would for
        a new message; ``block`` keeps them all and holds new callers back.
        """
        self._items.extendleft(reversed(list(items)))
        while len(self._items) > self.max_size:
            if self.policy is OverflowPolicy.DROP_OLDEST:
                self._on_drop(self._items.popleft(), DropReason.OLDEST)
            elif self.policy is OverflowPolicy.DROP_NEWEST:
                self._on_drop(self._items.pop(), DropReason.NEWEST)
            else:
                break
        if self._items:
            self._changed.set()

    def refuse(self, error: Exception) -> None:
        """From now on ``put`` raises ``error``; blocked callers wake and raise it."""
        self._refusal = error
        for room in self._room:
            if not room.done():
                room.set_result(None)

    def _made_room(self) -> None:
        for room in list(self._room)[: self.max_size - len(self._items)]:
            if not room.done():
                room.set_result(None)
