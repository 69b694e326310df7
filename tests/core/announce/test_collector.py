"""The collector's gate and queue: rate per source, dedup window, overflow, TTL."""

from __future__ import annotations

import itertools

import pytest

from custom_components.voicestack.core.announce import (
    Announcement,
    AnnounceOptions,
    DropReason,
    Priority,
)
from custom_components.voicestack.core.announce.collector import Collector
from custom_components.voicestack.core.announce.limits import Deduplicator, TokenBuckets
from devstack.manual_clock import ManualClock

_ids = itertools.count()


class Drops:
    """The collector's drop sink."""

    def __init__(self) -> None:
        """Nothing dropped yet."""
        self.log: list[tuple[str, DropReason]] = []

    def __call__(self, items: list[Announcement], reason: DropReason) -> None:
        """Log each dropped text with the reason."""
        self.log.extend((item.text, reason) for item in items)


def item(
    clock: ManualClock,
    text: str,
    priority: Priority = Priority.NORMAL,
    *,
    source: str = "test",
    category: str = "general",
    ttl_s: float = 60.0,
    key: str | None = None,
) -> Announcement:
    seq = next(_ids)
    return Announcement(
        id=f"a{seq}",
        text=text,
        priority=priority,
        category=category,
        source=source,
        created_at=clock.now(),
        expires_at=clock.now() + ttl_s,
        seq=seq,
        dedup_key=key or f"{category}\x00{text.casefold()}",
    )


def collector(clock: ManualClock, **options: object) -> tuple[Collector, Drops]:
    drops = Drops()
    return Collector(clock, AnnounceOptions(**options), drops), drops  # type: ignore[arg-type]


def test_rate_limit_allows_a_burst_then_refills_exactly() -> None:
    clock = ManualClock()
    queue, drops = collector(clock, rate_per_source=5.0)
    results = [queue.offer(item(clock, f"m{i}")) for i in range(6)]
    assert results == [None] * 5 + [DropReason.RATE]
    assert queue.offer(item(clock, "other", source="elsewhere")) is None
    clock.advance(0.199)
    assert queue.offer(item(clock, "too soon")) is DropReason.RATE
    clock.advance(0.001)  # 0.2 s after the burst: exactly one token back
    assert queue.offer(item(clock, "one more")) is None
    assert queue.offer(item(clock, "and another")) is DropReason.RATE
    assert [reason for _, reason in drops.log] == [DropReason.RATE] * 3


@pytest.mark.parametrize("span_s", [0.5, 1.0, 3.0])
def test_the_rate_is_a_burst_of_5_then_5_per_second(span_s: float) -> None:
    """docs/announcements.md: at most 5 + 5·T in T seconds (10 in the first)."""
    buckets = TokenBuckets(5.0)
    calls = [n / 1000 for n in range(round(span_s * 1000) + 1)]  # every ms of [0, T]
    allowed = [at for at in calls if buckets.allow("automation.doors", now=at)]
    assert allowed[:5] == calls[:5]  # the burst
    assert len(allowed) == 5 + int(5 * span_s)
    gaps = [b - a for a, b in itertools.pairwise(allowed[5:])]
    assert gaps == pytest.approx([0.2] * len(gaps), abs=0.001)


def test_token_buckets_forget_idle_sources() -> None:
    buckets = TokenBuckets(5.0)
    for n in range(2000):
        assert buckets.allow(f"source {n}", now=n * 10.0)
    assert len(buckets._buckets) <= 1024


def test_dedup_window_from_the_accepted_message() -> None:
    clock = ManualClock()
    queue, _ = collector(clock, rate_per_source=0)
    assert queue.offer(item(clock, "Door open")) is None
    clock.advance(9.999)
    assert (
        queue.offer(item(clock, "door   OPEN".replace("   ", " "))) is DropReason.DEDUP
    )
    clock.advance(0.001)  # 10 s after the accepted one; the repeat did not extend it
    assert queue.offer(item(clock, "Door open")) is None


def test_a_message_dropped_unsaid_may_be_sent_again_at_once() -> None:
    clock = ManualClock()
    queue, drops = collector(clock, rate_per_source=0, queue_max=2)
    for text in ("Door open", "Window open", "Gate open"):  # the first overflows
        queue.offer(item(clock, text, Priority.LOW, ttl_s=5.0))
    clock.advance(1.0)
    # Not a repeat (it was never said); it pushes "Window open" out in turn.
    assert queue.offer(item(clock, "Door open", Priority.HIGH)) is None
    clock.advance(5.0)  # "Gate open" expires unsaid
    assert queue.offer(item(clock, "Gate open")) is None
    assert drops.log == [
        ("Door open", DropReason.OVERFLOW),
        ("Window open", DropReason.OVERFLOW),
        ("Gate open", DropReason.TTL),
    ]


def test_dedup_is_per_category_unless_a_key_is_given() -> None:
    clock = ManualClock()
    queue, _ = collector(clock, rate_per_source=0)
    assert queue.offer(item(clock, "Check", category="warning")) is None
    assert queue.offer(item(clock, "Check", category="error")) is None
    assert queue.offer(item(clock, "Washer done", key="washer")) is None
    assert (
        queue.offer(item(clock, "Washing finished", key="washer")) is DropReason.DEDUP
    )


