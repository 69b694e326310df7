"""VoiceStack's Wyoming extensions, Home Assistant's side (docs/protocol.md).

The satellite's twin is ``voicestack_satellite/protocol.py``: both define the
same names with the same values, and tests/core/test_protocol_agreement.py pins
them together, so the two sides cannot drift apart. Each side builds what it
sends and parses what it receives; a parser raises ``ValueError`` saying what is
wrong, so the caller can log it and carry on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from wyoming.audio import AudioStart
from wyoming.event import Event

PROTOCOL_VERSION: Final = 1
INFO_KEY: Final = "voicestack"  # the block a voicestack-satellite adds to ``info``

# satellite -> peer
PREROLL: Final = "voicestack-preroll"  # {samples, rate, cut, start?}
PROGRESS: Final = "voicestack-progress"  # {stream, played, total, state}
NO_SPEECH: Final = "voicestack-no-speech"  # {}: the request ended with nobody speaking
# {id, message, priority?, category?, source?, dedup_key?, ttl?}: a line from the
# satellite's local announce socket, for our announcer (asked for in the hello)
ANNOUNCE: Final = "voicestack-announce"
# Barge-in (core/barge_in_protocol.py builds and parses these):
BARGE_IN: Final = "voicestack-barge-in"  # {stream, played, onset}: speech paused it
VOICE: Final = (
    "voicestack-voice"  # {stream, person, score, seconds}: the gate's verdict
)
VOICEPRINT: Final = "voicestack-voiceprint"  # {id, embedding, seconds} | {id, error}

# peer -> satellite
HELLO: Final = "voicestack-hello"  # {protocol, end_of_speech_s?, accepts?}
PAUSE: Final = "voicestack-pause"  # {}: pause playback within one block
RESUME: Final = "voicestack-resume"  # {offset?}: resume, optionally at a sample
FLUSH: Final = "voicestack-flush"  # {}: drop queued playback now
LISTEN: Final = "voicestack-listen"  # {timeout} once, or {continuous: bool}
# {enabled, min_speech_s, echo_cancel, threshold, voiceprints}: barge-in settings
BARGE_IN_CONFIG: Final = "voicestack-barge-in-config"
BARGE_IN_REQUEST: Final = "voicestack-barge-in-request"  # {stream}: the user spoke
ENROLL: Final = "voicestack-enroll"  # {id, max_s}: record a phrase, answer VOICEPRINT

SATELLITE_EVENTS: Final = (
    PREROLL,
    PROGRESS,
    NO_SPEECH,
    ANNOUNCE,
    BARGE_IN,
    VOICE,
    VOICEPRINT,
)
PEER_EVENTS: Final = (
    HELLO,
    PAUSE,
    RESUME,
    FLUSH,
    LISTEN,
    BARGE_IN_CONFIG,
    BARGE_IN_REQUEST,
    ENROLL,
)

# In audio-start (peer -> satellite), echoed in played and voicestack-progress:
# the peer's id of the stream; played and voicestack-progress also say how far
# it got (STATE).
STREAM: Final = "stream"
STATE: Final = "state"
PLAYING: Final = "playing"  # voicestack-progress only: still going
PLAYED: Final = "played"  # played to its end
FLUSHED: Final = "flushed"  # dropped before its end
MAX_STREAM_ID: Final = 64  # characters
# In audio-start: speech may pause this stream (a voice response, not an announcement).
BARGE_IN_FIELD: Final = "barge_in"
MIN_SPEECH_S: Final = (0.1, 2.0)  # the range BARGE_IN_CONFIG's min_speech_s may take
EMBEDDING_SIZE: Final = 256  # floats in a voiceprint (GE2E)
MAX_VOICEPRINTS: Final = 50  # entries in BARGE_IN_CONFIG's voiceprints
ENROLL_MAX_S: Final = (1.0, 30.0)  # the range ENROLL's max_s may take
VOICEPRINT_ERRORS: Final = ("no_speech", "too_short", "unavailable", "cancelled")
_PROGRESS_STATES: Final = (PLAYING, PLAYED, FLUSHED)
# The optional fields of ANNOUNCE, as voicestack.announce names them, and the
# priorities it knows (core/announce's ``Priority``; tests/core pins them).
ANNOUNCE_OPTIONAL: Final = ("priority", "category", "source", "dedup_key", "ttl")
ANNOUNCE_PRIORITIES: Final = ("critical", "high", "normal", "low")
# Satellite events a voicestack-satellite sends only to a peer that names them
# in its hello's ``accepts``: the ones Home Assistant handles.
ASKED_FOR: Final = (ANNOUNCE,)
_MAX_ANNOUNCE_ID: Final = 64  # characters


@dataclass(frozen=True, slots=True)
class InfoBlock:
    """The ``voicestack`` block of a satellite's ``info``."""

    id: str
    protocol: int
    sends: tuple[str, ...]
    accepts: tuple[str, ...]
    voiceprint: bool = False  # its speaker gate can run (barge-in verdicts)


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
    """How far the satellite has played one of our streams."""

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


