"""Barge-in's extension events, Home Assistant's side (docs/protocol.md).

The satellite pauses a voice response on speech by itself and says so
(``voicestack-barge-in``); its speaker gate names the voice
(``voicestack-voice``); enrollment records one phrase and answers with its
voiceprint (``voicestack-voiceprint``). Home Assistant configures all of it
(``voicestack-barge-in-config``), asks for a phrase (``voicestack-enroll``) and,
when the enrolled user spoke, asks for the captured speech as a request
(``voicestack-barge-in-request``). The names live in ``protocol.py`` with the
others; this module builds what Home Assistant sends and parses, with a
``ValueError`` saying what is wrong, what it receives.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from typing import Any, TypeGuard

from wyoming.event import Event

from .protocol import (
    BARGE_IN,
    BARGE_IN_CONFIG,
    BARGE_IN_REQUEST,
    EMBEDDING_SIZE,
    ENROLL,
    ENROLL_MAX_S,
    MAX_STREAM_ID,
    MAX_VOICEPRINTS,
    MIN_SPEECH_S,
    STREAM,
    VOICE,
    VOICEPRINT,
    VOICEPRINT_ERRORS,
    event_data,
    is_int,
    is_number,
)

MAX_PERSON = 100  # characters of an enrolled person's name
VOICE_VERDICTS = ("enrolled", "unsure", "other")
MAX_NORMALIZED = 1000.0  # an s-norm beyond this is no score
COHORT_STATS = ("enrolled_mean", "enrolled_std", "test_mean", "test_std")
MAX_ENROLL_ID = 64  # characters


@dataclass(frozen=True, slots=True)
class BargeInReport:
    """Speech paused ``stream`` after ``played`` samples (the stream's rate)."""

    stream: str
    played: int
    onset: int  # absolute mic sample where the speech began


@dataclass(frozen=True, slots=True)
class VoiceReport:
    """The speaker gate's verdict on the voice that paused ``stream``."""

    stream: str
    person: str | None  # the enrolled person it matched, None: nobody
    score: float | None  # best cosine similarity; None: nobody enrolled
    seconds: float  # of speech the verdict rests on
    # Issue 28's calibrated gate explains itself (absent from older satellites):
    verdict: str | None = None  # "enrolled", "unsure" or "other"
    normalized: float | None = None  # the s-norm of ``score`` against the cohort
    closest: str | None = None  # the enrolled person scoring best
    cohort: tuple[tuple[str, float], ...] = ()  # the cohort statistics, by name


@dataclass(frozen=True, slots=True)
class PhraseHeard:
    """How the satellite heard an enrollment phrase (issue 28; None: not said).

    ``level_dbfs``: the speech's mean power; ``snr_db``: that over the quiet
    around it; ``cohort_mean``/``cohort_std``: the phrase's embedding against
    its closest voices in the gate's cohort.
    """

    level_dbfs: float | None = None
    snr_db: float | None = None
    cohort_mean: float | None = None
    cohort_std: float | None = None


@dataclass(frozen=True, slots=True)
class VoiceprintReport:
    """One enrollment phrase's voiceprint, or why there is none."""

    id: str
    embedding: tuple[float, ...] | None
    seconds: float | None
    error: str | None  # one of VOICEPRINT_ERRORS when ``embedding`` is None
    heard: PhraseHeard = PhraseHeard()  # absent from older satellites


@dataclass(frozen=True, slots=True)
class Voiceprint:
    """One enrolled voice as the satellite's gate compares against it."""

    person: str
    embedding: tuple[float, ...]


def check_embedding(value: object, what: str) -> tuple[float, ...]:
    """``EMBEDDING_SIZE`` finite numbers, as floats; ValueError otherwise."""
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or len(value) != EMBEDDING_SIZE
    ):
        raise ValueError(f"{what}: not a list of {EMBEDDING_SIZE} numbers")
    if not all(is_number(item) and math.isfinite(item) for item in value):
        raise ValueError(f"{what}: holds something that is not a finite number")
    return tuple(float(item) for item in value)


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


def barge_in_request_event(stream: str) -> Event:
    """The enrolled user spoke: flush ``stream``, send the captured speech."""
    return Event(BARGE_IN_REQUEST, {STREAM: stream})


def enroll_event(enroll_id: str, max_s: float) -> Event:
    """Record the next phrase (at most ``max_s``) and answer with its voiceprint."""
    low, high = ENROLL_MAX_S
    if not low <= max_s <= high:
        raise ValueError(f"max_s {max_s} is not {low:g} to {high:g} s")
    return Event(ENROLL, {"id": enroll_id, "max_s": max_s})


def parse_barge_in(event: Event) -> BargeInReport:
    """A ``voicestack-barge-in``: which stream, how far it had played, the onset."""
    data = event_data(event, BARGE_IN)
    played, onset = data.get("played"), data.get("onset")
    if not is_int(played) or played < 0:
        raise ValueError(f"{BARGE_IN}: played {played!r:.80} is not a sample count")
    if not is_int(onset) or onset < 0:
        raise ValueError(f"{BARGE_IN}: onset {onset!r:.80} is not a sample position")
    return BargeInReport(stream=_stream(data, BARGE_IN), played=played, onset=onset)


