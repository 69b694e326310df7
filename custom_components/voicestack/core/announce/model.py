"""The vocabulary of announcements: priorities, categories, fates and reports.

Two independent axes decide how a message is treated:

- its **priority** (critical | high | normal | low) says how hard it pushes: a
  critical interrupts whatever plays; high is never dropped for space; normal and
  low give way under overload (low first);
- its **category** says what it is about. Categories have the seed's priorities
  (shutdown 100 … general 10), which order the sentences of a merged utterance and
  decide supersession, and each has a summary template.

Every announcement that is received ends in exactly one fate, so the metrics
invariant ``received = spoken + coalesced + dropped + queued`` always holds:
*spoken* (said on its own, or as the first message of a merged utterance),
*coalesced* (merged into another message's utterance), *dropped* with a
``DropReason``, or still *queued* (waiting, or being said right now).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
import itertools
import secrets
from types import MappingProxyType
from typing import Any, Final, Protocol


class Priority(StrEnum):
    """How hard a message pushes; see the module docstring."""

    CRITICAL = "critical"
    HIGH = "high"
    NORMAL = "normal"
    LOW = "low"

    @property
    def rank(self) -> int:
        """Higher is more important (low 0 … critical 3)."""
        return _RANK[self]


_RANK: Final = {
    Priority.LOW: 0,
    Priority.NORMAL: 1,
    Priority.HIGH: 2,
    Priority.CRITICAL: 3,
}

# The seed's category priorities (they order sentences and drive supersession).
CATEGORY_PRIORITY: Final[Mapping[str, int]] = MappingProxyType(
    {
        "shutdown": 100,
        "error": 90,
        "critical": 90,
        "warning": 70,
        "ready": 50,
        "init": 40,
        "health": 30,
        "progress": 20,
        "general": 10,
    }
)
CATEGORIES: Final = tuple(CATEGORY_PRIORITY)
DEFAULT_CATEGORY: Final = "general"
MAX_TTL_S: Final = 86400  # a day: older news is no announcement
# The most any speaker's *Longest message* may be (10 minutes of speech or so):
# the actions cut a message to it before anything else looks at the text.
MAX_MESSAGE_LENGTH: Final = 10_000
DEFAULT_SOURCE: Final = "service"
# Float slack for deadlines: 1000.0 + 0.199 + 0.001 < 1000.2, yet a timer or a
# window due "at 0.2 s" must count as reached then.
EPSILON_S: Final = 1e-9

# Supersession: which categories a category makes stale when both are about to be
# said. Only lifecycle *states* supersede each other (the newer, higher state is
# what is true now: "shutting down" makes "ready" wrong). Errors, warnings,
# criticals and general messages report *events*; an event stays true, so they are
# never superseded and never supersede.
SUPERSEDES: Final[Mapping[str, frozenset[str]]] = MappingProxyType(
    {
        "shutdown": frozenset({"ready", "init", "health", "progress"}),
        "ready": frozenset({"init", "progress"}),
        "init": frozenset({"progress"}),
    }
)


class DropReason(StrEnum):
    """Why a message was not said."""

    OVERFLOW = "overflow"  # the queue was full and it was the oldest of the lowest
    DEDUP = "dedup"  # the same text and category (or dedup key) was just accepted
    RATE = "rate"  # its source sent faster than its token bucket allows
    STALE = "stale"  # superseded, or interrupted by a critical (never re-queued)
    TTL = "ttl"  # waited longer than its time to live (e.g. speaker offline)
    FAILED = "failed"  # the say callable raised or produced no audio
    SHUTDOWN = "shutdown"  # still waiting when the announcer shut down
    # Sent, but the speaker never confirmed it played to its end (no ``played``
    # within the playback timeout): perhaps heard, perhaps not, so not spoken.
    UNCONFIRMED = "unconfirmed"


class Status(StrEnum):
    """What an ``AnnouncementEvent`` reports."""

    STARTED = "started"  # an utterance was handed to ``say``
    FINISHED = "finished"  # the speaker confirmed it played to its end
    INTERRUPTED = "interrupted"  # cut short; ``reason`` is an ``InterruptReason``
    DROPPED = "dropped"  # one message will not be said; ``reason`` is a DropReason


class InterruptReason(StrEnum):
    """Why an utterance was cut short, and what happens to its messages."""

    CRITICAL = "critical"  # a critical took over: discarded, counted as stale
    # Someone else stopped playback (``voicestack.stop``, a wake word at the
    # satellite): discarded, stale.
    STOPPED = "stopped"
    LOST = "lost"  # the speaker went away: queued again, said after reconnect
    SHUTDOWN = "shutdown"  # shutdown ran out of time: discarded, counted shutdown
    FAILED = "failed"  # nothing could be said: high and critical try again later
    TIMEOUT = "timeout"  # no ``played`` in time: discarded, counted unconfirmed


class SpeakerKind(StrEnum):
    """What a speaker (an announcer key) is; events and metrics carry it."""

    SATELLITE = "satellite"  # a VoiceStack satellite (its Speaker)
    MEDIA_PLAYER = "media_player"  # any Home Assistant media player
    ASSIST_SATELLITE = "assist_satellite"  # another integration's assist satellite


class ReceiptStatus(StrEnum):
    """What ``announce`` can say at once about one target."""

    QUEUED = "queued"  # accepted; events report what happens next
    DROPPED = "dropped"  # refused at the door; ``reason`` says why
    PENDING = "pending"  # called from another thread: handed to the event loop
    REJECTED = "rejected"  # the announcer is shutting down; not counted


class AnnounceError(ValueError):
    """Bad input, with a stable ``code`` (and option ``field``) for translations."""

    def __init__(self, code: str, message: str, *, field: str | None = None) -> None:
        """``code`` names the problem, ``field`` the option or argument at fault."""
        super().__init__(message)
        self.code = code
        self.field = field


_RUN: Final = secrets.token_hex(3)
_COUNTER = itertools.count(1)


def new_id() -> str:
    """A unique announcement id (``next`` on a counter is atomic: any thread)."""
    return f"{_RUN}-{next(_COUNTER)}"


def normalize(text: str) -> str:
    """Whitespace collapsed: what is said does not depend on line breaks."""
    return " ".join(text.split())


@dataclass(frozen=True, slots=True)
class AnnounceRequest:
    """One validated ``announce`` call, before it is fanned out to speakers."""

    text: str
    priority: Priority = Priority.NORMAL
    category: str = DEFAULT_CATEGORY
    source: str = DEFAULT_SOURCE
    dedup_key: str | None = None
    ttl_s: float | None = None  # None: the option for its priority

    @classmethod
    def create(
        cls,
        message: str,
        *,
        priority: Priority | str = Priority.NORMAL,
        category: str = DEFAULT_CATEGORY,
        source: str | None = None,
        dedup_key: str | None = None,
        ttl_s: float | None = None,
    ) -> AnnounceRequest:
        """Check and normalize the arguments; raise ``AnnounceError`` if bad."""
        text = normalize(message) if isinstance(message, str) else ""
        if not text:
            raise AnnounceError("empty_message", "message must not be empty")
        try:
            prio = Priority(priority)
        except ValueError:
            raise AnnounceError(
                "invalid_priority",
                f"priority must be one of {', '.join(Priority)}, got {priority!r}",
                field="priority",
            ) from None
        if category not in CATEGORY_PRIORITY:
            raise AnnounceError(
                "unknown_category",
                f"category must be one of {', '.join(CATEGORIES)}, got {category!r}",
                field="category",
            )
        if ttl_s is not None and not (
            isinstance(ttl_s, int | float)
            and not isinstance(ttl_s, bool)
            and 0 < ttl_s <= MAX_TTL_S
        ):
            raise AnnounceError(
                "invalid_ttl",
                f"ttl must be a positive number of seconds up to {MAX_TTL_S}, got {ttl_s!r}",
                field="ttl",
            )
        return cls(
            text=text,
            priority=prio,
            category=category,
            source=normalize(source or "") or DEFAULT_SOURCE,
            dedup_key=dedup_key or None,
            ttl_s=None if ttl_s is None else float(ttl_s),
        )


@dataclass(slots=True, eq=False)
class Announcement:
    """One message for one speaker, from admission to its fate.

    Times are on the announcer's ``Clock`` (monotonic seconds).
    """

    id: str
    text: str
    priority: Priority
    category: str
    source: str
    created_at: float
    expires_at: float
    seq: int  # arrival order on its speaker
    dedup_key: str  # the given key, or normalized text + category

    @property
    def category_priority(self) -> int:
        """The seed's priority of its category."""
        return CATEGORY_PRIORITY[self.category]


