"""The announcer of all speakers: the one entry point for the glue.

``Announcer.announce`` validates a message once, gives each target speaker its
own announcement id and hands it to that speaker's ``SpeakerAnnouncer``. It
may be called from any thread: on the event loop the message is admitted at once
and the receipts say ``queued`` or ``dropped`` (with the reason); from another
thread it is passed on with ``loop.call_soon_threadsafe`` and the receipts say
``pending`` (ids are already assigned, events report the rest). Bad input raises
``AnnounceError`` in the caller's thread either way.

A speaker is what plays: a VoiceStack satellite's (``core/speaker.py``) or
(``kind``) any other playback device, a Home Assistant media player. The same
rules apply to both, but a call without targets means every *satellite* (a house
full of speakers is named, not assumed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
import logging
import time
from types import MappingProxyType
from typing import Any

from ..clock import Clock
from .metrics import MetricsSnapshot, summarize
from .model import (
    DEFAULT_CATEGORY,
    AnnounceError,
    AnnounceRequest,
    EventCallback,
    Priority,
    Receipt,
    ReceiptStatus,
    SayFn,
    SpeakerKind,
    StopFn,
    new_id,
)
from .options import AnnounceOptions
from .orchestrator import SpeakerAnnouncer

_LOGGER = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AnnouncerMetrics:
    """Metrics of every speaker, the satellites among them, and their total."""

    total: MetricsSnapshot
    satellites: Mapping[str, MetricsSnapshot]  # the speakers of kind satellite
    speakers: Mapping[str, tuple[SpeakerKind, MetricsSnapshot]]  # every speaker

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (``GET /api/voicestack/metrics``, diagnostics)."""
        return {
            "total": self.total.as_dict(),
            "satellites": {
                key: snap.as_dict() for key, snap in self.satellites.items()
            },
            "speakers": {
                key: {"kind": str(kind), **snap.as_dict()}
                for key, (kind, snap) in self.speakers.items()
            },
        }


