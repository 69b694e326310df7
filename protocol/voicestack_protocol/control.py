"""What a peer (Home Assistant) sends a satellite to steer it, built and parsed.

The hello, playback control (pause, resume, flush, the stream id and barge-in
mark in ``audio-start``) and listening without a wake word. Barge-in's own
settings and requests are in ``barge_in_control.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wyoming.audio import AudioStart
from wyoming.event import Event

from .checks import event_data, is_id, is_int, is_number
from .names import (
    ASKED_FOR,
    BARGE_IN_FIELD,
    DEFAULT_LISTEN_S,
    END_OF_SPEECH_S,
    FLUSH,
    HELLO,
    LISTEN,
    MAX_LISTEN_S,
    MAX_STREAM_ID,
    PAUSE,
    PROTOCOL_VERSION,
    RESUME,
    STREAM,
)


@dataclass(frozen=True, slots=True)
class Hello:
    """A peer that wants the satellite's own events (and maybe its end of speech)."""

    protocol: int | None
    end_of_speech_s: float | None  # end a request after this much quiet
    accepts: tuple[str, ...] = ()  # satellite events it takes that need asking for


@dataclass(frozen=True, slots=True)
class Resume:
    """Resume playback, at sample ``offset`` of the current stream if given."""

    offset: int | None


@dataclass(frozen=True, slots=True)
class Listen:
    """Open the mic without a wake word: exactly one field is set.

    ``timeout`` 0 closes an open window; ``continuous`` turns always-listening
    on or off.
    """

    timeout: float | None
    continuous: bool | None


def hello_event(end_of_speech_s: float | None = None) -> Event:
    """Ask for the satellite's own events, and for its end of speech after a pause.

    ``accepts`` names the events the satellite sends only when asked for by name.
    """
    data: dict[str, Any] = {"protocol": PROTOCOL_VERSION, "accepts": list(ASKED_FOR)}
    if end_of_speech_s is not None:
        data["end_of_speech_s"] = end_of_speech_s
    return Event(HELLO, data)


def parse_hello(event: Event) -> Hello:
    """A ``voicestack-hello``; ``end_of_speech_s`` must lie in ``END_OF_SPEECH_S``.

    ``accepts``, if given, is a list of event names.
    """
    data = event_data(event, HELLO)
    protocol, silence = data.get("protocol"), data.get("end_of_speech_s")
    accepts = data.get("accepts", [])
    if not isinstance(accepts, list) or not all(isinstance(a, str) for a in accepts):
        raise ValueError(f"{HELLO}: accepts {accepts!r:.80} is not a list of names")
    if protocol is not None and not is_int(protocol):
        raise ValueError(f"{HELLO}: protocol {protocol!r} is not a version number")
    low, high = END_OF_SPEECH_S
    if silence is not None and not (is_number(silence) and low <= silence <= high):
        raise ValueError(
            f"{HELLO}: end_of_speech_s {silence!r} is not {low:g} to {high:g} s"
        )
    return Hello(
        protocol=protocol,
        end_of_speech_s=None if silence is None else float(silence),
        accepts=tuple(accepts),
    )


def pause_event() -> Event:
    """Pause playback, keeping what is queued."""
    return Event(PAUSE, {})


def resume_event(offset: int | None = None) -> Event:
    """Resume playback, at sample ``offset`` of the current stream if given."""
    return Event(RESUME, {} if offset is None else {"offset": _offset(offset)})


def parse_resume(event: Event) -> Resume:
    """A ``voicestack-resume``; an ``offset`` must be a sample (>= 0)."""
    offset = event_data(event, RESUME).get("offset")
    return Resume(offset=None if offset is None else _offset(offset))


def _offset(offset: object) -> int:
    if not is_int(offset) or offset < 0:
        raise ValueError(f"{RESUME}: offset {offset!r} is not a sample offset")
    return offset


def flush_event() -> Event:
    """Drop all queued playback now."""
    return Event(FLUSH, {})


def listen_event(
    *, timeout: float | None = None, continuous: bool | None = None
) -> Event:
    """Open the mic without a wake word: once for ``timeout`` s, or ``continuous``.

    ``timeout`` 0 closes an open window; exactly one of the two is given.
    """
    if (timeout is None) == (continuous is None):
        raise ValueError(f"{LISTEN}: give either timeout or continuous")
    if continuous is not None:
        return Event(LISTEN, {"continuous": continuous})
    return Event(LISTEN, {"timeout": timeout})


def parse_listen(event: Event) -> Listen:
    """A ``voicestack-listen``: ``continuous``, or a ``timeout`` of 0 to 60 s."""
    data = event_data(event, LISTEN)
    if "continuous" in data:
        continuous = data["continuous"]
        if not isinstance(continuous, bool):
            raise ValueError(f"{LISTEN}: continuous {continuous!r} is not a boolean")
        return Listen(timeout=None, continuous=continuous)
    timeout = data.get("timeout", DEFAULT_LISTEN_S)
    if not (is_number(timeout) and 0 <= timeout <= MAX_LISTEN_S):
        raise ValueError(
            f"{LISTEN}: timeout {timeout!r} is not 0 to {MAX_LISTEN_S:g} s"
        )
    return Listen(timeout=float(timeout), continuous=None)


def audio_start_event(
    rate: int, width: int, channels: int, stream: str, *, barge_in: bool = False
) -> Event:
    """Wyoming's ``audio-start``, plus the peer's id of the stream (echoed in reports).

    ``barge_in``: speech may pause this stream (a voice response).
    """
    event = AudioStart(rate=rate, width=width, channels=channels).event()
    event.data[STREAM] = stream
    if barge_in:
        event.data[BARGE_IN_FIELD] = True
    return event


def parse_stream_id(event: Event) -> str | None:
    """The peer's stream id in ``audio-start``; ``None`` from a stock peer.

    An id must be a printable string of 1 to ``MAX_STREAM_ID`` characters, so
    what is echoed back is always safe to log and compare.
    """
    value = (event.data or {}).get(STREAM)
    if value is None:
        return None
    if not is_id(value, MAX_STREAM_ID):
        raise ValueError(
            f"audio-start stream id {value!r:.80}: not a printable string of "
            f"1 to {MAX_STREAM_ID} characters"
        )
    return value


def stream_may_pause(event: Event) -> bool:
    """Whether an ``audio-start`` marks its stream as one speech may pause."""
    return (event.data or {}).get(BARGE_IN_FIELD) is True