def parse_info(info_data: Mapping[str, Any] | None) -> InfoBlock | None:
    """Read the ``voicestack`` block from an ``info`` event's data.

    ``None`` when it is missing or unusable (no non-empty string ``id``): such a
    peer is a stock Wyoming satellite, which is not an error. A block with a
    protocol that is not a number reads as protocol 0, so it gets the repair
    issue of a satellite on another protocol version.
    """
    block = (info_data or {}).get(INFO_KEY)
    if not isinstance(block, Mapping):
        return None
    satellite_id = block.get("id")
    if not isinstance(satellite_id, str) or not satellite_id.strip():
        return None
    protocol = block.get("protocol")
    return InfoBlock(
        id=satellite_id.strip(),
        protocol=protocol if is_int(protocol) else 0,
        sends=_names(block.get("sends")),
        accepts=_names(block.get("accepts")),
        voiceprint=block.get("voiceprint") is True,
    )


def audio_start_event(
    rate: int, width: int, channels: int, stream: str, *, barge_in: bool = False
) -> Event:
    """Wyoming's ``audio-start``, plus our id of the stream (echoed in reports).

    ``barge_in``: speech may pause this stream (a voice response).
    """
    event = AudioStart(rate=rate, width=width, channels=channels).event()
    event.data[STREAM] = stream
    if barge_in:
        event.data[BARGE_IN_FIELD] = True
    return event


def hello_event(end_of_speech_s: float | None = None) -> Event:
    """Ask for the satellite's own events, and for its end of speech after a pause.

    ``accepts`` names the events the satellite sends only when asked for by name.
    """
    data: dict[str, Any] = {"protocol": PROTOCOL_VERSION, "accepts": list(ASKED_FOR)}
    if end_of_speech_s is not None:
        data["end_of_speech_s"] = end_of_speech_s
    return Event(HELLO, data)


def pause_event() -> Event:
    """Pause playback, keeping what is queued."""
    return Event(PAUSE, {})


def resume_event(offset: int | None = None) -> Event:
    """Resume playback, at sample ``offset`` of the current stream if given."""
    if offset is not None and (not is_int(offset) or offset < 0):
        raise ValueError(f"{RESUME}: offset {offset!r} is not a sample offset")
    return Event(RESUME, {} if offset is None else {"offset": offset})


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


def parse_progress(event: Event) -> Progress:
    """A ``voicestack-progress`` report of one of our streams."""
    data = event_data(event, PROGRESS)
    stream, played = data.get(STREAM), data.get("played")
    total, state = data.get("total"), data.get(STATE)
    if not isinstance(stream, str) or not stream:
        raise ValueError(f"{PROGRESS}: stream {stream!r} is not a stream id")
    if not is_int(played) or played < 0:
        raise ValueError(f"{PROGRESS}: played {played!r} is not a sample count")
    if total is not None and (not is_int(total) or total < 0):
        raise ValueError(f"{PROGRESS}: total {total!r} is not a sample count")
    if state not in _PROGRESS_STATES:
        raise ValueError(
            f"{PROGRESS}: state {state!r} is not one of {_PROGRESS_STATES}"
        )
    return Progress(stream=stream, played=played, total=total, state=state)


def parse_no_speech(event: Event) -> NoSpeech:
    """A ``voicestack-no-speech``: it carries nothing but its type."""
    event_data(event, NO_SPEECH)
    return NoSpeech()


def parse_announce(event: Event) -> Announce:
    """A ``voicestack-announce``: its id, a message and optional strings and ttl."""
    data = event_data(event, ANNOUNCE)
    announce_id, message = data.get("id"), data.get("message")
    if (
        not isinstance(announce_id, str)
        or not 0 < len(announce_id) <= _MAX_ANNOUNCE_ID
        or not announce_id.isprintable()
    ):
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


def event_data(event: Event, expected: str) -> Mapping[str, Any]:
    """``event``'s data (empty if none); ValueError if it is not an ``expected``."""
    if event.type != expected:
        raise ValueError(f"expected {expected}, got {event.type}")
    return event.data or {}


def is_int(value: object) -> TypeGuard[int]:
    """An int that is not a bool (JSON ``true`` is no sample count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[float]:
    """An int that is not a bool, or a float."""
    return is_int(value) or isinstance(value, float)


def _names(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(item for item in value if isinstance(item, str))