class Announcer:
    """Announcements for every speaker; create it on the event loop."""

    def __init__(
        self,
        clock: Clock,
        *,
        options: AnnounceOptions | None = None,
        on_event: EventCallback | None = None,
        loop: asyncio.AbstractEventLoop | None = None,
        wall: Callable[[], float] = time.time,
    ) -> None:
        """``options`` are the default for speakers added without their own.

        ``loop`` is the event loop the announcer lives on (default: the running
        one); ``on_event`` receives every speaker's status reports.
        """
        self._clock = clock
        self._options = (options or AnnounceOptions()).validate()
        self._on_event = on_event
        self._loop = loop or asyncio.get_running_loop()
        self._wall = wall
        self._speakers: dict[str, SpeakerAnnouncer] = {}
        # Replaced, never mutated: read by any thread.
        self._keys: tuple[str, ...] = ()
        self._satellite_keys: tuple[str, ...] = ()  # the default targets

    @property
    def options(self) -> AnnounceOptions:
        """The default options."""
        return self._options

    def set_options(self, options: AnnounceOptions) -> None:
        """New default options, applied to every speaker too."""
        self._options = options.validate()
        for speaker in self._speakers.values():
            speaker.set_options(options)

    @property
    def speakers(self) -> Mapping[str, SpeakerAnnouncer]:
        """The speakers by key (read-only view)."""
        return MappingProxyType(self._speakers)

    def add_speaker(
        self,
        key: str,
        say: SayFn,
        stop: StopFn,
        *,
        online: bool = True,
        options: AnnounceOptions | None = None,
        prefetch: Callable[[str], None] = lambda _text: None,
        kind: SpeakerKind = SpeakerKind.SATELLITE,
    ) -> SpeakerAnnouncer:
        """Announce on a new speaker; ``key`` is what ``targets`` name.

        ``prefetch`` starts synthesizing the next utterance early (see
        ``SpeakerAnnouncer``); ``kind`` is what the speaker is.
        """
        if key in self._speakers:
            raise AnnounceError("duplicate_target", f"speaker {key!r} already added")
        speaker = SpeakerAnnouncer(
            key,
            say,
            stop,
            clock=self._clock,
            options=options or self._options,
            on_event=self._on_event,
            online=online,
            wall=self._wall,
            prefetch=prefetch,
            kind=kind,
        )
        self._speakers[key] = speaker
        self._index()
        return speaker

    async def remove_speaker(self, key: str, *, goodbye: bool = False) -> None:
        """Shut one speaker's announcer down (bounded) and forget it."""
        speaker = self._speakers.pop(key, None)
        self._index()
        if speaker is not None:
            await speaker.shutdown(goodbye=goodbye)

    async def shutdown(self, *, goodbye: bool = True) -> None:
        """Shut every speaker down at once; each says the goodbye if set.

        Meanwhile ``announce`` answers ``rejected``; afterwards there are no targets.
        """
        await asyncio.gather(
            *(s.shutdown(goodbye=goodbye) for s in self._speakers.values())
        )
        self._speakers.clear()
        self._index()

    def announce(
        self,
        message: str,
        *,
        priority: Priority | str = Priority.NORMAL,
        category: str = DEFAULT_CATEGORY,
        source: str | None = None,
        targets: Iterable[str] | None = None,
        dedup_key: str | None = None,
        ttl_s: float | None = None,
    ) -> list[Receipt]:
        """Announce ``message`` on ``targets`` (default: every satellite).

        ``None`` means the speakers of kind satellite, not media players. Any
        thread. Returns one receipt per target; raises ``AnnounceError`` for a
        bad argument or an unknown target.
        """
        request = AnnounceRequest.create(
            message,
            priority=priority,
            category=category,
            source=source,
            dedup_key=dedup_key,
            ttl_s=ttl_s,
        )
        keys = self._targets(targets)
        ids = [new_id() for _ in keys]
        if _running_loop() is self._loop:
            return self._submit(request, keys, ids)
        self._loop.call_soon_threadsafe(self._submit, request, keys, ids)
        return [
            Receipt(key, item_id, ReceiptStatus.PENDING)
            for key, item_id in zip(keys, ids, strict=True)
        ]

    def metrics(self) -> AnnouncerMetrics:
        """Every speaker's metrics and the total (event loop)."""
        speakers = self._speakers.values()
        snapshots = {s.name: (s.kind, s.snapshot()) for s in speakers}
        return AnnouncerMetrics(
            total=summarize(s.parts() for s in speakers),
            satellites={
                key: snap
                for key, (kind, snap) in snapshots.items()
                if kind is SpeakerKind.SATELLITE
            },
            speakers=snapshots,
        )

    def _index(self) -> None:
        """Publish the keys (whole tuples: other threads read them)."""
        self._keys = tuple(self._speakers)
        self._satellite_keys = tuple(
            key
            for key, speaker in self._speakers.items()
            if speaker.kind is SpeakerKind.SATELLITE
        )

    def _targets(self, targets: Iterable[str] | None) -> tuple[str, ...]:
        known = self._keys
        if targets is None:
            return self._satellite_keys
        keys = tuple(dict.fromkeys(targets))
        if unknown := [key for key in keys if key not in known]:
            raise AnnounceError(
                "unknown_target",
                f"no announcer for {', '.join(map(repr, unknown))}",
                field="target",
            )
        return keys

    def _submit(
        self, request: AnnounceRequest, keys: tuple[str, ...], ids: list[str]
    ) -> list[Receipt]:
        receipts: list[Receipt] = []
        for key, item_id in zip(keys, ids, strict=True):
            speaker = self._speakers.get(key)
            if speaker is None:  # removed while the call crossed threads
                receipts.append(Receipt(key, item_id, ReceiptStatus.REJECTED))
                continue
            receipts.append(speaker.submit(request, item_id))
        if limits := [
            self._speakers[r.speaker].options.max_message_length
            for r in receipts
            if r.truncated
        ]:
            # Once per call: every action comes through here, except the assist
            # satellite's, which cuts first (text_limits.cut_spoken, also warn_cut).
            warn_cut(request.source, min(limits))
        return receipts


def warn_cut(source: str, limit: int) -> None:
    """Log that a message from ``source`` was cut to ``limit`` characters."""
    _LOGGER.warning(
        "Announcement from %s is longer than %d characters (Longest message);"
        " it was cut",
        source,
        limit,
    )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
