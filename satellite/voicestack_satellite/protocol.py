"""VoiceStack's extra Wyoming events, the satellite's side (docs/protocol.md).

The satellite stays a standard Wyoming satellite: a peer learns that these events
are understood from the ``voicestack`` key of ``info``, and the satellite sends its
own extension events only to a peer that asked for them with ``voicestack-hello``.

Home Assistant's twin is ``custom_components/voicestack/core/protocol.py``: both
define the same names with the same values, and tests/core pins them together.
Each side builds what it sends and parses what it receives; a parser raises
``ValueError`` saying what is wrong, so the caller logs one line and carries on.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeGuard

from wyoming.event import Event
from wyoming.snd import Played

PROTOCOL_VERSION: Final = 1
INFO_KEY: Final = "voicestack"  # the block this satellite adds to ``info``

# satellite -> peer
PREROLL: Final = "voicestack-preroll"  # {samples, rate, cut, start?}: buffered audio
PROGRESS: Final = "voicestack-progress"  # {stream, played, total, state}
NO_SPEECH: Final = "voicestack-no-speech"  # {}: the request ended with nobody speaking
# {id, message, priority?, category?, source?, dedup_key?, ttl?}: a line from the
# local announce socket, for Home Assistant's announcer; sent only to a peer
# whose hello lists it in ``accepts``
ANNOUNCE: Final = "voicestack-announce"
# Barge-in (barge_in_protocol.py builds and parses these):
BARGE_IN: Final = "voicestack-barge-in"  # {stream, played, onset}: speech paused it
VOICE: Final = (
    "voicestack-voice"  # {stream, person, score, seconds}: the gate's verdict
)
VOICEPRINT: Final = "voicestack-voiceprint"  # {id, embedding, seconds} | {id, error}

# peer -> satellite
# {protocol, end_of_speech_s?, accepts?}: send me our events (``accepts``: the
# ones that need asking for by name, e.g. ANNOUNCE)
HELLO: Final = "voicestack-hello"
PAUSE: Final = "voicestack-pause"  # {}: pause playback within one block
RESUME: Final = "voicestack-resume"  # {offset?}: resume, optionally at a sample
FLUSH: Final = "voicestack-flush"  # {}: drop queued playback now
# {timeout}: open the mic without a wake word once (0 closes the window);
# {continuous: bool}: stream every speech segment as a request (always listening)
LISTEN: Final = "voicestack-listen"
# {enabled, min_speech_s, echo_cancel, threshold, voiceprints}: barge-in settings;
# until one says enabled, speech never pauses playback
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
# the peer's id of the stream; both also say how far it got (STATE).
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

END_OF_SPEECH_S: Final = (0.1, 3.0)  # the range a hello may ask for, in seconds
MAX_LISTEN_S: Final = 60.0  # the longest listen window a peer may open
DEFAULT_LISTEN_S: Final = 5.0  # a listen without timeout or continuous
# The optional fields of ANNOUNCE, as voicestack.announce names them, and the
# priorities it knows.
ANNOUNCE_OPTIONAL: Final = ("priority", "category", "source", "dedup_key", "ttl")
ANNOUNCE_PRIORITIES: Final = ("critical", "high", "normal", "low")


@dataclass(frozen=True, slots=True)
class Hello:
    """A peer that wants our own events (and maybe our end of speech)."""

    protocol: int | None
    end_of_speech_s: float | None  # end a request after this much quiet
    accepts: tuple[str, ...] = ()  # our events it takes that need asking for


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


def info_block(satellite_id: str, voiceprint: bool = False) -> dict[str, object]:
    """What ``info`` carries under ``INFO_KEY``: a stable id and the extensions.

    ``voiceprint``: the speaker gate can run (barge-in verdicts, enrollment).
    """
    return {
        "id": satellite_id,
        "protocol": PROTOCOL_VERSION,
        "sends": list(SATELLITE_EVENTS),
        "accepts": list(PEER_EVENTS),
        "voiceprint": voiceprint,
    }


def preroll_event(samples: int, rate: int, cut: int, start: int | None = None) -> Event:
    """Before a request's audio: how much of it was recorded before live audio.

    ``start``: the absolute mic sample of the first preroll sample, so the peer
    can place ``cut`` in the request's audio (``cut - start``).
    """
    data = {"samples": samples, "rate": rate, "cut": cut}
    if start is not None:
        data["start"] = start
    return Event(PREROLL, data)


def progress_event(stream: str, played: int, total: int | None, state: str) -> Event:
    """How far one of the peer's streams has played (``state``: PLAYING...)."""
    return Event(
        PROGRESS, {STREAM: stream, "played": played, "total": total, STATE: state}
    )


def no_speech_event() -> Event:
    """The request ended with nobody speaking: the peer drops it."""
    return Event(NO_SPEECH, {})


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


def played_event(stream: str, state: str) -> Event:
    """Wyoming's ``played``, plus the peer's stream id and how it ended."""
    event = Played().event()
    event.data.update({STREAM: stream, STATE: state})
    return event


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


def parse_resume(event: Event) -> Resume:
    """A ``voicestack-resume``; an ``offset`` must be a sample (>= 0)."""
    offset = event_data(event, RESUME).get("offset")
    if offset is not None and (not is_int(offset) or offset < 0):
        raise ValueError(f"{RESUME}: offset {offset!r} is not a sample offset")
    return Resume(offset=offset)


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


def parse_stream_id(event: Event) -> str | None:
    """The peer's stream id in ``audio-start``; ``None`` from a stock peer.

    An id must be a printable string of 1 to ``MAX_STREAM_ID`` characters, so
    what is echoed back is always safe to log and compare.
    """
    value = (event.data or {}).get(STREAM)
    if value is None:
        return None
    if (
        not isinstance(value, str)
        or not 0 < len(value) <= MAX_STREAM_ID
        or not value.isprintable()
    ):
        raise ValueError(
            f"audio-start stream id {value!r:.80}: not a printable string of "
            f"1 to {MAX_STREAM_ID} characters"
        )
    return value


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
