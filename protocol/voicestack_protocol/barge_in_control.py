"""Barge-in's settings and requests, from a peer to a satellite: built and parsed.

The peer configures barge-in (``voicestack-barge-in-config``: on or off, how much
speech pauses an answer, echo cancelling, the gate's threshold and the enrolled
voiceprints), asks for an enrollment phrase (``voicestack-enroll``) and, when the
enrolled user spoke (or the gate was not sure), for the captured speech as a
request (``voicestack-barge-in-request``). What the satellite answers: ``barge_in_reports``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from wyoming.event import Event

from .checks import check_embedding, event_data, is_name, is_number
from .names import (
    BARGE_IN_CONFIG,
    BARGE_IN_REQUEST,
    ENROLL,
    ENROLL_MAX_S,
    MAX_PERSON,
    MAX_REQUEST_ID,
    MAX_STREAM_ID,
    MAX_VOICEPRINTS,
    MIN_SPEECH_S,
    STREAM,
)


@dataclass(frozen=True, slots=True)
class Voiceprint:
    """One enrolled voice as the satellite's gate compares against it."""

    person: str
    embedding: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class BargeInConfig:
    """The peer's barge-in settings; the default: off (a stock peer)."""

    enabled: bool = False
    min_speech_s: float = 0.3
    echo_cancel: bool = True
    threshold: float = 0.7
    voiceprints: tuple[Voiceprint, ...] = ()


@dataclass(frozen=True, slots=True)
class Enroll:
    """Record one phrase and answer with its voiceprint."""

    id: str
    max_s: float


def barge_in_config_event(
    *,
    enabled: bool,
    min_speech_s: float,
    echo_cancel: bool,
    threshold: float,
    voiceprints: Sequence[Voiceprint],
) -> Event:
    """The satellite's barge-in settings; ValueError for values it would refuse."""
    low, high = MIN_SPEECH_S
    if not low <= min_speech_s <= high:
        raise ValueError(f"min_speech_s {min_speech_s} is not {low:g} to {high:g} s")
    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"threshold {threshold} is not 0 to 1")
    if len(voiceprints) > MAX_VOICEPRINTS:
        raise ValueError(f"more than {MAX_VOICEPRINTS} voiceprints")
    return Event(
        BARGE_IN_CONFIG,
        {
            "enabled": enabled,
            "min_speech_s": min_speech_s,
            "echo_cancel": echo_cancel,
            "threshold": threshold,
            "voiceprints": [
                {"person": v.person, "embedding": list(v.embedding)}
                for v in voiceprints
            ],
        },
    )


def parse_barge_in_config(event: Event) -> BargeInConfig:
    """A ``voicestack-barge-in-config``: every field checked."""
    data = event_data(event, BARGE_IN_CONFIG)
    enabled, echo_cancel = data.get("enabled"), data.get("echo_cancel", True)
    min_speech_s, threshold = data.get("min_speech_s"), data.get("threshold")
    if not isinstance(enabled, bool):
        raise ValueError(  # noqa: TRY004 - a parser's contract: ValueError
            f"{BARGE_IN_CONFIG}: enabled {enabled!r:.40} is not a boolean"
        )
    if not isinstance(echo_cancel, bool):
        raise ValueError(  # noqa: TRY004 - a parser's contract: ValueError
            f"{BARGE_IN_CONFIG}: echo_cancel {echo_cancel!r:.40} is not a boolean"
        )
    low, high = MIN_SPEECH_S
    if not (is_number(min_speech_s) and low <= min_speech_s <= high):
        raise ValueError(
            f"{BARGE_IN_CONFIG}: min_speech_s {min_speech_s!r:.40} is not"
            f" {low:g} to {high:g} s"
        )
    if not (is_number(threshold) and 0.0 <= threshold <= 1.0):
        raise ValueError(
            f"{BARGE_IN_CONFIG}: threshold {threshold!r:.40} is not 0 to 1"
        )
    return BargeInConfig(
        enabled=enabled,
        min_speech_s=float(min_speech_s),
        echo_cancel=echo_cancel,
        threshold=float(threshold),
        voiceprints=_voiceprints(data.get("voiceprints", [])),
    )


def _voiceprints(value: object) -> tuple[Voiceprint, ...]:
    what = f"{BARGE_IN_CONFIG}: voiceprints"
    if not isinstance(value, list) or len(value) > MAX_VOICEPRINTS:
        raise ValueError(f"{what}: not a list of at most {MAX_VOICEPRINTS}")
    voiceprints: list[Voiceprint] = []
    for entry in value:
        if not isinstance(entry, Mapping):
            raise ValueError(f"{what}: {entry!r:.40} is not an object")  # noqa: TRY004
        person = entry.get("person")
        if not is_name(person, MAX_PERSON):
            raise ValueError(f"{what}: person {person!r:.40} is not a name")
        embedding = check_embedding(entry.get("embedding"), f"{what} of {person}")
        if not any(embedding):
            raise ValueError(f"{what}: an embedding is all zeros")
        voiceprints.append(Voiceprint(person, embedding))
    return tuple(voiceprints)


@dataclass(frozen=True, slots=True)
class BargeInRequest:
    """Take the speech over ``stream`` as a request; ``hold``: keep the answer.

    ``hold`` False (the enrolled user): the answer is flushed first. True (the
    gate was not sure whose voice): the answer stays paused while the peer
    checks the request, which ends with ``voicestack-resume`` or a flush.
    """

    stream: str
    hold: bool = False


def barge_in_request_event(stream: str, *, hold: bool = False) -> Event:
    """Send the captured speech over ``stream`` as a request (see BargeInRequest)."""
    return Event(BARGE_IN_REQUEST, {STREAM: stream} | ({"hold": True} if hold else {}))


def parse_barge_in_request(event: Event) -> BargeInRequest:
    """A ``voicestack-barge-in-request``: the stream interrupted, held or not."""
    data = event_data(event, BARGE_IN_REQUEST)
    stream, hold = data.get(STREAM), data.get("hold", False)
    if not is_name(stream, MAX_STREAM_ID):
        raise ValueError(
            f"{BARGE_IN_REQUEST}: stream {stream!r:.40} is not a stream id"
        )
    if not isinstance(hold, bool):
        raise ValueError(  # noqa: TRY004 (a bad event: ValueError, as every parser)
            f"{BARGE_IN_REQUEST}: hold {hold!r:.10} is not true or false"
        )
    return BargeInRequest(stream, hold)


def enroll_event(enroll_id: str, max_s: float) -> Event:
    """Record the next phrase (at most ``max_s``) and answer with its voiceprint."""
    low, high = ENROLL_MAX_S
    if not low <= max_s <= high:
        raise ValueError(f"max_s {max_s} is not {low:g} to {high:g} s")
    return Event(ENROLL, {"id": enroll_id, "max_s": max_s})


def parse_enroll(event: Event) -> Enroll:
    """A ``voicestack-enroll``: an id and at most how long the phrase may take."""
    data = event_data(event, ENROLL)
    enroll_id, max_s = data.get("id"), data.get("max_s")
    if not is_name(enroll_id, MAX_REQUEST_ID):
        raise ValueError(f"{ENROLL}: id {enroll_id!r:.40} is not a request id")
    low, high = ENROLL_MAX_S
    if not (is_number(max_s) and low <= max_s <= high):
        raise ValueError(f"{ENROLL}: max_s {max_s!r:.40} is not {low:g} to {high:g} s")
    return Enroll(id=enroll_id, max_s=float(max_s))
