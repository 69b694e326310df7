"""One speaker's announcer: what is said, when, and what happens to the rest.

``SpeakerAnnouncer`` owns a ``Collector`` (the waiting room) and a
``CoalesceWindow``, and says things through two injected callables, so it needs
no Home Assistant and no speaker: ``say(text, ids) -> SayResult`` and
``stop()`` (in production ``Speaker.play`` with text-to-speech, and
``Speaker.stop``). Only one utterance of its own is in flight at a time; the
Speaker's lock serializes it with voice responses.

Decisions are made in one place, ``_pump``, whenever something changed (a
message arrived, a window closed, an utterance ended, the link came or went):

- **critical path**: waiting criticals skip the coalescer. If no critical is in
  flight, the current utterance (if any) is cancelled and ``stop()`` is awaited
  (the satellite confirmed, or the grace time passed; this also stops a voice
  response), then *all* waiting criticals are said as one utterance. Criticals
  that arrive meanwhile wait and are merged into the next one ("2 errors: …"), so
  criticals never interrupt criticals. The interrupted utterance is discarded,
  counted as ``stale``, never queued again: it is old news by the time the
  critical is over.
- **coalescing path**: when the window says the batch is ready and nothing is in
  flight, every waiting message is composed into one utterance.
- **offline**: nothing starts. Messages wait up to their time to live
  (``ttl_*_s``: critical and high 5 min, normal 1 min, low 30 s by default) and
  are dropped with reason ``ttl`` after it; the rest is said once, merged, after
  reconnecting. An utterance whose ``say`` reports ``lost`` goes back to the
  queue with its original times (the speaker may not have played it), and the
  speaker counts as offline until ``set_online(True)``.
- **failure**: when nothing of an utterance could be said (text-to-speech down),
  its ``high`` and ``critical`` messages go back to the queue and are tried again
  after 1 s, 2 s, 4 s … (at most 30 s), merged with whatever arrived, until their
  time to live ends (``ttl``); each attempt counts in ``retries``. ``normal`` and
  ``low`` are dropped (``failed``).
- **shutdown**: the open batch is said at once, for at most ``shutdown_flush_s``;
  what is still waiting then is dropped (``shutdown``); the ``goodbye`` is said
  within ``goodbye_timeout_s``; nothing is accepted any more.

Every timer runs on the injected ``Clock``; only ``say`` and ``stop`` are
awaited. ``on_event`` receives an ``AnnouncementEvent`` for every utterance
started, finished or interrupted and every message dropped.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
import contextlib
from dataclasses import dataclass
from functools import partial
import itertools
import logging
import time
from typing import Final

from ..backoff import Backoff
from ..clock import Cancellable, Clock
from .coalescer import CoalesceWindow, compose, superseded_by
from .collector import Collector
from .metrics import MetricsSnapshot, SpeakerMetrics, summarize
from .model import (
    Announcement,
    AnnouncementEvent,
    AnnounceRequest,
    DropReason,
    EventCallback,
    InterruptReason,
    Priority,
    Receipt,
    ReceiptStatus,
    SayFn,
    SayResult,
    SpeakerKind,
    Status,
    StopFn,
    new_id,
)
from .options import AnnounceOptions

_LOGGER = logging.getLogger(__name__)

GOODBYE_SOURCE: Final = "voicestack"
RETRY_FIRST_S: Final = 1.0  # the first retry of a failed high/critical utterance
RETRY_MAX_S: Final = 30.0  # the backoff doubles up to this
_RETRIED: Final = frozenset({Priority.CRITICAL, Priority.HIGH})
# Interruptions after which the messages are said again: not their fate yet.
_SAID_AGAIN: Final = frozenset({InterruptReason.LOST, InterruptReason.FAILED})
# What the messages of a discarded utterance count as.
_DISCARDED_AS: Final = {
    InterruptReason.CRITICAL: DropReason.STALE,
    InterruptReason.STOPPED: DropReason.STALE,
    InterruptReason.SHUTDOWN: DropReason.SHUTDOWN,
    InterruptReason.TIMEOUT: DropReason.UNCONFIRMED,
}
# Speak outcomes that cut an utterance short (``played`` is the only one that
# counts as spoken; ``lost``, ``empty`` and an error have paths of their own).
_CUT_BY: Final = {
    "stopped": InterruptReason.STOPPED,  # Speaker.stop (voicestack.stop)
    "flushed": InterruptReason.STOPPED,  # the satellite cut it (a wake word)
    "timeout": InterruptReason.TIMEOUT,  # never confirmed
}


@dataclass(slots=True, eq=False)
class _Utterance:
    """One ``say`` call in flight."""

    text: str
    items: tuple[Announcement, ...]
    critical: bool
    epoch: int  # connection generation it was started in
    task: asyncio.Task[SayResult] | None = None
    interrupted: InterruptReason | None = None

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(item.id for item in self.items)


class SpeakerAnnouncer:
    """Announcements for one speaker; see the module docstring."""

    def __init__(
        self,
        name: str,
        say: SayFn,
        stop: StopFn,
        *,
        clock: Clock,
        options: AnnounceOptions | None = None,
        on_event: EventCallback | None = None,
        online: bool = True,
        wall: Callable[[], float] = time.time,
        prefetch: Callable[[str], None] = lambda _text: None,
        kind: SpeakerKind = SpeakerKind.SATELLITE,
    ) -> None:
        """Announce on speaker ``name`` through ``say`` and ``stop``.

        ``online``: whether the speaker is connected now (then follow it with
        ``set_online``). ``wall`` stamps ``last_spoken_at`` (UNIX time).
        ``prefetch(text)`` starts synthesizing the next utterance while the
        current one plays, so the next follows without a pause, and a message
        that arrives alone while its merge window waits. ``kind`` says
        what the speaker is (events and metrics carry it); the rules are the same.
        """
        self.name = name
        self.kind = kind
        self._say = say
        self._stop = stop
        self._clock = clock
        self._options = (options or AnnounceOptions()).validate()
        self._on_event = on_event
        self._online = online
        self._wall = wall
        self.metrics = SpeakerMetrics()
        self._collector = Collector(clock, self._options, self._dropped)
        self._window = CoalesceWindow(clock, self._options, self._pump)
        self._seq = itertools.count()
        self._epoch = 0
        self._current: _Utterance | None = None
        self._preempting: asyncio.Task[None] | None = None
        self._closing = False  # no new messages
        self._halted = False  # start nothing any more
        self._shutdown: asyncio.Task[None] | None = None
        self._idle_waiters: list[asyncio.Future[None]] = []
        self._retry: Cancellable | None = None  # backoff after a failed utterance
        self._prefetch = prefetch
        self._prefetched: str | None = None  # the next utterance's text, started
        self._retry_backoff = Backoff(RETRY_FIRST_S, RETRY_MAX_S, jitter=False)
        # Each admitted message's fate, for whoever submitted it (``Receipt``).
        self._fates: dict[str, asyncio.Future[Status]] = {}

    # -- what the glue calls ---------------------------------------------------

    @property
    def options(self) -> AnnounceOptions:
        """The options in use."""
        return self._options

    def set_options(self, options: AnnounceOptions) -> None:
        """Use ``options`` from now on (waiting messages keep their expiry)."""
        self._options = options.validate()
        self._collector.set_options(options)
        self._window.options = options

    @property
    def online(self) -> bool:
        """Whether utterances may start."""
        return self._online

    def set_online(self, online: bool) -> None:
        """The speaker connected or disconnected (what waits is said on return)."""
        if online == self._online:
            return
        self._online = online
        if online:
            self._epoch += 1
        self._pump()

    def submit(
        self, request: AnnounceRequest, announcement_id: str | None = None
    ) -> Receipt:
        """Admit one message (event loop only; ``Announcer.announce`` hops threads)."""
        item_id = announcement_id or new_id()
        if self._closing:
            return Receipt(self.name, item_id, ReceiptStatus.REJECTED)
        item, truncated = self._new_item(request, item_id)
        self.metrics.received += 1
        alone = self.idle  # nothing waits or plays: probably said as written
        settled = self._fates[item_id] = asyncio.get_running_loop().create_future()
        reason = self._collector.offer(item)  # a drop settles it at once
        if reason is not None:
            return Receipt(
                self.name, item_id, ReceiptStatus.DROPPED, reason, truncated, settled
            )
        if item.priority is Priority.CRITICAL:
            # A new critical does not wait out a retry's backoff: it is tried
            # now, together with the messages waiting to be tried again.
            self._cancel_retry()
            self._pump()
        else:
            if alone:
                # Its synthesis starts while the merge window waits (a burst
                # wastes one). The admitted text: cut to its limit already.
                self._prefetch_once(item.text)
            self._window.arrived()
        return Receipt(
            self.name, item_id, ReceiptStatus.QUEUED, None, truncated, settled
        )

    @property
    def queue_depth(self) -> int:
        """Messages waiting."""
        return len(self._collector)

    @property
    def in_flight(self) -> int:
        """Messages being said now."""
        return 0 if self._current is None else len(self._current.items)

    @property
    def idle(self) -> bool:
        """Nothing waits and nothing is being said."""
        return (
            self._current is None and self._preempting is None and not self._collector
        )

    def snapshot(self) -> MetricsSnapshot:
        """This speaker's metrics now."""
        return summarize([self.parts()])

    def parts(self) -> tuple[SpeakerMetrics, int, int]:
        """(counters, queue depth, in flight): what ``metrics.summarize`` adds up."""
        return self.metrics, self.queue_depth, self.in_flight

    async def shutdown(self, *, goodbye: bool = False) -> None:
        """Say what is queued (bounded), then the goodbye if asked; accept no more.

        Safe to call twice: the second call waits for the first.
        """
        if self._shutdown is None:
            self._shutdown = asyncio.get_running_loop().create_task(
                self._shut_down(goodbye),
                name=f"voicestack announcer {self.name} shutdown",
            )
        await self._shutdown

    # -- decisions ---------------------------------------------------------------

    def _pump(self) -> None:
        """Start what may start now; the single place where that is decided."""
        if (
            not self._halted
            and self._online
            and self._preempting is None
            and self._retry is None
        ):
            current = self._current
            if self._collector.critical_count:
                if current is None or not current.critical:
                    self._preempting = asyncio.get_running_loop().create_task(
                        self._preempt(current)
                    )
            elif current is None and self._window.ready:
                batch = self._collector.take_batch()
                self._window.reset()
                if batch:
                    self._start(batch, critical=False)
            elif current is not None and self._window.ready:
                self._prefetch_next()
        self._wake_idle_waiters()

    async def _preempt(self, current: _Utterance | None) -> None:
        """Clear the speaker for the waiting criticals, then say them."""
        try:
            if (
                current is not None
                and current.task is not None
                and not current.task.done()
            ):
                current.interrupted = InterruptReason.CRITICAL
                self.metrics.interrupts += 1
                current.task.cancel()
                await asyncio.wait((current.task,))
            await self._stop_playback()
        finally:
            self._preempting = None
        if (
            self._online
            and not self._halted
            and self._current is None
            and self._collector.critical_count
        ):
            self._start(self._collector.take_critical(), critical=True)
        else:
            self._pump()

    def _prefetch_next(self) -> None:
        """Synthesize what comes next while the current utterance plays.

        It is composed as it would be now; what arrives meanwhile changes the
        text, and then this synthesis was in vain (Home Assistant's TTS cache
        keeps it). Each text is started once.
        """
        if batch := self._collector.peek_batch():
            self._prefetch_once(compose(batch, self._options).text)

    def _prefetch_once(self, text: str) -> None:
        if text != self._prefetched:
            self._prefetched = text
            self._prefetch(text)

    def _start(self, items: Sequence[Announcement], *, critical: bool) -> None:
        composition = compose(items, self._options)
        spoken_categories = superseded_by(item.category for item in composition.items)
        stale = [
            *composition.stale,
            *self._collector.remove_categories(spoken_categories),
        ]
        if stale:
            self._dropped(stale, DropReason.STALE)
        utterance = _Utterance(
            composition.text, composition.items, critical, self._epoch
        )
        self._current = utterance
        self._emit(Status.STARTED, utterance.items, utterance.text)
        utterance.task = asyncio.get_running_loop().create_task(
            self._say_utterance(utterance), name=f"voicestack announce {self.name}"
        )
        utterance.task.add_done_callback(partial(self._finished, utterance))

    async def _say_utterance(self, utterance: _Utterance) -> SayResult:
        return await self._say(utterance.text, utterance.ids)

    def _finished(self, utterance: _Utterance, task: asyncio.Task[SayResult]) -> None:
        """Give the utterance's messages their fate, then see what is next."""
        if self._current is utterance:
            self._current = None
        if utterance.interrupted is not None:
            self._discard(utterance, utterance.interrupted, _cut_outcome(task))
        elif task.cancelled():  # cancelled from outside, e.g. the loop is closing
            self._discard(utterance, InterruptReason.SHUTDOWN)
        elif (error := task.exception()) is not None:
            _LOGGER.warning("Could not announce on %s: %s", self.name, error)
            self._failed(utterance)
        else:
            result = task.result()
            outcome = result.outcome
            if outcome == "lost":
                self._requeue_lost(utterance)
            elif outcome in _CUT_BY:
                self._discard(utterance, _CUT_BY[outcome], outcome)
            elif outcome != "played":  # empty (or unknown): nothing was said
                self._failed(utterance)
            else:  # the satellite confirmed it played to its end
                self._retry_backoff.reset()
                self.metrics.record_heard(
                    utterance.items, result.first_audio_at, self._wall()
                )
                self._emit(
                    Status.FINISHED, utterance.items, utterance.text, outcome=outcome
                )
        self._pump()

    def _failed(self, utterance: _Utterance) -> None:
        """Nothing could be said: high and critical wait and try again (backoff).

        The rest is dropped (``failed``), and so are messages whose time to live
        is over; the collector's expiry drops the others once theirs ends.
        """
        now = self._clock.now()
        again = tuple(
            item
            for item in utterance.items
            if item.priority in _RETRIED and item.expires_at > now and not self._halted
        )
        if given_up := [item for item in utterance.items if item not in again]:
            self._dropped(given_up, DropReason.FAILED)
        if not again:
            return
        self.metrics.retries += 1
        delay = self._retry_backoff.next_delay()
        _LOGGER.info(
            "%s: %d message(s) could not be said; trying again in %g s",
            self.name,
            len(again),
            delay,
        )
        self._emit(
            Status.INTERRUPTED, again, utterance.text, InterruptReason.FAILED, "failed"
        )
        self._collector.requeue(again)
        self._cancel_retry()
        self._retry = self._clock.call_later(delay, self._retry_now)

    def _cancel_retry(self) -> None:
        if self._retry is not None:
            self._retry.cancel()
            self._retry = None

    def _retry_now(self) -> None:
        self._retry = None
        if self._collector.batch_count:
            self._window.flush_now()
        self._pump()

    def _discard(
        self, utterance: _Utterance, reason: InterruptReason, outcome: str | None = None
    ) -> None:
        self.metrics.record_drop(_DISCARDED_AS[reason], len(utterance.items))
        self._emit(Status.INTERRUPTED, utterance.items, utterance.text, reason, outcome)

    def _requeue_lost(self, utterance: _Utterance) -> None:
        """The speaker went away mid-utterance: say it again after reconnecting."""
        self._emit(
            Status.INTERRUPTED,
            utterance.items,
            utterance.text,
            InterruptReason.LOST,
            "lost",
        )
        if utterance.epoch == self._epoch:  # no reconnect since it started
            self._online = False
        self._collector.requeue(utterance.items)
        if self._collector.batch_count:
            self._window.flush_now()

    async def _stop_playback(self) -> None:
        try:
            await self._stop()
        except Exception:
            _LOGGER.warning("Stopping playback on %s failed", self.name, exc_info=True)

    # -- shutdown ----------------------------------------------------------------

    async def _shut_down(self, goodbye: bool) -> None:
        self._closing = True
        options = self._options
        self._cancel_retry()  # one more try now, within the flush time
        if self._collector.batch_count:
            self._window.flush_now()
        self._pump()
        if not await self._wait_idle(options.shutdown_flush_s):
            self._halted = True
            await self._cut_short()
            if leftovers := self._collector.drain():
                self._dropped(leftovers, DropReason.SHUTDOWN)
        self._halted = True
        text = options.goodbye.strip()
        if goodbye and text and self._online:
            request = AnnounceRequest(
                text, Priority.CRITICAL, "shutdown", GOODBYE_SOURCE
            )
            item, _ = self._new_item(request, new_id())
            self.metrics.received += 1
            self._start([item], critical=True)
            if not await self._wait_idle(options.goodbye_timeout_s):
                await self._cut_short()
        self._window.reset()
        self._collector.close()

    async def _cut_short(self) -> None:
        """Shutdown ran out of time: cancel what is in flight, stop playback."""
        if (preempting := self._preempting) is not None:
            preempting.cancel()
            await asyncio.wait((preempting,))
        current = self._current
        if current is not None and current.task is not None and not current.task.done():
            current.interrupted = InterruptReason.SHUTDOWN
            current.task.cancel()
            await asyncio.wait((current.task,))
        await self._stop_playback()

    def _settled(self) -> bool:
        return self.idle or not self._online

    async def _wait_idle(self, timeout_s: float) -> bool:
        """Wait (on the clock) until idle or offline; True if idle."""
        if not self._settled():
            waiter = asyncio.get_running_loop().create_future()
            self._idle_waiters.append(waiter)
            timer = self._clock.call_later(timeout_s, partial(_resolve, waiter))
            try:
                await waiter
            finally:
                timer.cancel()
                with contextlib.suppress(ValueError):
                    self._idle_waiters.remove(waiter)
        return self.idle

    def _wake_idle_waiters(self) -> None:
        if self._idle_waiters and self._settled():
            for waiter in self._idle_waiters:
                _resolve(waiter)
            self._idle_waiters.clear()

    # -- bookkeeping -------------------------------------------------------------

    def _new_item(
        self, request: AnnounceRequest, item_id: str
    ) -> tuple[Announcement, bool]:
        now = self._clock.now()
        limit = self._options.max_message_length
        text = request.text
        truncated = len(text) > limit
        if truncated:
            text = text[:limit].rstrip()
        ttl_s = request.ttl_s or self._options.ttl_s(request.priority)
        item = Announcement(
            id=item_id,
            text=text,
            priority=request.priority,
            category=request.category,
            source=request.source,
            created_at=now,
            expires_at=now + ttl_s,
            seq=next(self._seq),
            dedup_key=request.dedup_key or f"{request.category}\x00{text.casefold()}",
        )
        return item, truncated

    def _dropped(self, items: Iterable[Announcement], reason: DropReason) -> None:
        """Every drop comes through here: one count and one event per message."""
        for item in items:
            self.metrics.record_drop(reason)
            self._emit(Status.DROPPED, (item,), item.text, reason)

    def _emit(
        self,
        status: Status,
        items: Sequence[Announcement],
        text: str,
        reason: DropReason | InterruptReason | None = None,
        outcome: str | None = None,
    ) -> None:
        """Report ``status``; a message's final one also settles its fate."""
        if status is not Status.STARTED and reason not in _SAID_AGAIN:
            for item in items:
                settled = self._fates.pop(item.id, None)
                if settled is not None and not settled.done():
                    settled.set_result(status)
        if self._on_event is None:
            return
        event = AnnouncementEvent(
            speaker=self.name,
            status=status,
            ids=tuple(item.id for item in items),
            text=text,
            priority=max((item.priority for item in items), key=lambda p: p.rank),
            categories=tuple(dict.fromkeys(item.category for item in items)),
            reason=reason,
            outcome=outcome,
            speaker_kind=self.kind,
        )
        try:
            self._on_event(event)
        except Exception:
            _LOGGER.exception("Announcement event listener failed")


def _cut_outcome(task: asyncio.Task[SayResult]) -> str:
    """How an utterance this announcer cut short ended: ``stopped``.

    It was cancelled and its playback stopped (a critical took over, or
    shutdown ran out of time); if ``say`` had returned just before, its outcome.
    """
    if task.cancelled() or task.exception() is not None:
        return "stopped"
    return task.result().outcome


def _resolve(waiter: asyncio.Future[None]) -> None:
    if not waiter.done():
        waiter.set_result(None)
