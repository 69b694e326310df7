"""What a backlog becomes: one message per (source, category, target), in order."""

from __future__ import annotations

from typing import Any

from voicestack_client import Announcement
from voicestack_client.coalesce import coalesce, summary
from voicestack_client.outbox import Queued

NOW = 1000.0


def queued(message: str, at: float = NOW, **fields: Any) -> Queued:
    return Queued(Announcement(message, **fields), at)


def test_a_group_becomes_one_summary_with_the_newest_text_and_top_priority() -> None:
    items = [
        queued("Backup started.", source="backup", priority="low"),
        queued("Disk almost full.", source="backup", priority="high"),
        queued("Backup finished.", source="backup", priority="normal"),
    ]

    (out,) = coalesce(items, NOW)

    assert out.sent == Announcement(
        "3 messages from backup. The latest: Backup finished.",
        priority="high",
        category="general",
        source="backup",
    )
    assert out.originals == tuple(items)


def test_groups_keep_the_order_of_their_oldest_message() -> None:
    items = [
        queued("Backup started.", source="backup"),
        queued("Someone is at the door.", source="doorbell"),
        queued("Backup finished.", source="backup"),
        queued("Disk failing.", source="backup", category="error"),
    ]

    sent = [out.sent.message for out in coalesce(items, NOW)]

    assert sent == [
        "2 messages from backup. The latest: Backup finished.",
        "Someone is at the door.",
        "Disk failing.",  # another category: its own group
    ]


def test_a_lone_message_goes_out_unchanged_but_for_its_ttl_left() -> None:
    item = queued("Print done.", at=NOW - 20, source="printer", ttl=60, dedup_key="p")

    (out,) = coalesce([item], NOW)

    assert out.sent == Announcement(
        "Print done.", source="printer", ttl=40, dedup_key="p"
    )


def test_targets_are_never_merged_across() -> None:
    kitchen = ("assist_satellite.kitchen",)
    items = [
        queued("One.", source="s", target=kitchen),
        queued("Two.", source="s"),
        queued("Three.", source="s", target=kitchen),
    ]

    outs = coalesce(items, NOW)

    assert [(o.sent.target, len(o.originals)) for o in outs] == [
        (kitchen, 2),
        (None, 1),
    ]


def test_merged_dedup_key_and_ttl() -> None:
    same_keys = [
        queued("a", at=NOW - 10, source="s", dedup_key="k", ttl=30),
        queued("b", at=NOW - 5, source="s", dedup_key="k", ttl=15),
    ]
    mixed = [
        queued("a", source="t", dedup_key="k", ttl=30),
        queued("b", source="t", dedup_key="other"),
    ]

    (same,) = coalesce(same_keys, NOW)
    (other,) = coalesce(mixed, NOW)

    assert (same.sent.dedup_key, same.sent.ttl) == ("k", 20)  # the longest left
    assert (other.sent.dedup_key, other.sent.ttl) == (None, None)


def test_summary_without_a_source() -> None:
    assert summary(2, None, "Hello.") == "2 messages. The latest: Hello."


def test_an_unknown_priority_never_wins() -> None:
    items = [queued("a", source="s", priority="urgent"), queued("b", source="s")]

    (out,) = coalesce(items, NOW)

    assert out.sent.priority == "normal"