def parse_voice(event: Event) -> VoiceReport:
    """A ``voicestack-voice``: the person the voice matched (or None), and how well."""
    data = event_data(event, VOICE)
    person, score, seconds = data.get("person"), data.get("score"), data.get("seconds")
    if person is not None and not _is_name(person):
        raise ValueError(f"{VOICE}: person {person!r:.80} is not a name")
    if score is not None and not (is_number(score) and -1.0 <= score <= 1.0):
        raise ValueError(f"{VOICE}: score {score!r:.80} is not a similarity")
    if not is_number(seconds) or not 0 <= seconds <= 60:
        raise ValueError(f"{VOICE}: seconds {seconds!r:.80} is not a duration")
    return VoiceReport(
        stream=_stream(data, VOICE),
        person=person,
        score=None if score is None else float(score),
        seconds=float(seconds),
        **_explanation(data),
    )


def _explanation(data: Mapping[str, Any]) -> dict[str, Any]:
    """The calibrated gate's verdict, normalized score, closest person and cohort."""
    verdict, normalized = data.get("verdict"), data.get("normalized")
    closest, cohort = data.get("closest"), data.get("cohort", {})
    if verdict is not None and verdict not in VOICE_VERDICTS:
        raise ValueError(f"{VOICE}: verdict {verdict!r:.80} is not one we know")
    if verdict == "enrolled" and data.get("person") is None:
        raise ValueError(f"{VOICE}: verdict enrolled names nobody")
    if normalized is not None and not (
        is_number(normalized) and -MAX_NORMALIZED <= normalized <= MAX_NORMALIZED
    ):
        raise ValueError(f"{VOICE}: normalized {normalized!r:.80} is not a score")
    if closest is not None and not _is_name(closest):
        raise ValueError(f"{VOICE}: closest {closest!r:.80} is not a name")
    if not isinstance(cohort, dict) or not all(
        key in COHORT_STATS and is_number(value) and -1.0 <= value <= 1.0
        for key, value in cohort.items()
    ):
        raise ValueError(f"{VOICE}: cohort {cohort!r:.80} is not its statistics")
    return {
        "verdict": verdict,
        "normalized": None if normalized is None else float(normalized),
        "closest": closest,
        "cohort": tuple((key, float(cohort[key])) for key in sorted(cohort)),
    }


def parse_voiceprint(event: Event) -> VoiceprintReport:
    """A ``voicestack-voiceprint``: an embedding with its seconds, or an error."""
    data = event_data(event, VOICEPRINT)
    enroll_id = data.get("id")
    if not _is_id(enroll_id):
        raise ValueError(f"{VOICEPRINT}: id {enroll_id!r:.80} is not a request id")
    if (error := data.get("error")) is not None:
        if error not in VOICEPRINT_ERRORS:
            raise ValueError(f"{VOICEPRINT}: error {error!r:.80} is not one we know")
        return VoiceprintReport(enroll_id, None, None, error)
    seconds = data.get("seconds")
    if not is_number(seconds) or seconds <= 0:
        raise ValueError(f"{VOICEPRINT}: seconds {seconds!r:.80} is not a duration")
    embedding = check_embedding(data.get("embedding"), f"{VOICEPRINT}: embedding")
    return VoiceprintReport(
        enroll_id, embedding, float(seconds), None, _phrase_heard(data)
    )


def _phrase_heard(data: Mapping[str, Any]) -> PhraseHeard:
    """The optional fields of how a phrase was heard; ValueError if one is no number."""
    values: dict[str, float | None] = {}
    for name, (low, high) in _HEARD_RANGES.items():
        value = data.get(name)
        if value is not None and not (
            is_number(value) and math.isfinite(value) and low <= value <= high
        ):
            raise ValueError(f"{VOICEPRINT}: {name} {value!r:.80} is out of range")
        values[name] = None if value is None else float(value)
    return PhraseHeard(**values)


_HEARD_RANGES: dict[str, tuple[float, float]] = {
    "level_dbfs": (-200.0, 10.0),
    "snr_db": (-200.0, 200.0),
    "cohort_mean": (-1.0, 1.0),
    "cohort_std": (0.0, 2.0),
}


def _stream(data: Mapping[str, Any], kind: str) -> str:
    stream = data.get(STREAM)
    if not _is_id(stream, MAX_STREAM_ID):
        raise ValueError(f"{kind}: stream {stream!r:.80} is not a stream id")
    return stream


def _is_id(value: object, longest: int = MAX_ENROLL_ID) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value) <= longest and value.isprintable()


def _is_name(value: object) -> TypeGuard[str]:
    return _is_id(value, MAX_PERSON) and bool(str(value).strip())
