"""Counters a caller can read at any time (``VoiceClient.stats``)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum


class DropReason(StrEnum):
    """Why a queued message was never sent (or never accepted)."""

    OLDEST = "oldest"  # drop_oldest: pushed out of a full queue by a newer one
    NEWEST = "newest"  # drop_newest: refused because the queue was full
    TIMEOUT = "timeout"  # block: no room within the caller's timeout
    EXPIRED = "expired"  # its ttl ran out while it waited for a connection
    REJECTED = "rejected"  # Home Assistant refused it (validation error)
    FAILED = "failed"  # Home Assistant failed to carry it out (other error)
    CLOSED = "closed"  # still unsent when close() reached its deadline


@dataclass(slots=True)
class ClientStats:
    """What happened to the messages so far.

    ``queued`` counts messages accepted into the queue; each then ends as
    ``sent`` (alone or merged) or in ``dropped[reason]``, or is still waiting.
    ``coalesced`` counts messages that went out inside another one's summary;
    ``calls`` counts service calls that Home Assistant answered with receipts.
    """

    queued: int = 0
    sent: int = 0
    coalesced: int = 0
    calls: int = 0
    connect_attempts: int = 0
    connects: int = 0
    dropped: Counter[DropReason] = field(default_factory=Counter)

    @property
    def dropped_total(self) -> int:
        """Messages dropped for any reason."""
        return sum(self.dropped.values())
