"""The bounded queue: each overflow policy, its drop counts, and put-back."""

from __future__ import annotations

import asyncio

import pytest

from devstack.waiting import wait_for
from tests.client.recording_clock import RecordingClock
from voicestack_client import Announcement, ClientStats, DropReason, OverflowPolicy
from voicestack_client.outbox import Outbox, Queued


class Box:
    """An outbox on a manual clock, with what it dropped."""

    def __init__(self, policy: OverflowPolicy, max_size: int = 2) -> None:
        """An empty outbox of ``max_size`` under ``policy``."""
        self.clock = RecordingClock()
        self.stats = ClientStats()
        self.dropped: list[tuple[str, DropReason]] = []
        self.outbox = Outbox(max_size, policy, self.clock, self.stats, self.on_drop)

    def on_drop(self, item: Queued, reason: DropReason) -> None:
        """Remember what was dropped, and why."""
        self.dropped.append((item.announcement.message, reason))

    async def put(self, message: str, timeout_s: float | None = None) -> bool:
        """Queue ``message``; whether it was accepted."""
        return await self.outbox.put(Announcement(message), timeout_s) is not None

    def waiting(self) -> list[str]:
        """Take every waiting message out."""
        return [item.announcement.message for item in self.outbox.take_all()]


async def test_drop_oldest_makes_room_by_dropping_the_oldest() -> None:
    box = Box(OverflowPolicy.DROP_OLDEST)

    accepted = [await box.put(m) for m in ("a", "b", "c", "d")]

    assert accepted == [True, True, True, True]
    assert box.dropped == [("a", DropReason.OLDEST), ("b", DropReason.OLDEST)]
    assert box.waiting() == ["c", "d"]
    assert box.stats.queued == 4


async def test_drop_newest_refuses_new_messages_while_full() -> None:
    box = Box(OverflowPolicy.DROP_NEWEST)

    accepted = [await box.put(m) for m in ("a", "b", "c", "d")]

    assert accepted == [True, True, False, False]
    assert box.dropped == [("c", DropReason.NEWEST), ("d", DropReason.NEWEST)]
    assert box.waiting() == ["a", "b"]
    assert box.stats.queued == 2


async def test_block_waits_for_room_then_queues() -> None:
    box = Box(OverflowPolicy.BLOCK)
    await box.put("a")
    await box.put("b")

    blocked = asyncio.ensure_future(box.put("c"))
    await asyncio.sleep(0)
    assert not blocked.done()
    assert (await box.outbox.take()).announcement.message == "a"

    assert await blocked is True
    assert box.dropped == []
    assert box.waiting() == ["b", "c"]


async def test_block_with_a_timeout_gives_up_after_exactly_that_long() -> None:
    box = Box(OverflowPolicy.BLOCK, max_size=1)
    await box.put("a")

    blocked = asyncio.ensure_future(box.put("b", timeout_s=2.5))
    await wait_for(lambda: box.clock.pending == 1, 5, "the timeout is set")
    box.clock.advance(2.0)
    await asyncio.sleep(0)
    still_waiting = not blocked.done()
    box.clock.advance(0.5)

    assert still_waiting
    assert await blocked is False
    assert box.clock.delays == [2.5]
    assert box.dropped == [("b", DropReason.TIMEOUT)]
    assert box.waiting() == ["a"]


async def test_blocked_callers_get_the_refusal() -> None:
    box = Box(OverflowPolicy.BLOCK, max_size=1)
    await box.put("a")
    blocked = asyncio.ensure_future(box.put("b"))
    await asyncio.sleep(0)

    box.outbox.refuse(RuntimeError("closed"))

    with pytest.raises(RuntimeError, match="closed"):
        await blocked
    with pytest.raises(RuntimeError, match="closed"):
        await box.put("c")


@pytest.mark.parametrize(
    ("policy", "waiting", "dropped"),
    [
        (OverflowPolicy.DROP_OLDEST, ["b", "c"], [("a", DropReason.OLDEST)]),
        (OverflowPolicy.DROP_NEWEST, ["a", "b"], [("c", DropReason.NEWEST)]),
        (OverflowPolicy.BLOCK, ["a", "b", "c"], []),
    ],
)
async def test_put_back_goes_first_and_the_policy_trims_it(
    policy: OverflowPolicy, waiting: list[str], dropped: list[tuple[str, DropReason]]
) -> None:
    box = Box(policy)
    await box.put("a")
    await box.put("b")
    taken = box.outbox.take_all()  # in flight
    await box.put("c")

    box.outbox.put_back(taken)

    assert box.waiting() == waiting
    assert box.dropped == dropped


def test_a_queue_needs_room_for_one() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        Box(OverflowPolicy.BLOCK, max_size=0)
