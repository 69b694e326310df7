"""Barge-in on one satellite: its settings, its verdicts and what they do.

The satellite pauses a voice response on speech by itself (it never waits for
Home Assistant) and reports ``voicestack-barge-in``; its voice gate then
names the voice (``voicestack-voice``). What follows is decided by the
HA-free ``core.barge_in.BargeIn`` (the enrolled user: stop, and the speech is
the next request; anyone else: resume at the interrupted sentence's start; 10 s
without a verdict: stop; at most 3 resumes, 2 s apart), and carried out here:

- RESUME: ``voicestack-resume {offset}``; the Speaker waits that much longer;
- STOP for the user: ``voicestack-barge-in-request``, the satellite flushes the
  answer and streams what was said as a request (no wake word);
- any other STOP, SILENCE or TIMEOUT: the answer is flushed, nothing is said.

Each of them is a ``voicestack_barge_in`` event and a counter. Every voice
response is one ``ResponseToken`` (``respond``): a verdict that comes late, for
an answer that was replaced, changes nothing.

The settings (switches and a number per satellite) and the enrolled voices
(``voiceprints/library.py``) go to the satellite in ``voicestack-barge-in-config`` on
every connect and change. A stock satellite gets none of this: its answers
cannot be paused.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, replace
import logging
from typing import Any, Final

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from wyoming.event import Event

from voicestack_protocol import (
    BARGE_IN,
    BARGE_IN_CONFIG,
    VOICE,
    VoiceReport,
    barge_in_config_event,
    barge_in_request_event,
    flush_event,
    parse_barge_in,
    parse_voice,
    resume_event,
)

from ..const import EVENT_BARGE_IN
from ..core.barge_in.policy import BargeInKind, BargeInRecord, Verdict
from ..core.barge_in.verdict import BargeIn
from ..core.clock import Clock, LoopClock
from ..core.resume_point import SentenceMismatchError
from ..core.wav import Pcm
from ..hub import SatelliteHub
from ..subscriptions import Subscribers
from ..voiceprints.library import VoiceprintLibrary

_LOGGER = logging.getLogger(__name__)

DEFAULT_MIN_SPEECH_S: Final = 0.3
# Cosine similarity to an enrolled voiceprint that makes a voice "theirs", for
# a satellite without the calibrated gate's cohort (issue 28): a satellite that
# has it judges normalized scores in its own bands and says which in the
# ``voicestack-voice`` event (docs/barge-in.md).
GATE_THRESHOLD: Final = 0.70
# A "not sure" voice whose cohort-normalized score is under this is closer to
# the cohort's voices than to the user's: taken for another voice.
UNSURE_FLOOR: Final = 0.0


@dataclass(frozen=True, slots=True)
class BargeInSettings:
    """One satellite's barge-in settings (its switches and number)."""

    enabled: bool = True  # speech pauses a voice response
    gate: bool = True  # the voice gate tells the user from others
    min_speech_s: float = DEFAULT_MIN_SPEECH_S  # speech this long pauses
    echo_cancel: bool = True  # built-in echo cancellation (off: the energy gate)


@dataclass(slots=True)
class _Paused:
    """What the pause of the current response needs to carry out its end."""

    stream: str
    played: int
    rate: int
    voice: VoiceReport | None = None  # the gate's verdict, with its explanation
    held: bool = False  # its speech went on as a held request (CHECK)


