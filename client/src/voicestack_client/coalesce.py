"""Merging what piled up while Home Assistant was unreachable.

After an outage the backlog is sent as one message per (source, category,
target) group instead of a burst of stale ones. A group of one goes out
unchanged; a group of ``n`` goes out once as

    "<n> messages from <source>. The latest: <newest message>"

(``"<n> messages. The latest: ..."`` when no source is set), with the group's
highest priority, its shared ``dedup_key`` (none if they differ) and the
longest ``ttl`` left (none if any message had none). Groups keep the order of
their oldest message. ``target`` is part of the key because a merged message
can only go to satellites all of its messages were meant for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from .model import Announcement, priority_rank
from .outbox import Queued


@dataclass(frozen=True, slots=True)
class Outgoing:
    """One service call to make, and the queued messages it carries."""

    sent: Announcement
    originals: tuple[Queued, ...]


def single(item: Queued, now: float) -> Outgoing:
    """``item`` as it is, with the ttl it has left at ``now``."""
    return Outgoing(replace(item.announcement, ttl=item.ttl_left(now)), (item,))


def summary(count: int, source: str | None, latest: str) -> str:
    """The text said for ``count`` merged messages."""
    origin = f" from {source}" if source else ""
    return f"{count} messages{origin}. The latest: {latest}"


def coalesce(items: Sequence[Queued], now: float) -> list[Outgoing]:
    """``items`` (oldest first) merged per group, in order (see the module doc)."""
    groups: dict[tuple[object, ...], list[Queued]] = {}
    for item in items:
        a = item.announcement
        groups.setdefault((a.source, a.category, a.target), []).append(item)
    return [
        single(group[0], now) if len(group) == 1 else _merge(group, now)
        for group in groups.values()
    ]


def _merge(group: list[Queued], now: float) -> Outgoing:
    first = group[0].announcement
    newest = group[-1].announcement
    keys = {item.announcement.dedup_key for item in group}
    ttls = [item.ttl_left(now) for item in group]
    merged = Announcement(
        message=summary(len(group), first.source, newest.message),
        priority=max((item.announcement.priority for item in group), key=priority_rank),
        category=first.category,
        source=first.source,
        target=first.target,
        dedup_key=keys.pop() if len(keys) == 1 else None,
        ttl=None if None in ttls else max(t for t in ttls if t is not None),
    )
    return Outgoing(merged, tuple(group))
