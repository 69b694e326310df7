"""Everything waiting to be said on one speaker, and the gate in front of it.

``offer`` runs a message through, in this order:

1. **dedup** (text + category, or the caller's dedup key, within ``dedup_s``):
   checked first, so repeats do not use up their source's rate;
2. **rate** (a token bucket per source, ``rate_per_source``);
3. **space**: the queue holds ``queue_max`` messages. When a message arrives at a
   full queue, the oldest *low* message is dropped, else the oldest *normal* one
   (the newcomer itself if it is the least important). High and critical messages
   are never dropped for space: the queue grows past its bound instead, which the
   rate limit and their time to live keep finite.

Waiting messages expire after their time to live (reason ``ttl``): one timer,
always set for the earliest expiry, instead of one per message. Every drop is
reported through ``on_drop``, the only channel, so the caller's metrics see every
fate. Everything here runs on the event loop (the announcer hops threads first).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from typing import Final

from ..clock import Cancellable, Clock
from .limits import Deduplicator, TokenBuckets
from .model import EPSILON_S, Announcement, DropReason, Priority
from .options import AnnounceOptions

DropSink = Callable[[list[Announcement], DropReason], None]
_DROP_ORDER: Final = (Priority.LOW, Priority.NORMAL)  # who gives way for space
_BATCH_PRIORITIES: Final = (Priority.HIGH, Priority.NORMAL, Priority.LOW)


class Collector:
    """Bounded, rate-limited, deduplicated waiting room of one speaker."""

    def __init__(
        self, clock: Clock, options: AnnounceOptions, on_drop: DropSink
    ) -> None:
        """Drops (with their reason) go to ``on_drop``."""
        self._clock = clock
        self._on_drop = on_drop
        self._rate = TokenBuckets(options.rate_per_source)
        self._dedup = Deduplicator(options.dedup_s)
        self._queue_max = options.queue_max
        # One insertion-ordered dict per priority: the oldest of a priority is
        # first, and any message leaves in O(1).
        self._waiting: dict[Priority, dict[str, Announcement]] = {
            p: {} for p in Priority
        }
        self._count = 0
        self._sweep: Cancellable | None = None
        self._sweep_at = float("inf")

    def set_options(self, options: AnnounceOptions) -> None:
        """Use new limits from now on (waiting messages keep their expiry)."""
        self._rate.rate = options.rate_per_source
        self._dedup.window_s = options.dedup_s
        self._queue_max = options.queue_max
        self._trim()

    def __len__(self) -> int:
        """Messages waiting (criticals included)."""
        return self._count

    @property
    def critical_count(self) -> int:
        """Critical messages waiting for the critical path."""
        return len(self._waiting[Priority.CRITICAL])

    @property
    def batch_count(self) -> int:
        """Messages waiting for the coalescer."""
        return self._count - self.critical_count

    def offer(self, item: Announcement) -> DropReason | None:
        """Admit ``item``, or return why it was dropped (also sent to ``on_drop``)."""
        now = self._clock.now()
        reason: DropReason | None = None
        if self._dedup.is_duplicate(item.dedup_key, now):
            reason = DropReason.DEDUP
        elif not self._rate.allow(item.source, now):
            reason = DropReason.RATE
        if reason is not None:
            self._on_drop([item], reason)
            return reason
        self._dedup.remember(item.dedup_key, now)
        self._insert(item)
        if item in self._trim():
            return DropReason.OVERFLOW
        return None

    def requeue(self, items: Iterable[Announcement]) -> None:
        """Put messages back that were not heard (speaker lost), oldest first."""
        for item in items:
            self._insert(item)
        for priority, bucket in self._waiting.items():
            self._waiting[priority] = dict(
                sorted(bucket.items(), key=lambda pair: pair[1].seq)
            )
        self._trim()

    def take_critical(self) -> list[Announcement]:
        """All waiting criticals, oldest first: they are said together."""
        return self._take((Priority.CRITICAL,))

    def peek_batch(self) -> list[Announcement]:
        """What ``take_batch`` would take now, left in place."""
        items = [item for p in _BATCH_PRIORITIES for item in self._waiting[p].values()]
        return sorted(items, key=lambda item: item.seq)

    def take_batch(self) -> list[Announcement]:
        """All other waiting messages, in arrival order: the coalescer's batch."""
        return self._take(_BATCH_PRIORITIES)

    def drain(self) -> list[Announcement]:
        """Everything waiting, in arrival order (shutdown)."""
        return self._take(tuple(Priority))

    def remove_categories(self, categories: Collection[str]) -> list[Announcement]:
        """Take out non-critical messages of ``categories`` (they became stale)."""
        removed: list[Announcement] = []
        if not categories:
            return removed
        for priority in _BATCH_PRIORITIES:
            bucket = self._waiting[priority]
            stale = [key for key, item in bucket.items() if item.category in categories]
            removed.extend(bucket.pop(key) for key in stale)
        self._count -= len(removed)
        return removed

    def close(self) -> None:
        """Stop the expiry timer (the announcer shut down)."""
        if self._sweep is not None:
            self._sweep.cancel()
            self._sweep = None
        self._sweep_at = float("inf")

    def _take(self, priorities: tuple[Priority, ...]) -> list[Announcement]:
        items: list[Announcement] = []
        for priority in priorities:
            items.extend(self._waiting[priority].values())
            self._waiting[priority] = {}
        self._count -= len(items)
        if len(priorities) > 1:
            items.sort(key=lambda item: item.seq)
        return items

    def _insert(self, item: Announcement) -> None:
        self._waiting[item.priority][item.id] = item
        self._count += 1
        if item.expires_at < self._sweep_at:
            self._schedule_sweep(item.expires_at)

    def _trim(self) -> list[Announcement]:
        """Drop the oldest of the least important until the queue fits."""
        dropped: list[Announcement] = []
        while self._count > self._queue_max:
            bucket = next(
                (self._waiting[p] for p in _DROP_ORDER if self._waiting[p]), None
            )
            if bucket is None:
                break  # only high and critical left: they stay
            dropped.append(bucket.pop(next(iter(bucket))))
            self._count -= 1
        if dropped:
            self._drop_unsaid(dropped, DropReason.OVERFLOW)
        return dropped

    def _schedule_sweep(self, at: float) -> None:
        if self._sweep is not None:
            self._sweep.cancel()
        self._sweep_at = at
        self._sweep = self._clock.call_later(at - self._clock.now(), self._expire)

    def _expire(self) -> None:
        """Drop what outlived its time to live; set the timer for the next one."""
        self._sweep = None
        self._sweep_at = float("inf")
        now = self._clock.now()
        expired: list[Announcement] = []
        following = float("inf")
        for bucket in self._waiting.values():
            for key, item in list(bucket.items()):
                if item.expires_at <= now + EPSILON_S:
                    expired.append(bucket.pop(key))
                else:
                    following = min(following, item.expires_at)
        self._count -= len(expired)
        if following != float("inf"):
            self._schedule_sweep(following)
        if expired:
            expired.sort(key=lambda item: item.seq)
            self._drop_unsaid(expired, DropReason.TTL)

    def _drop_unsaid(self, items: list[Announcement], reason: DropReason) -> None:
        """Drop messages that were admitted but never said.

        Their dedup keys are forgotten: the same message sent again is a retry
        of something nobody heard, not a repeat.
        """
        for item in items:
            self._dedup.forget(item.dedup_key)
        self._on_drop(items, reason)
