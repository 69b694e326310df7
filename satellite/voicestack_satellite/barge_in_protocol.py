"""Barge-in's extension events, the satellite's side (docs/protocol.md).

The satellite sends ``voicestack-barge-in`` when speech paused the owner's
answer, ``voicestack-voice`` with its speaker gate's verdict and
``voicestack-voiceprint`` for an enrollment phrase; it receives the settings
(``voicestack-barge-in-config``), the request for the user's speech
(``voicestack-barge-in-request``) and enrollment (``voicestack-enroll``). The
names live in ``protocol.py`` with the others; Home Assistant's twin is
``custom_components/voicestack/core/barge_in_protocol.py``. A parser raises
``ValueError`` saying what is wrong: the caller logs one line and ignores it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import math
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
from wyoming.event import Event

from .protocol import (
    BARGE_IN,
    BARGE_IN_CONFIG,
    BARGE_IN_FIELD,
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
    event_data,
    is_number,
)
from .voiceprint.calibration import CohortStats

if TYPE_CHECKING:
    from .speaker_gate import GateVerdict

MAX_PERSON = 100  # characters of an enrolled person's name
MAX_ENROLL_ID = 64  # characters


@dataclass(frozen=True, slots=True)
class BargeInConfig:
    """The owner's barge-in settings; the default: off (a stock peer)."""

    enabled: bool = False
    min_speech_s: float = 0.3
    echo_cancel: bool = True
    threshold: float = 0.7
    people: tuple[str, ...] = ()  # whose voiceprints, in the rows' order
    voiceprints: np.ndarray | None = None  # (len(people), EMBEDDING_SIZE), unit rows


@dataclass(frozen=True, slots=True)
class Enroll:
    """Record one phrase and answer with its voiceprint."""

    id: str
    max_s: float


def stream_may_pause(event: Event) -> bool:
    """Whether an ``audio-start`` marks its stream as one speech may pause."""
    return (event.data or {}).get(BARGE_IN_FIELD) is True


def barge_in_event(stream: str, played: int, onset: int) -> Event:
    """Speech paused ``stream`` after ``played`` samples; it began at mic ``onset``."""
    return Event(BARGE_IN, {STREAM: stream, "played": played, "onset": onset})


def voice_event(stream: str, verdict: GateVerdict, seconds: float) -> Event:
    """The gate's verdict on the voice that paused ``stream``, and why.

    ``score`` stays the raw cosine (as before issue 28); ``normalized`` and
    ``cohort`` explain the band ``verdict`` (enrolled, unsure, other).
    """
    score = verdict.score
    data: dict[str, Any] = {
        STREAM: stream,
        "person": verdict.person,
        "verdict": verdict.verdict,
        "closest": verdict.closest,
        "score": None if score is None else round(score.raw, 4),
        "normalized": None if score is None else round(score.normalized, 3),
        "seconds": round(seconds, 3),
    }
    if score is not None:
        data["cohort"] = {
            "enrolled_mean": round(score.enrolled.mean, 4),
            "enrolled_std": round(score.enrolled.std, 4),
            "test_mean": round(score.test.mean, 4),
            "test_std": round(score.test.std, 4),
        }
    return Event(VOICE, data)


@dataclass(frozen=True, slots=True)
class PhraseQuality:
    """How an enrollment phrase was heard (issue 28): loud enough, over what noise.

    ``level_dbfs``: the mean power of the speech windows; ``snr_db``: that over
    the room (the 10th percentile of every window's power); ``cohort``: the
    phrase's embedding against the gate's cohort (None: no cohort).
    """

    level_dbfs: float
    snr_db: float
    cohort: CohortStats | None

    def fields(self) -> dict[str, float | None]:
        """The ``voicestack-voiceprint`` fields that carry it."""
        return {
            "level_dbfs": round(self.level_dbfs, 1),
            "snr_db": round(self.snr_db, 1),
            "cohort_mean": None if self.cohort is None else round(self.cohort.mean, 4),
            "cohort_std": None if self.cohort is None else round(self.cohort.std, 4),
        }


def voiceprint_event(
    enroll_id: str,
    embedding: np.ndarray | None = None,
    seconds: float = 0.0,
    error: str | None = None,
    quality: PhraseQuality | None = None,
) -> Event:
    """One phrase's voiceprint, or ``error`` (one of VOICEPRINT_ERRORS)."""
    if embedding is None:
        return Event(VOICEPRINT, {"id": enroll_id, "error": error})
    return Event(
        VOICEPRINT,
        {
            "id": enroll_id,
            "embedding": [round(float(v), 6) for v in embedding],
            "seconds": round(seconds, 3),
            **(quality.fields() if quality else {}),
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
    people, voiceprints = _voiceprints(data.get("voiceprints", []))
    return BargeInConfig(
        enabled=enabled,
        min_speech_s=float(min_speech_s),
        echo_cancel=echo_cancel,
        threshold=float(threshold),
        people=people,
        voiceprints=voiceprints,
    )


def _voiceprints(value: object) -> tuple[tuple[str, ...], np.ndarray | None]:
    what = f"{BARGE_IN_CONFIG}: voiceprints"
    if not isinstance(value, list) or len(value) > MAX_VOICEPRINTS:
        raise ValueError(f"{what}: not a list of at most {MAX_VOICEPRINTS}")
    people: list[str] = []
    rows: list[list[float]] = []
    for entry in value:
        if not isinstance(entry, Mapping):
            raise ValueError(f"{what}: {entry!r:.40} is not an object")  # noqa: TRY004
        person = entry.get("person")
        if not _is_text(person, MAX_PERSON):
            raise ValueError(f"{what}: person {person!r:.40} is not a name")
        rows.append(_embedding(entry.get("embedding"), f"{what} of {person}"))
        people.append(person)
    if not rows:
        return (), None
    matrix = np.array(rows, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    if not np.all(norms > 0):
        raise ValueError(f"{what}: an embedding is all zeros")
    return tuple(people), matrix / norms


def _embedding(value: object, what: str) -> list[float]:
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or len(value) != EMBEDDING_SIZE
    ):
        raise ValueError(f"{what}: not a list of {EMBEDDING_SIZE} numbers")
    if not all(is_number(item) and math.isfinite(item) for item in value):
        raise ValueError(f"{what}: holds something that is not a finite number")
    return [float(item) for item in value]


def parse_barge_in_request(event: Event) -> str:
    """A ``voicestack-barge-in-request``: the stream the user interrupted."""
    stream = event_data(event, BARGE_IN_REQUEST).get(STREAM)
    if not _is_text(stream, MAX_STREAM_ID):
        raise ValueError(
            f"{BARGE_IN_REQUEST}: stream {stream!r:.40} is not a stream id"
        )
    return stream


def parse_enroll(event: Event) -> Enroll:
    """A ``voicestack-enroll``: an id and at most how long the phrase may take."""
    data = event_data(event, ENROLL)
    enroll_id, max_s = data.get("id"), data.get("max_s")
    if not _is_text(enroll_id, MAX_ENROLL_ID):
        raise ValueError(f"{ENROLL}: id {enroll_id!r:.40} is not a request id")
    low, high = ENROLL_MAX_S
    if not (is_number(max_s) and low <= max_s <= high):
        raise ValueError(f"{ENROLL}: max_s {max_s!r:.40} is not {low:g} to {high:g} s")
    return Enroll(id=enroll_id, max_s=float(max_s))


def _is_text(value: object, longest: int) -> TypeGuard[str]:
    return (
        isinstance(value, str)
        and 0 < len(value) <= longest
        and value.isprintable()
        and bool(value.strip())
    )