@dataclass(frozen=True, slots=True)
class Receipt:
    """What ``announce`` knows at once about one target (a speaker's key)."""

    speaker: str
    id: str
    status: ReceiptStatus
    reason: DropReason | None = None
    truncated: bool = False  # the message was cut to ``max_message_length``
    # The message's fate once it is settled: ``finished``, ``dropped`` or
    # ``interrupted`` for good (a lost or failed utterance is said again, so
    # neither settles it). None for ``pending`` and ``rejected``.
    settled: asyncio.Future[Status] | None = field(
        default=None, compare=False, repr=False
    )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (e.g. a service's response data)."""
        return {
            # The key stays "satellite" (the action's response, which scripts
            # read and voicestack-client parses), whatever kind the speaker is.
            "satellite": self.speaker,
            "id": self.id,
            "status": str(self.status),
            "reason": None if self.reason is None else str(self.reason),
        }


@dataclass(frozen=True, slots=True)
class AnnouncementEvent:
    """A status report for ``on_event`` (a ``voicestack_announcement`` event).

    ``speaker`` is the speaker's key (a satellite's id, a media player's
    entity id), ``speaker_kind`` what it is.

    ``started``/``finished``/``interrupted`` describe one utterance: ``ids`` of all
    the messages in it and ``text`` as actually spoken. ``dropped`` describes one
    message: its id and its own text. ``priority`` is the highest of the messages.
    """

    speaker: str
    status: Status
    ids: tuple[str, ...]
    text: str
    priority: Priority
    categories: tuple[str, ...]
    reason: DropReason | InterruptReason | None = None
    outcome: str | None = None  # the say outcome, for finished/interrupted
    speaker_kind: SpeakerKind = SpeakerKind.SATELLITE

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready event data (``satellite`` and ``speaker`` are both the key).

        ``satellite`` was the only key before ``speaker``: automations use it.
        """
        return {
            "satellite": self.speaker,
            "speaker": self.speaker,
            "speaker_kind": str(self.speaker_kind),
            "status": str(self.status),
            "ids": list(self.ids),
            "text": self.text,
            "priority": str(self.priority),
            "categories": list(self.categories),
            "reason": None if self.reason is None else str(self.reason),
            "outcome": self.outcome,
        }


class SayResult(Protocol):
    """How one ``say`` call ended; ``core.speaker.Playback`` is one.

    ``outcome``: played (the satellite confirmed every stream played to its
    end) | stopped (cut short by ``stop``) | flushed (cut short by the satellite
    itself) | timeout (sent; no ``played`` in time) | lost (the satellite went
    away) | empty (nothing to play) | failed (nothing could be played: the
    engine or the player failed). ``first_audio_at``: when the first audio was sent, on the
    announcer's clock (``time.monotonic``, i.e. the event loop's time, in
    production); None if unknown.
    """

    @property
    def outcome(self) -> str:
        """One of played, stopped, flushed, timeout, lost, empty, failed."""

    @property
    def first_audio_at(self) -> float | None:
        """Clock time of the first audio chunk."""


@dataclass(frozen=True, slots=True)
class Spoken:
    """A plain ``SayResult`` for say callables that have no ``Playback``."""

    outcome: str = "played"
    first_audio_at: float | None = None


# Say ``text`` (the ids of the messages it carries are given for logging and
# events); return when it was played. Must be cancellable: a critical cancels an
# utterance that is still playing or waiting for its turn. ``Speaker.play`` is.
SayFn = Callable[[str, tuple[str, ...]], Awaitable[SayResult]]
# Stop whatever the speaker plays now; return once it confirmed or after a grace
# time (``Speaker.stop``). The result is ignored.
StopFn = Callable[[], Awaitable[object]]
EventCallback = Callable[[AnnouncementEvent], None]
