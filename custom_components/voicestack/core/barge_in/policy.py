"""What barge-in decides, its limits, its records and its tokens (issue 13).

The limits are the design note's (seeds/barge-in-resume.md): a verdict that has
not come in 10 s ends the answer, and an answer resumes at most 3 times, at
least 2 s apart. A count alone misses the cadence (three resumes in half a
second are an echo loop, not three people); a floor alone lets a podcast
interrupt forever.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

VERDICT_TIMEOUT_S: Final = 10.0
MAX_RESUMES: Final = 3
MIN_RESUME_GAP_S: Final = 2.0
VERDICT_TIMEOUT_RANGE: Final = (0.5, 60.0)
MAX_RESUMES_RANGE: Final = (0, 10)
MIN_RESUME_GAP_RANGE: Final = (0.0, 30.0)


class BargeInConfigError(ValueError):
    """Bad limits, with a stable ``code`` (the field at fault) to translate."""

    def __init__(self, code: str, message: str) -> None:
        """``code`` names the field, e.g. ``max_resumes``."""
        super().__init__(message)
        self.code = code


def _in_range(value: object, bounds: tuple[float, float], integral: bool) -> bool:
    kinds = (int,) if integral else (int, float)
    low, high = bounds
    return (
        isinstance(value, kinds)
        and not isinstance(value, bool)
        and low <= value <= high
    )


@dataclass(frozen=True, slots=True)
class BargeInLimits:
    """How long a verdict may take, and how often one answer may resume."""

    verdict_timeout_s: float = VERDICT_TIMEOUT_S
    max_resumes: int = MAX_RESUMES
    min_resume_gap_s: float = MIN_RESUME_GAP_S

    def __post_init__(self) -> None:
        """Checked on construction (``BargeInConfigError``)."""
        for code, bounds, integral in (
            ("verdict_timeout_s", VERDICT_TIMEOUT_RANGE, False),
            ("max_resumes", MAX_RESUMES_RANGE, True),
            ("min_resume_gap_s", MIN_RESUME_GAP_RANGE, False),
        ):
            if not _in_range(getattr(self, code), bounds, integral):
                low, high = bounds
                raise BargeInConfigError(code, f"{code} must be from {low} to {high}")


class Verdict(StrEnum):
    """What the voice gate says of the voice that interrupted."""

    ENROLLED = "enrolled"  # a person enrolled in this home: the user
    UNSURE = "unsure"  # close to an enrolled voice: a command decides
    OTHER = "other"  # anyone else, or the TV


class BargeInKind(StrEnum):
    """What happened; the glue fires one ``voicestack_barge_in`` event for each."""

    PAUSE = "pause"  # the satellite paused on speech; a verdict is awaited
    CHECK = "check"  # not sure whose voice: kept paused while the speech is checked
    RESUME = "resume"  # play again from ``resume_from``
    STOP = "stop"  # flush; the speech is the next request if ``request``
    SILENCE = "silence"  # flush: a limit was reached, the answer stays silent
    TIMEOUT = "timeout"  # flush: no verdict in time


class Reason(StrEnum):
    """Why, as a record tells it."""

    SPEECH = "speech"  # pause: speech over the playback
    ENROLLED = "enrolled"  # stop: the enrolled user spoke
    GATE_OFF = "gate_off"  # stop: no one enrolled, every barge-in is the user
    OTHER_SPEAKER = "other_speaker"  # resume: someone else, or the TV
    UNSURE = "unsure"  # check: the gate was not sure; is the speech a command?
    UNSURE_COMMAND = "unsure_command"  # stop: not sure whose, but a command
    NOT_A_COMMAND = "not_a_command"  # resume: not sure whose, and no command
    NOTHING_LEFT = "nothing_left"  # stop: not the user, and all had been played
    MAX_RESUMES = "max_resumes"  # silence: the answer resumed as often as allowed
    TOO_SOON = "too_soon"  # silence: within the floor after the last resume
    NO_VERDICT = "no_verdict"  # timeout


# What the user said: the captured speech goes on as the next request.
REQUEST_REASONS: Final = frozenset(
    {Reason.ENROLLED, Reason.GATE_OFF, Reason.UNSURE_COMMAND}
)


@dataclass(frozen=True, slots=True)
class BargeInRecord:
    """One pause, resume, stop, silence or timeout of one response."""

    kind: BargeInKind
    response_id: str
    sentence: int | None  # the sentence being played at the pause; None: all played
    offset: int  # samples played when the satellite paused
    reason: Reason
    paused_at: float  # clock time of the pause
    at: float  # clock time of this record
    resume_from: int | None = None  # RESUME: the sample to play from

    @property
    def request(self) -> bool:
        """Whether the captured speech is the user's next request."""
        return self.reason in REQUEST_REASONS


@dataclass(slots=True)
class BargeInCounters:
    """Totals since start, for diagnostics and metrics."""

    pauses: int = 0
    checks: int = 0  # not sure whose voice: the speech checked for a command
    resumes: int = 0
    stops: int = 0
    silences: int = 0
    timeouts: int = 0
    stale_verdicts: int = 0  # for an older response, or none awaited: ignored
    ignored_pauses: int = 0  # for an older or ended response, or while paused
    abandoned: int = 0  # waits ended by a new response or ``cancel``

    def count(self, kind: BargeInKind) -> None:
        """One more record of ``kind``."""
        counter = _COUNTED[kind]
        setattr(self, counter, getattr(self, counter) + 1)


_COUNTED: Final = {
    BargeInKind.PAUSE: "pauses",
    BargeInKind.CHECK: "checks",
    BargeInKind.RESUME: "resumes",
    BargeInKind.STOP: "stops",
    BargeInKind.SILENCE: "silences",
    BargeInKind.TIMEOUT: "timeouts",
}


class ResponseToken:
    """One response (one TTS run): compared by identity, never reused or cleared.

    ``cancelled`` is set when the response is stopped, silenced, timed out or
    replaced, and stays set: synthesis of an old response checks its own token
    between chunks, and a new response cannot un-cancel it.
    """

    __slots__ = ("_cancelled", "id")

    def __init__(self, response_id: str) -> None:
        """Not cancelled; ``response_id`` names it in records and logs."""
        self.id = response_id
        self._cancelled = False

    @property
    def cancelled(self) -> bool:
        """Whether the response was ended; once True, always True."""
        return self._cancelled

    def cancel(self) -> None:
        """End the response for good."""
        self._cancelled = True

    def __repr__(self) -> str:
        """``ResponseToken(<id>, cancelled)``."""
        state = "cancelled" if self._cancelled else "live"
        return f"ResponseToken({self.id}, {state})"