def test_duplicates_do_not_use_up_the_sources_rate() -> None:
    clock = ManualClock()
    queue, _ = collector(clock, rate_per_source=2.0)
    assert queue.offer(item(clock, "same")) is None
    for _ in range(5):
        assert queue.offer(item(clock, "same")) is DropReason.DEDUP
    assert queue.offer(item(clock, "different")) is None


def test_deduplicator_forgets_expired_keys() -> None:
    dedup = Deduplicator(10.0)
    for n in range(100):
        dedup.remember(f"k{n}", now=float(n))
    assert not dedup.is_duplicate("k0", now=200.0)
    assert len(dedup._until) == 0


def test_overflow_drops_oldest_low_then_oldest_normal() -> None:
    clock = ManualClock()
    queue, drops = collector(clock, queue_max=3, rate_per_source=0)
    for text, prio in [
        ("n1", Priority.NORMAL),
        ("l1", Priority.LOW),
        ("l2", Priority.LOW),
    ]:
        assert queue.offer(item(clock, text, prio)) is None
    assert queue.offer(item(clock, "n2")) is None  # l1 gives way
    assert queue.offer(item(clock, "h1", Priority.HIGH)) is None  # then l2
    assert queue.offer(item(clock, "n3")) is None  # then the oldest normal, n1
    assert drops.log == [
        ("l1", DropReason.OVERFLOW),
        ("l2", DropReason.OVERFLOW),
        ("n1", DropReason.OVERFLOW),
    ]
    assert [a.text for a in queue.take_batch()] == ["n2", "h1", "n3"]


def test_a_newcomer_less_important_than_the_queue_is_the_one_dropped() -> None:
    clock = ManualClock()
    queue, drops = collector(clock, queue_max=2, rate_per_source=0)
    queue.offer(item(clock, "n1"))
    queue.offer(item(clock, "n2"))
    assert queue.offer(item(clock, "l1", Priority.LOW)) is DropReason.OVERFLOW
    assert drops.log == [("l1", DropReason.OVERFLOW)]
    assert len(queue) == 2


@pytest.mark.parametrize("priority", [Priority.HIGH, Priority.CRITICAL])
def test_high_and_critical_are_never_dropped_for_space(priority: Priority) -> None:
    clock = ManualClock()
    queue, drops = collector(clock, queue_max=3, rate_per_source=0)
    for n in range(6):
        assert queue.offer(item(clock, f"x{n}", priority)) is None
    assert len(queue) == 6
    assert queue.offer(item(clock, "normal")) is DropReason.OVERFLOW
    assert drops.log == [("normal", DropReason.OVERFLOW)]


def test_messages_expire_exactly_at_their_ttl_with_one_timer() -> None:
    clock = ManualClock()
    queue, drops = collector(clock, rate_per_source=0)
    queue.offer(item(clock, "low", Priority.LOW, ttl_s=30))
    queue.offer(item(clock, "normal", ttl_s=60))
    queue.offer(item(clock, "high", Priority.HIGH, ttl_s=300))
    assert clock.pending == 1
    clock.advance(29.999)
    assert drops.log == []
    clock.advance(0.001)
    assert drops.log == [("low", DropReason.TTL)]
    clock.advance(30)
    assert drops.log[-1] == ("normal", DropReason.TTL)
    assert [a.text for a in queue.take_batch()] == ["high"]


def test_an_earlier_expiry_rearms_the_timer() -> None:
    clock = ManualClock()
    queue, drops = collector(clock, rate_per_source=0)
    queue.offer(item(clock, "high", Priority.HIGH, ttl_s=300))
    queue.offer(item(clock, "low", Priority.LOW, ttl_s=5))
    clock.advance(5)
    assert drops.log == [("low", DropReason.TTL)]
    assert len(queue) == 1


def test_requeued_messages_keep_their_place_and_expiry() -> None:
    clock = ManualClock()
    queue, drops = collector(clock, rate_per_source=0)
    first = item(clock, "first", ttl_s=10)
    queue.offer(first)
    taken = queue.take_batch()
    queue.offer(item(clock, "second"))
    queue.requeue(taken)
    assert [a.text for a in queue.take_batch()] == ["first", "second"]
    queue.requeue([first])
    clock.advance(10)
    assert drops.log == [("first", DropReason.TTL)]


def test_criticals_wait_apart_from_the_batch() -> None:
    clock = ManualClock()
    queue, _ = collector(clock, rate_per_source=0)
    queue.offer(item(clock, "n"))
    queue.offer(item(clock, "c", Priority.CRITICAL))
    assert (queue.critical_count, queue.batch_count, len(queue)) == (1, 1, 2)
    assert [a.text for a in queue.take_critical()] == ["c"]
    assert [a.text for a in queue.drain()] == ["n"]
    assert len(queue) == 0


def test_remove_categories_spares_criticals() -> None:
    clock = ManualClock()
    queue, _ = collector(clock, rate_per_source=0)
    queue.offer(item(clock, "ready 1", category="ready"))
    queue.offer(item(clock, "ready 2", Priority.CRITICAL, category="ready"))
    queue.offer(item(clock, "error", category="error"))
    removed = queue.remove_categories({"ready"})
    assert [a.text for a in removed] == ["ready 1"]
    assert len(queue) == 2