class BargeInControl:
    """Barge-in of one satellite's voice responses."""

    def __init__(
        self,
        hass: HomeAssistant,
        hub: SatelliteHub,
        voiceprints: VoiceprintLibrary,
        clock: Clock | None = None,
    ) -> None:
        """Idle until ``start``; every response goes through ``respond``."""
        self._hass = hass
        self._hub = hub
        self._voiceprints = voiceprints
        self.settings = BargeInSettings()
        self._core = BargeIn(clock or LoopClock(hass.loop), self._record, self._gate_on)
        self._paused: _Paused | None = None
        self.unplaceable = 0  # pauses no response could take: flushed
        self._listeners = Subscribers[CALLBACK_TYPE]()
        self._unsubscribe: list[CALLBACK_TYPE] = []
        # One enrollment at a time (voiceprints/enrollment.py).
        self.enrolling = asyncio.Lock()

    @property
    def counters(self) -> dict[str, int]:
        """Totals since setup: pauses, resumes, stops, ... (diagnostics, sensors)."""
        return {**asdict(self._core.counters), "unplaceable": self.unplaceable}

    @property
    def enrolled_people(self) -> int:
        """How many people have an enrolled voice (any satellite)."""
        return len(self._voiceprints.people)

    @property
    def available(self) -> bool:
        """The satellite can pause its answers (a voicestack-satellite)."""
        return self._hub.link.supports(BARGE_IN_CONFIG)

    @property
    def enabled(self) -> bool:
        """Voice responses may be interrupted now (switch on, satellite able)."""
        return self.settings.enabled and self.available

    @property
    def gate_available(self) -> bool:
        """The satellite's voice gate can run."""
        block = self._hub.identity.voicestack
        return block is not None and block.voiceprint

    def start(self) -> None:
        """Follow the satellite's events, its connects and the enrolled voices."""
        self._unsubscribe = [
            self._hub.async_subscribe_events(self._on_event),
            self._hub.async_subscribe_connection(self._on_connection),
            self._voiceprints.async_subscribe(self.send_config),
        ]

    @callback
    def close(self) -> None:
        """Unload: forget the response, stop listening."""
        self._core.cancel()
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()

    @callback
    def async_add_listener(self, listener: CALLBACK_TYPE) -> CALLBACK_TYPE:
        """Hear every settings change and record (entities); the remover."""
        return self._listeners.add(listener)

    # -- settings -----------------------------------------------------------------

    def update(self, **changes: Any) -> None:
        """Change settings (``enabled``, ``gate``, ...) and tell the satellite."""
        self.settings = replace(self.settings, **changes)
        self.send_config()
        self._notify()

    @callback
    def send_config(self) -> None:
        """Send the settings and the enrolled voices (on connect and each change)."""
        if not (self._hub.connected and self.available):
            return
        s = self.settings
        self._hub.send_soon(
            barge_in_config_event(
                enabled=s.enabled,
                min_speech_s=s.min_speech_s,
                echo_cancel=s.echo_cancel,
                threshold=GATE_THRESHOLD,
                voiceprints=self._voiceprints.voiceprints() if s.gate else [],
            )
        )

    def _gate_on(self) -> bool:
        """A verdict is worth waiting for: the gate is on and someone is enrolled."""
        return (
            self.settings.gate
            and self.gate_available
            and bool(self._voiceprints.people)
        )

    # -- responses ----------------------------------------------------------------

    async def respond(
        self, text: str | None, parts: AsyncIterator[tuple[str, Pcm]]
    ) -> AsyncIterator[tuple[str, Pcm]]:
        """``parts`` of the response ``text``, tracked for barge-in, in order.

        ``text`` None: an answer the agent still writes (its sentences make it).

        A fresh token per response: when it is cancelled (stopped, replaced)
        no more of its sentences are handed on.
        """
        token = self._core.start_response(text)
        self._paused = None
        tracked = True
        async for sentence, pcm in parts:
            if tracked and token.cancelled:  # stopped or replaced: say no more
                break
            if tracked:
                try:
                    self._core.add_sentence(token, sentence, pcm.samples)
                except SentenceMismatchError as err:
                    # A sentence the engine could not say was skipped: offsets no
                    # longer name sentences. The rest is said; a pause is flushed.
                    _LOGGER.debug("Barge-in: %s; no resume for this answer", err)
                    tracked = False
                    self._core.cancel()
            yield sentence, pcm
        if tracked:
            self._core.finish(token)

    @callback
    def response_over(self) -> None:
        """The response was played (or ended): later reports of it are stale."""
        self._core.cancel()
        self._paused = None

    # -- the satellite's reports ----------------------------------------------------

    @callback
    def _on_connection(self, connected: bool) -> None:
        if connected:
            self.send_config()
        else:
            self.response_over()

    @callback
    def _on_event(self, event: Event) -> None:
        try:
            if event.type == BARGE_IN:
                self._on_barge_in(event)
            elif event.type == VOICE:
                self._on_voice(event)
        except ValueError as err:
            _LOGGER.warning("%s: ignoring %s", self._hub.entry.title, err)

    def _on_barge_in(self, event: Event) -> None:
        report = parse_barge_in(event)
        playback = self._hub.speaker.last
        token = self._core.current
        if self._core.waiting:  # one pause at a time; the first one stands
            self._core.counters.ignored_pauses += 1
            return
        if (
            playback is None
            or token is None
            or not playback.interruptible
            or not playback.streams
            or playback.streams[0] != report.stream
            or playback.rate is None
        ):
            self._unplaceable(report.stream)
            return
        self._paused = _Paused(report.stream, report.played, playback.rate)
        if not self._core.pause(token, report.played):
            self._paused = None
            self._unplaceable(report.stream)

    def _on_voice(self, event: Event) -> None:
        report = parse_voice(event)
        token, paused = self._core.current, self._paused
        if token is None or paused is None or paused.stream != report.stream:
            self._core.counters.stale_verdicts += 1
            return
        paused.voice = report
        self._core.verdict(token, self._verdict_of(report))

    def _verdict_of(self, report: VoiceReport) -> Verdict:
        """The gate's verdict; "not sure" only where it may still be the user.

        Not where the answer cannot be held (an older satellite flushes a held
        request), nor where the cohort says the voice is unlike the user's:
        a listener heard espeak-ng's command taken at a raw 0.68 whose
        normalized score was -6.1.
        """
        if report.person is not None:
            return Verdict.ENROLLED
        block = self._hub.identity.voicestack
        if (
            report.verdict == Verdict.UNSURE
            and block is not None
            and block.hold
            and (report.normalized is None or report.normalized >= UNSURE_FLOOR)
        ):
            return Verdict.UNSURE
        return Verdict.OTHER

    @property
    def checking(self) -> bool:
        """A paused answer waits for ``checked``: the request said over it."""
        return self._core.checking

    @callback
    def checked(self, command: bool) -> None:
        """The held request is a ``command`` (the answer stops) or not (resumes)."""
        self._core.checked(command)

    def _unplaceable(self, stream: str) -> None:
        """A pause no response of ours can take: flush it, or it stays paused."""
        self.unplaceable += 1
        _LOGGER.debug("Barge-in of stream %s: no response to resume; flushed", stream)
        self._hub.send_soon(flush_event())

    # -- verdicts carried out -------------------------------------------------------

    def _record(self, record: BargeInRecord) -> None:
        """The core decided: tell the satellite, the Speaker and the event bus."""
        paused = self._paused
        if paused is not None:
            if record.kind is BargeInKind.RESUME:
                assert record.resume_from is not None
                replay = (paused.played - record.resume_from) / paused.rate
                self._hub.speaker.extend(record.at - record.paused_at + replay)
                self._hub.send_soon(resume_event(record.resume_from))
            elif record.kind is BargeInKind.CHECK:
                self._hub.send_soon(barge_in_request_event(paused.stream, hold=True))
            elif record.kind is BargeInKind.STOP and record.request and not paused.held:
                self._hub.send_soon(barge_in_request_event(paused.stream))
            elif record.kind is not BargeInKind.PAUSE:
                self._hub.send_soon(flush_event())
        self._fire(record, paused)
        if record.kind is BargeInKind.CHECK and paused is not None:
            paused.held = True
        elif record.kind is not BargeInKind.PAUSE:
            self._paused = None
        self._notify()

    def _fire(self, record: BargeInRecord, paused: _Paused | None) -> None:
        _LOGGER.info(
            "%s: barge-in %s (%s) at sample %d",
            self._hub.entry.title,
            record.kind,
            record.reason,
            record.offset,
        )
        self._hass.bus.async_fire(
            EVENT_BARGE_IN,
            {
                "entity_id": self._hub.satellite_entity_id(),
                "kind": str(record.kind),
                "reason": str(record.reason),
                "response_id": record.response_id,
                "sentence": record.sentence,
                "offset": record.offset,
                "resume_from": record.resume_from,
                "request": record.request and record.kind is BargeInKind.STOP,
                **_voice_fields(paused.voice if paused else None),
                "paused_s": round(record.at - record.paused_at, 3),
            },
        )

    def _notify(self) -> None:
        for listener in self._listeners:
            listener()


def _voice_fields(voice: VoiceReport | None) -> dict[str, Any]:
    """The gate's verdict and why, for the ``voicestack_barge_in`` event."""
    return {
        "person": voice.person if voice else None,
        "score": voice.score if voice else None,
        "verdict": voice.verdict if voice else None,
        "normalized": voice.normalized if voice else None,
        "closest": voice.closest if voice else None,
        "cohort": dict(voice.cohort) if voice else None,
    }
