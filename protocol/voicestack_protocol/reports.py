"""What a satellite reports to its peer, built and parsed.

A request's preroll, how far playback got (``voicestack-progress`` and the
stream id and state added to Wyoming's ``played``), a request without speech,
and announcements from the satellite's local socket. Barge-in's reports are in
``barge_in_reports.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wyoming.event import Event
from wyoming.snd import Played

from .checks import event_data, is_id, is_int, is_number
from .names import (
    ANNOUNCE,
    ANNOUNCE_OPTIONAL,
    MAX_REQUEST_ID,
    NO_SPEECH,
    PREROLL,
    PROGRESS,
    PROGRESS_STATES,
    STATE,
    STREAM,
)


@dataclass(frozen=True, slots=True)
class Preroll:
    """How much of a request's audio was recorded before the cut."""

    samples: int
    rate: int
    cut: int  # absolute mic sample of the wake word (or speech onset)
    # Absolute mic sample of the first preroll sample (None: an older satellite,
    # whose preroll ends at the cut after a wake word).
    start: int | None = None


@dataclass(frozen=True, slots=True)
class Progress:
    """How far the satellite has played one of the peer's streams."""

    stream: str
    played: int  # samples, in the stream's own rate
    total: int | None
    state: str  # PLAYING | PLAYED | FLUSHED


@dataclass(frozen=True, slots=True)
class NoSpeech:
    """The request ended with nobody speaking: drop it."""


@dataclass(frozen=True, slots=True)
class Announce:
    """An announcement a satellite's local client asked for.

    ``None``: not given (the announcer's default). Values are checked by
    ``voicestack.announce``, which answers bad ones with a translated error.
    """

    id: str  # the satellite's, for both sides' logs
    message: str
    priority: str | None = None
    category: str | None = None
    source: str | None = None
    dedup_key: str | None = None
    ttl: float | None = None  # seconds


@dataclass(frozen=True, slots=True)
class PlayedReport:
    """What a voicestack-satellite adds to the standard ``played``.

    Both are ``None`` from a stock satellite, whose bare ``played`` ends the
    oldest open stream.
    """

    stream: str | None
    state: str | None


def preroll_event(samples: int, rate: int, cut: int, start: int | None = None) -> Event:
    """Before a request's audio: how much of it was recorded before live audio.

    ``start``: the absolute mic sample of the first preroll sample, so the peer
    can place ``cut`` in the request's audio (``cut - start``).
    """
    data = {"samples": samples, "rate": rate, "cut": cut}
    if start is not None:
        data["start"] = start
    return Event(PREROLL, data)


def parse_preroll(event: Event) -> Preroll:
    """The ``voicestack-preroll`` before a request's audio."""
    data = event_data(event, PREROLL)
    samples, rate, cut = data.get("samples"), data.get("rate"), data.get("cut")
    if not is_int(samples) or samples < 0:
        raise ValueError(f"{PREROLL}: samples {samples!r} is not a count")
    if not is_int(rate) or rate <= 0:
        raise ValueError(f"{PREROLL}: rate {rate!r} is not a sample rate")
    if not is_int(cut) or cut < 0:
        raise ValueError(f"{PREROLL}: cut {cut!r} is not a sample position")
    start = data.get("start")
    if start is not None and (not is_int(start) or start < 0):
        raise ValueError(f"{PREROLL}: start {start!r} is not a sample position")
    return Preroll(samples=samples, rate=rate, cut=cut, start=start)


def progress_event(stream: str, played: int, total: int | None, state: str) -> Event:
    """How far one of the peer's streams has played (``state``: PLAYING...)."""
    return Event(
        PROGRESS, {STREAM: stream, "played": played, "total": total, STATE: state}
    )


def parse_progress(event: Event) -> Progress:
    """A ``voicestack-progress`` report of one of the peer's streams."""
    data = event_data(event, PROGRESS)
    stream, played = data.get(STREAM), data.get("played")
    total, state = data.get("total"), data.get(STATE)
    if not isinstance(stream, str) or not stream:
        raise ValueError(f"{PROGRESS}: stream {stream!r} is not a stream id")
    if not is_int(played) or played < 0:
        raise ValueError(f"{PROGRESS}: played {played!r} is not a sample count")
    if total is not None and (not is_int(total) or total < 0):
        raise ValueError(f"{PROGRESS}: total {total!r} is not a sample count")
    if state not in PROGRESS_STATES:
        raise ValueError(f"{PROGRESS}: state {state!r} is not one of {PROGRESS_STATES}")
    return Progress(stream=stream, played=played, total=total, state=state)


def no_speech_event() -> Event:
    """The request ended with nobody speaking: the peer drops it."""
    return Event(NO_SPEECH, {})


def parse_no_speech(event: Event) -> NoSpeech:
    """A ``voicestack-no-speech``: it carries nothing but its type."""
    event_data(event, NO_SPEECH)
    return NoSpeech()


def announce_event(announce_id: str, fields: Mapping[str, object]) -> Event:
    """An announcement for the peer: ``message`` and ``ANNOUNCE_OPTIONAL`` fields.

    Fields that are ``None`` are not sent (the announcer's default applies);
    ``announce_id`` names the request in both sides' logs.
    """
    data = {"id": announce_id, "message": fields["message"]}
    for key in ANNOUNCE_OPTIONAL:
        if (value := fields.get(key)) is not None:
            data[key] = value
    return Event(ANNOUNCE, data)


def parse_announce(event: Event) -> Announce:
    """A ``voicestack-announce``: its id, a message and optional strings and ttl."""
    data = event_data(event, ANNOUNCE)
    announce_id, message = data.get("id"), data.get("message")
    if not is_id(announce_id, MAX_REQUEST_ID):
        raise ValueError(f"{ANNOUNCE}: id {announce_id!r:.80} is not a request id")
    if not isinstance(message, str) or not message.strip():
        raise ValueError(f"{ANNOUNCE}: message {message!r:.80} is not a text")
    fields: dict[str, Any] = {}
    for key in ANNOUNCE_OPTIONAL:
        value = data.get(key)
        if key == "ttl":
            if value is not None and not is_number(value):
                raise ValueError(f"{ANNOUNCE}: ttl {value!r:.80} is not seconds")
        elif value is not None and not isinstance(value, str):
            raise ValueError(f"{ANNOUNCE}: {key} {value!r:.80} is not a string")
        fields[key] = value
    return Announce(id=announce_id, message=message, **fields)


def played_event(stream: str, state: str) -> Event:
    """Wyoming's ``played``, plus the peer's stream id and how it ended."""
    event = Played().event()
    event.data.update({STREAM: stream, STATE: state})
    return event


def parse_played(event: Event) -> PlayedReport:
    """The stream id and end state a voicestack-satellite adds to ``played``.

    A ``state`` that is not a string is ignored (read as played to its end); a
    ``stream`` that is not a string cannot be matched to any stream: an error.
    """
    data = event.data or {}
    stream, state = data.get(STREAM), data.get(STATE)
    if stream is not None and not isinstance(stream, str):
        raise ValueError(f"'played' with stream id {stream!r} (not a string)")
    return PlayedReport(stream=stream, state=state if isinstance(state, str) else None)
