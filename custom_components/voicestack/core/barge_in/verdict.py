"""Barge-in's verdict and resume for one satellite (Home Assistant-free; issue 13).

The satellite pauses its answer on speech at once, without asking anyone, and
reports how far it had played. What follows is decided here, on the injected
clock, once per pause:

- the enrolled user spoke (``Verdict.ENROLLED``): STOP, the answer is flushed
  and the captured speech is the next request;
- anyone else, or the TV (``Verdict.OTHER``): RESUME from the first sample of
  the sentence that was playing (core/resume_point), or STOP if the answer had
  all been played, or SILENCE past the limits (core/barge_in_policy: at most 3
  resumes per answer, at least 2 s apart; a resume refused by either flushes
  the rest of the answer, so a podcast cannot keep it going);
- not sure (``Verdict.UNSURE``, a score just under the threshold): CHECK, the
  answer stays paused while the speech goes on as a request held for
  ``checked``: a command for this home is the user's (STOP, reason
  ``unsure_command``; the request goes on), anything else resumes as for
  another voice (reason ``not_a_command``). Whichever costs least: a command
  misses nothing, the TV's chatter costs a pause of a second or two;
- no verdict (or no check) within 10 s: TIMEOUT, flushed (nobody said it was
  the user, so the speech is no request).

**With no one enrolled the gate is off** (``gate()`` is False at the pause):
every barge-in is STOP at once, reason ``gate_off``, and the speech is the next
request; nothing waits for a verdict.

The verdict travels beside the audio, not in it, and names its response by a
``ResponseToken``: a new object for every response, never reused or cleared. A
verdict for any token but the current one's (a response that was replaced) is
ignored and counted, so a late verdict can never resume or stop a newer answer.
Each pause, resume, stop, silence and timeout reaches ``on_record`` as a
``BargeInRecord`` (for the ``voicestack_barge_in`` event and metrics), and
``counters`` keeps the totals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import logging
import uuid

from ..clock import Cancellable, Clock
from ..resume_point import ResumePoint, SentenceTrack
from .policy import (
    BargeInCounters,
    BargeInKind,
    BargeInLimits,
    BargeInRecord,
    Reason,
    ResponseToken,
    Verdict,
)

_LOGGER = logging.getLogger(__name__)


def _new_response_id() -> str:
    return uuid.uuid4().hex


@dataclass(slots=True)
class _Pause:
    """A pause waiting for its verdict."""

    point: ResumePoint | None
    offset: int
    at: float
    timer: Cancellable | None = None
    checking: bool = False  # unsure: its speech is being checked for a command


@dataclass(slots=True)
class _Response:
    """The current response: its sentences, its resumes, and its pause if any."""

    token: ResponseToken
    track: SentenceTrack
    resumes: int = 0
    last_resume_at: float | None = None
    pause: _Pause | None = None
    closed: bool = False


class BargeIn:
    """Pauses, verdicts and resumes of one satellite's current response."""

    def __init__(
        self,
        clock: Clock,
        on_record: Callable[[BargeInRecord], None],
        gate: Callable[[], bool],
        limits: BargeInLimits | None = None,
        new_id: Callable[[], str] = _new_response_id,
    ) -> None:
        """No response until ``start_response``.

        ``gate()`` says at each pause whether a verdict is worth waiting for:
        someone is enrolled and the voice gate is on.
        """
        self._clock = clock
        self._on_record = on_record
        self._gate = gate
        self.limits = limits or BargeInLimits()
        self._new_id = new_id
        self._response: _Response | None = None
        self.counters = BargeInCounters()

    @property
    def current(self) -> ResponseToken | None:
        """The current response's token, if any."""
        return self._response.token if self._response else None

    @property
    def waiting(self) -> bool:
        """Whether a pause waits for its verdict."""
        response = self._response
        return (
            response is not None and response.pause is not None and not response.closed
        )

    def start_response(self, text: str | None) -> ResponseToken:
        """A new response (``text``, as the agent wrote it): its fresh token.

        ``text`` None: an answer still being written; its sentences make it.

        The previous response is replaced: its token is cancelled, and a pause
        of it that still waits is abandoned (no record; counted).
        """
        self.cancel()
        token = ResponseToken(self._new_id())
        self._response = _Response(token, SentenceTrack(text))
        return token

    def add_sentence(self, token: ResponseToken, text: str, samples: int) -> bool:
        """A sentence of ``token``'s response was synthesized; False: not current.

        Sentences come in the order they are played; ``samples`` at the stream's
        rate. ``SentenceMismatchError`` if ``text`` is not the next sentence.
        """
        response = self._live(token)
        if response is None:
            return False
        response.track.add(text, samples)
        return True

    def finish(self, token: ResponseToken) -> bool:
        """All of ``token``'s sentences were synthesized; False: not current."""
        response = self._live(token)
        if response is None:
            return False
        response.track.finish()
        return True

    def pause(self, token: ResponseToken, played: int) -> bool:
        """The satellite paused ``token``'s response after ``played`` samples.

        False, and counted, for a response that is not current, has ended, or
        is already paused: its first pause and its offset stand.
        """
        response = self._live(token)
        if response is None or response.pause is not None:
            self.counters.ignored_pauses += 1
            _LOGGER.debug("Barge-in: pause of %r ignored", token)
            return False
        pause = _Pause(response.track.point(played), played, self._clock.now())
        response.pause = pause
        gate_on = self._gate()
        if gate_on:
            self._time(response, pause)
        self._report(response, pause, BargeInKind.PAUSE, Reason.SPEECH)
        if not gate_on:
            self._close(response, pause, BargeInKind.STOP, Reason.GATE_OFF)
        return True

    def verdict(self, token: ResponseToken, verdict: Verdict) -> bool:
        """The gate's verdict on ``token``'s paused response; False: ignored.

        Ignored, and counted in ``stale_verdicts``, unless ``token`` is the
        current response's and a pause of it waits. ValueError for a verdict
        that is not one.
        """
        verdict = Verdict(verdict)
        response = self._live(token)
        pause = response.pause if response else None
        if response is None or pause is None or pause.checking:
            self.counters.stale_verdicts += 1
            _LOGGER.debug("Barge-in: verdict %s for %r ignored", verdict, token)
            return False
        if pause.timer is not None:
            pause.timer.cancel()
        if verdict is Verdict.ENROLLED:
            self._close(response, pause, BargeInKind.STOP, Reason.ENROLLED)
        elif verdict is Verdict.UNSURE:
            pause.checking = True
            self._time(response, pause)
            self._report(response, pause, BargeInKind.CHECK, Reason.UNSURE)
        else:
            self._resume_or_end(response, pause, Reason.OTHER_SPEAKER)
        return True

    @property
    def checking(self) -> bool:
        """Whether a paused answer waits for ``checked`` (the verdict was unsure)."""
        pause = self._response.pause if self._response else None
        return self.waiting and pause is not None and pause.checking

    def checked(self, command: bool) -> bool:
        """The held request was checked: a ``command`` stops, else resumes.

        False, and nothing done, when no check waits (it timed out, a new
        answer replaced the one paused).
        """
        response = self._response
        if not self.checking or response is None or response.pause is None:
            return False
        pause = response.pause
        if pause.timer is not None:
            pause.timer.cancel()
        if command:
            self._close(response, pause, BargeInKind.STOP, Reason.UNSURE_COMMAND)
        else:
            self._resume_or_end(response, pause, Reason.NOT_A_COMMAND)
        return True

    def _resume_or_end(self, response: _Response, pause: _Pause, why: Reason) -> None:
        """Not the user: resume at the sentence, or end it past the limits."""
        if pause.point is None:
            self._close(response, pause, BargeInKind.STOP, Reason.NOTHING_LEFT)
        elif response.resumes >= self.limits.max_resumes:
            self._close(response, pause, BargeInKind.SILENCE, Reason.MAX_RESUMES)
        elif self._too_soon(response):
            self._close(response, pause, BargeInKind.SILENCE, Reason.TOO_SOON)
        else:
            response.pause = None
            response.resumes += 1
            response.last_resume_at = self._clock.now()
            self._report(
                response, pause, BargeInKind.RESUME, why, resume_from=pause.point.start
            )

    def heard(self, token: ResponseToken) -> str | None:
        """The response text said before ``token``'s pause that waits or ended it.

        What the user heard, for the conversation's history; None if the
        response is not current or no such pause.
        """
        response = self._response
        if response is None or response.token is not token or not response.pause:
            return None
        return response.track.heard(response.pause.point)

    def cancel(self) -> None:
        """The current response is over (link lost, unload, replaced).

        Its token is cancelled; a pause still waiting is abandoned, with no
        record (nothing is left to act on) and counted.
        """
        response, self._response = self._response, None
        if response is None:
            return
        response.token.cancel()
        if response.pause is not None and not response.closed:
            if response.pause.timer is not None:
                response.pause.timer.cancel()
            self.counters.abandoned += 1

    def _live(self, token: ResponseToken) -> _Response | None:
        """The current response if ``token`` is its and it has not ended."""
        response = self._response
        if response is None or response.token is not token or response.closed:
            return None
        return response

    def _too_soon(self, response: _Response) -> bool:
        """Within ``min_resume_gap_s`` of the response's last resume."""
        last = response.last_resume_at
        return last is not None and (
            self._clock.now() < last + self.limits.min_resume_gap_s
        )

    def _time(self, response: _Response, pause: _Pause) -> None:
        """Time out ``pause`` (its verdict, or its check) after the limit."""
        pause.timer = self._clock.call_later(
            self.limits.verdict_timeout_s, lambda: self._timed_out(response, pause)
        )

    def _timed_out(self, response: _Response, pause: _Pause) -> None:
        if response.pause is pause and not response.closed:
            self._close(response, pause, BargeInKind.TIMEOUT, Reason.NO_VERDICT)

    def _close(
        self, response: _Response, pause: _Pause, kind: BargeInKind, reason: Reason
    ) -> None:
        """End the paused response with ``kind``: flushed, its token cancelled."""
        response.closed = True
        response.token.cancel()
        self._report(response, pause, kind, reason)

    def _report(
        self,
        response: _Response,
        pause: _Pause,
        kind: BargeInKind,
        reason: Reason,
        resume_from: int | None = None,
    ) -> None:
        self.counters.count(kind)
        record = BargeInRecord(
            kind=kind,
            response_id=response.token.id,
            sentence=pause.point.index if pause.point else None,
            offset=pause.offset,
            reason=reason,
            paused_at=pause.at,
            at=self._clock.now(),
            resume_from=resume_from,
        )
        _LOGGER.debug("Barge-in: %s", record)
        self._on_record(record)
