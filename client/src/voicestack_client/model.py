"""Announcements as ``voicestack.announce`` takes them, and what comes back.

Values are passed to Home Assistant as they are: it validates them (priority,
category, ttl) and answers with its own translated error, so a client never
disagrees with the server it talks to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from .errors import ServiceCallError

DOMAIN: Final = "voicestack"
SERVICE: Final = "announce"
PRIORITIES: Final = ("low", "normal", "high", "critical")  # least to most important


def priority_rank(priority: str) -> int:
    """Higher is more important; a priority Home Assistant does not know is -1."""
    return PRIORITIES.index(priority) if priority in PRIORITIES else -1


@dataclass(frozen=True, slots=True)
class Announcement:
    """One ``voicestack.announce`` call.

    ``target`` names satellite entities (``assist_satellite.kitchen``) or
    ``("all",)``; ``None`` means every satellite. ``ttl`` is seconds the message
    stays worth saying: the client also counts the time it waits in its queue.
    """

    message: str
    priority: str = "normal"
    category: str = "general"
    source: str | None = None
    target: tuple[str, ...] | None = None
    dedup_key: str | None = None
    ttl: float | None = None

    def service_data(self) -> dict[str, Any]:
        """The action's data; fields left unset are left to Home Assistant."""
        data: dict[str, Any] = {
            "message": self.message,
            "priority": self.priority,
            "category": self.category,
        }
        optional = {
            "source": self.source,
            "entity_id": None if self.target is None else list(self.target),
            "dedup_key": self.dedup_key,
            "ttl": self.ttl,
        }
        data.update(
            {key: value for key, value in optional.items() if value is not None}
        )
        return data


@dataclass(frozen=True, slots=True)
class Receipt:
    """What VoiceStack said at once about one satellite (``queued``, ``dropped``...)."""

    satellite: str
    id: str
    status: str
    reason: str | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Receipt:
        """One entry of the response's ``announcements`` list."""
        return cls(
            satellite=str(data["satellite"]),
            id=str(data["id"]),
            status=str(data["status"]),
            reason=None if data.get("reason") is None else str(data["reason"]),
        )


def receipts_of(response: Any) -> tuple[Receipt, ...]:
    """The receipts in ``voicestack.announce``'s response data."""
    if not isinstance(response, Mapping):
        return ()
    return tuple(Receipt.from_dict(item) for item in response.get("announcements", ()))


@dataclass(frozen=True, slots=True)
class Delivery:
    """The fate of one service call: its receipts, or Home Assistant's error.

    ``sent`` is what went out; ``originals`` what callers queued (more than one
    when the client merged them, see ``coalesce``).
    """

    sent: Announcement
    originals: tuple[Announcement, ...]
    receipts: tuple[Receipt, ...] = ()
    error: ServiceCallError | None = None
