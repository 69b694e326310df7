"""Barge-in's reports, from a satellite to its peer: built and parsed.

The satellite pauses a voice response on speech by itself and says so
(``voicestack-barge-in``); its voice gate names the voice
(``voicestack-voice``); enrollment records one phrase and answers with its
voiceprint (``voicestack-voiceprint``). What the peer sends: ``barge_in_control``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import math
from typing import Any

from wyoming.event import Event

from .checks import check_embedding, event_data, is_id, is_int, is_name, is_number
from .names import (
    BARGE_IN,
    COHORT_STATS,
    HEARD_RANGES,
    MAX_NORMALIZED,
    MAX_PERSON,
    MAX_REQUEST_ID,
    MAX_STREAM_ID,
    STREAM,
    VOICE,
    VOICE_VERDICTS,
    VOICEPRINT,
    VOICEPRINT_ERRORS,
)


@dataclass(frozen=True, slots=True)
class BargeInReport:
    """Speech paused ``stream`` after ``played`` samples (the stream's rate)."""

    stream: str
    played: int
    onset: int  # absolute mic sample where the speech began


@dataclass(frozen=True, slots=True)
class VoiceReport:
    """The voice gate's verdict on the voice that paused ``stream``."""

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


def barge_in_event(stream: str, played: int, onset: int) -> Event:
    """Speech paused ``stream`` after ``played`` samples; it began at mic ``onset``."""
    return Event(BARGE_IN, {STREAM: stream, "played": played, "onset": onset})


def parse_barge_in(event: Event) -> BargeInReport:
    """A ``voicestack-barge-in``: which stream, how far it had played, the onset."""
    data = event_data(event, BARGE_IN)
    played, onset = data.get("played"), data.get("onset")
    if not is_int(played) or played < 0:
        raise ValueError(f"{BARGE_IN}: played {played!r:.80} is not a sample count")
    if not is_int(onset) or onset < 0:
        raise ValueError(f"{BARGE_IN}: onset {onset!r:.80} is not a sample position")
    return BargeInReport(stream=_stream(data, BARGE_IN), played=played, onset=onset)


def voice_event(report: VoiceReport) -> Event:
    """The gate's verdict on the voice that paused a stream, and why.

    ``score`` is the raw cosine (as before issue 28); ``normalized`` and
    ``cohort`` (sent when there is one) explain the band ``verdict``.
    """
    data: dict[str, Any] = {
        STREAM: report.stream,
        "person": report.person,
        "verdict": report.verdict,
        "closest": report.closest,
        "score": report.score,
        "normalized": report.normalized,
        "seconds": report.seconds,
    }
    if report.cohort:
        data["cohort"] = dict(report.cohort)
    return Event(VOICE, data)


def parse_voice(event: Event) -> VoiceReport:
    """A ``voicestack-voice``: the person the voice matched (or None), and how well."""
    data = event_data(event, VOICE)
    person, score, seconds = data.get("person"), data.get("score"), data.get("seconds")
    if person is not None and not is_name(person, MAX_PERSON):
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
    if closest is not None and not is_name(closest, MAX_PERSON):
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


def voiceprint_event(report: VoiceprintReport) -> Event:
    """One phrase's voiceprint (with how it was heard, if said), or its error."""
    if report.embedding is None:
        return Event(VOICEPRINT, {"id": report.id, "error": report.error})
    heard = {name: getattr(report.heard, name) for name in HEARD_RANGES}
    return Event(
        VOICEPRINT,
        {
            "id": report.id,
            "embedding": list(report.embedding),
            "seconds": report.seconds,
            **(heard if any(v is not None for v in heard.values()) else {}),
        },
    )


def parse_voiceprint(event: Event) -> VoiceprintReport:
    """A ``voicestack-voiceprint``: an embedding with its seconds, or an error."""
    data = event_data(event, VOICEPRINT)
    enroll_id = data.get("id")
    if not is_id(enroll_id, MAX_REQUEST_ID):
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
    for name, (low, high) in HEARD_RANGES.items():
        value = data.get(name)
        if value is not None and not (
            is_number(value) and math.isfinite(value) and low <= value <= high
        ):
            raise ValueError(f"{VOICEPRINT}: {name} {value!r:.80} is out of range")
        values[name] = None if value is None else float(value)
    return PhraseHeard(**values)


def _stream(data: Mapping[str, Any], kind: str) -> str:
    stream = data.get(STREAM)
    if not is_id(stream, MAX_STREAM_ID):
        raise ValueError(f"{kind}: stream {stream!r:.80} is not a stream id")
    return stream
