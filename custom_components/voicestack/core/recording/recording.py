"""One request's recording: its audio as Home Assistant received it, and what became of it.

The debug panel shows every request a satellite made: a waveform with markers
(the preroll splice, the wake-word cut, where Home Assistant's VAD heard speech
start and end, where the stream ended), the raw transcript token by token, the
router's decision, the answer, the playback and the time each stage took. A
``Recording`` collects all of it while the request runs; ``meta()`` is the
metadata dict of the shared contract (schema version 2), ``pcm()`` its audio.

Audio comes in on the event loop, once per chunk, for as long as the request
streams: ``add_audio`` only appends to a ``bytearray`` (bounded by
``max_bytes``), everything else waits for ``meta()``.

Where the cut sits (``preroll.cut``; a *wake cut* marker only for a request a
wake word started): the satellite's ``voicestack-preroll`` says how many
samples of buffered audio come first (the splice: live audio starts after them)
and the absolute mic sample of the cut. After a wake word the preroll ends
at the detection, so the cut is at the splice; a request a speech onset started
(a listen window, always listening) buffers up to the end of the mic chunk the
onset fell in, so the cut lies up to one chunk before the splice. The
satellite's ``start`` (the absolute mic sample of the preroll's first sample,
protocol 1, optional) places it exactly: ``cut - start``. Without it (an older
satellite) the cut is taken to be at the splice: exact after a wake word, at
most one mic chunk (80 ms) late after a speech onset.

What a person asks first, "did it work?", is ``result`` (success, failure,
empty) and, for a failure, its stage (``core/request_result.py``); the agent's
answer (``agent``) says its response type, error code, the intent it matched,
its targets, and whether an action ran.

Home Assistant-free: the glue (``recording/recorder.py``) feeds it the pipeline's
events, the route, the agent's answer and the playback, on an injected clock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
import re
from typing import Any, Final

from ..clock import Clock
from ..request_result import (
    FailedStage,
    Result,
    failure,
    failure_of,
    stage_failing_as,
)
from ..router.normalize import hear
from ..router.route import Route
from ..speaker import Playback, PlaybackOutcome

SCHEMA_VERSION: Final = 2  # 2: result, agent, failure
RATE: Final = 16000  # what satellites send and the pipeline reads: 16 kHz
WIDTH: Final = 2  # 16-bit mono
# A request streams for 30 s at most once speech-to-text runs (request_audio);
# the wake word stage of a stock satellite has no such limit. The recording
# keeps the first minute and drops what comes after.
MAX_RECORDED_S: Final = 60.0
MAX_RECORDED_BYTES: Final = int(MAX_RECORDED_S * RATE * WIDTH)
STAGES: Final = ("wake", "stream", "stt", "route", "agent", "speech")

# Special tokens speech-to-text writes: [BLANK_AUDIO], (music playing), *sigh*,
# <|nospeech|>; each is one token even with spaces inside.
_SPECIAL: Final = re.compile(r"\[[^\]]*\]|\([^)]*\)|<\|[^>]*\|>|\*[^*]*\*|[♪♫]+")


class Outcome(StrEnum):
    """What became of a request."""

    ROUTED = "routed"  # the router decided (and the answer was said)
    EMPTY = "empty"  # speech-to-text found no words
    NO_SPEECH = "no_speech"  # the satellite heard nobody speak
    BUFFERED = "buffered"  # a fragment held after an action
    STOPPED = "stopped"  # a stop phrase ended the session
    QUESTION = "question"  # the answer to ``ask_question`` (its caller's)
    RESUMED = "resumed"  # said over an answer, no command: the answer played on
    FAILED = "failed"  # an engine or the agent failed
    CANCELLED = "cancelled"  # a new request, a lost link, an unload


_EMPTY_OUTCOMES: Final = frozenset({Outcome.EMPTY, Outcome.NO_SPEECH})
_FAILED_OUTCOMES: Final = frozenset({Outcome.FAILED, Outcome.CANCELLED})
_PLAYBACK_FAILED: Final = frozenset({PlaybackOutcome.TIMEOUT, PlaybackOutcome.LOST})
MAX_TARGETS: Final = 20  # targets of an agent's answer kept


class EndOfSpeech(StrEnum):
    """What ended the request's audio."""

    ENDPOINTER = "endpointer"  # the satellite (its end of speech or its limit)
    HA_VAD = "ha_vad"  # Home Assistant's VAD in the pipeline
    MAX_LENGTH = "max_length"  # the request audio's limits (request_audio)
    NO_SPEECH = "no_speech"  # the satellite heard nobody speak
    CANCELLED = "cancelled"  # the request ended before its audio did


def stt_tokens(raw: str) -> list[str]:
    """``raw`` split on whitespace, special tokens kept whole.

    "[BLANK_AUDIO]", "(music playing)" or "<|nospeech|>" stay one token each,
    so the panel can highlight them.
    """
    tokens: list[str] = []
    position = 0
    for special in _SPECIAL.finditer(raw):
        tokens += raw[position : special.start()].split()
        tokens.append(special.group())
        position = special.end()
    tokens += raw[position:].split()
    return tokens


class Recording:
    """The audio and the story of one request; see the module."""

    def __init__(
        self,
        clock: Clock,
        *,
        started: str,
        entry_id: str,
        satellite: str,
        entity_id: str | None,
        wake_word: str | None,
        woken: bool,
        wake_stage: bool = False,
        max_bytes: int = MAX_RECORDED_BYTES,
    ) -> None:
        """A request that began now (``started``: the wall-clock time, ISO UTC).

        ``woken``: the satellite's own wake word ``wake_word`` started it
        (detected before ``run-pipeline``). ``wake_stage``: Home Assistant's
        wake word engine listens first (a stock satellite); speech-to-text
        starts at its detection (``wake_word_detected``), otherwise now.
        """
        self._clock = clock
        self._t0 = clock.now()
        self._max_bytes = max_bytes
        self._audio = bytearray()
        self._about = {
            "entry_id": entry_id,
            "satellite": satellite,
            "entity_id": entity_id,
            "started": started,
        }
        self._stages: dict[str, list[float | None]] = {}
        self._markers: dict[str, int] = {}
        self._preroll: dict[str, int] | None = None
        self._wake: dict[str, Any] | None = None
        self.stt_engine: str | None = None
        self.raw: str | None = None  # None until speech-to-text ended
        self.end_of_speech: EndOfSpeech | None = None
        self.outcome: Outcome | None = None
        self.reason: str | None = None  # why it was empty (``no_speech``, ``no_words``)
        self.route: Route | None = None
        self.response = ""
        self.agent: dict[str, Any] | None = None  # the agent's answer (answered)
        self._failure: dict[str, Any] | None = None
        self._playback: dict[str, Any] | None = None
        self.stream_open = True
        self._finished = False
        self._start("stream")
        if woken:
            self.wake_word_detected(wake_word, None)
        elif not wake_stage:
            self._start("stt")

    # -- the satellite's stream (``add_audio`` runs once per chunk) ----------------

    def add_audio(self, chunk: bytes) -> None:
        """A chunk of the request's audio; beyond ``max_bytes`` it is dropped."""
        if len(self._audio) + len(chunk) <= self._max_bytes:
            self._audio += chunk

    def preroll(self, samples: int, cut: int, start: int | None = None) -> None:
        """The satellite's ``voicestack-preroll``: the splice and where the cut is.

        ``start``: the absolute mic sample of the preroll's first sample (absent
        from older satellites: the cut is then taken to be at the splice).
        """
        position = samples if start is None else min(max(cut - start, 0), samples)
        self._preroll = {"samples": samples, "cut": position}
        self._markers.update(preroll_start=0, splice=samples)
        if self._wake is not None:
            # A request without a wake word (a follow-up, a listen window) was
            # cut at a speech onset: no wake cut to show; ``preroll.cut`` says where.
            self._markers["wake_cut"] = position

    def stream_ended(self, cause: EndOfSpeech | None = None) -> None:
        """No more audio comes (``audio-stop``, a limit, the request's end).

        ``cause`` is what ended the speech, if nothing ended it before.
        """
        if cause is not None:
            self.ended_by(cause)
        if self.stream_open:
            self.stream_open = False
            self._end("stream")

    def ended_by(self, cause: EndOfSpeech) -> None:
        """What ended the speech; the first cause told is the one."""
        if self.end_of_speech is None:
            self.end_of_speech = cause

    # -- Home Assistant's pipeline ---------------------------------------------------

    def wake_word_detected(self, name: str | None, at_ms: int | None) -> None:
        """A wake word started the request; ``at_ms``: where in the stream (HA's).

        Speech-to-text starts with it.
        """
        now = self._since_start()
        self._wake = {"name": name, "detected_s": now}
        self._stages["wake"] = [0.0, now]
        self._start("stt")
        if at_ms is not None and self._preroll is None:
            self._markers["wake_cut"] = self._sample(at_ms)

    def speech_started(self, at_ms: int) -> None:
        """Home Assistant's VAD heard speech start at ``at_ms`` into the stream."""
        self._markers["speech_start"] = self._sample(at_ms)

    def speech_ended(self, at_ms: int) -> None:
        """Home Assistant's VAD heard speech end at ``at_ms``: it ended the audio."""
        self._markers["speech_end"] = self._sample(at_ms)
        self.ended_by(EndOfSpeech.HA_VAD)

    def heard(self, raw: str, engine: str | None = None) -> None:
        """Speech-to-text ended with ``raw`` ("" when it found nothing)."""
        self.raw = raw
        if engine is not None:
            self.stt_engine = engine
        self._end("stt")

    # -- what the request became --------------------------------------------------

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """``with recording.stage("agent"): ...`` times a stage.

        An exception out of it is the request's failure, at that stage.
        """
        self._start(name)
        try:
            yield
        except Exception as err:
            self.failed(stage_failing_as(name), None, str(err))
            raise
        finally:
            self._end(name)

    def failed(self, stage: FailedStage, code: str | None, message: str) -> None:
        """The request failed at ``stage``; the first failure told is the one."""
        if self._failure is None:
            self._failure = failure(stage, code, message)

    def answered(
        self,
        *,
        response_type: str,
        error_code: str | None,
        intent: str | None,
        targets: list[dict[str, Any]],
        failed_targets: list[dict[str, Any]],
        acted: bool,
    ) -> None:
        """The conversation agent's answer (its intent response).

        ``response_type``: action_done, query_answer or error (then
        ``error_code`` says why: no_intent_match, no_valid_targets…);
        ``intent``: the intent it matched (None: none, or an agent that does not
        say); ``acted``: an action ran (action_done with targets it succeeded on).
        """
        self.agent = {
            "response_type": response_type,
            "error_code": error_code,
            "intent": intent,
            "targets": targets[:MAX_TARGETS],
            "failed_targets": failed_targets[:MAX_TARGETS],
            "acted": acted,
        }

    def routed(self, route: Route) -> None:
        """The router decided."""
        self.route = route
        self.finish_as(Outcome.ROUTED)

    def said(self, response: str, playback: Playback) -> None:
        """What was said back, sentence by sentence, and how its playback ended.

        Sentence offsets are seconds into the playback's audio; nothing played
        (no text, no audio) leaves the playback null.
        """
        self.response = response
        if playback.outcome in _PLAYBACK_FAILED:
            self.failed(
                FailedStage.PLAYBACK,
                str(playback.outcome),
                "the satellite never said it played the answer"
                if playback.outcome is PlaybackOutcome.TIMEOUT
                else "the connection dropped while the answer played",
            )
        rate = playback.rate
        if rate is None or not playback.sentences:
            return
        self._playback = {
            "sentences": [
                {
                    "text": s.text,
                    "start_s": round(s.start_sample / rate, 3),
                    "duration_s": round(s.samples / rate, 3),
                }
                for s in playback.sentences
            ],
            "outcome": str(playback.outcome),
        }

    def finish(self) -> bool:
        """The request is over; False if it was already (it is saved once)."""
        if self._finished:
            return False
        self._finished = True
        return True

    def finish_as(self, outcome: Outcome, reason: str | None = None) -> None:
        """The request's outcome (and why); the first one told is the one."""
        if self.outcome is None:
            self.outcome, self.reason = outcome, reason

    # -- the result ---------------------------------------------------------------

    @property
    def samples(self) -> int:
        """Samples recorded so far."""
        return len(self._audio) // WIDTH

    def pcm(self) -> bytes:
        """The recorded audio: 16 kHz, 16-bit, mono PCM."""
        return bytes(self._audio[: self.samples * WIDTH])

    def meta(self) -> dict[str, Any]:
        """The contract's metadata (``id`` and ``bytes`` are the library's)."""
        samples = self.samples
        markers = {**self._markers, "stream_end": samples}
        raw, route = self.raw, self.route
        outcome = self.outcome or Outcome.CANCELLED
        failure = self._failure_of(outcome)
        return {
            "version": SCHEMA_VERSION,
            "id": None,
            **self._about,
            "rate": RATE,
            "samples": samples,
            "duration_s": round(samples / RATE, 3),
            "wake_word": self._wake,
            "preroll": self._preroll,
            "markers": [
                {"name": name, "sample": min(sample, samples)}
                for name, sample in sorted(markers.items(), key=_by_sample)
            ],
            "end_of_speech": self.end_of_speech,
            "stt": None
            if raw is None
            else {"engine": self.stt_engine, "raw": raw, "tokens": stt_tokens(raw)},
            "text": hear(raw).key if raw else "",
            "outcome": outcome,
            "reason": self.reason,
            "result": Result.EMPTY
            if outcome in _EMPTY_OUTCOMES
            else Result.FAILURE
            if failure is not None
            else Result.SUCCESS,
            "failure": failure,
            "decision": None if route is None else _decision(route),
            "agent": self.agent,
            "response": self.response,
            "timings": [
                {"stage": name, "start_s": span[0], "end_s": span[1]}
                for name in STAGES
                if (span := self._stages.get(name)) is not None
            ],
            "playback": self._playback,
            "bytes": None,
        }

    # -- inside ----------------------------------------------------------------------

    def _failure_of(self, outcome: Outcome) -> dict[str, Any] | None:
        """Where the request failed, if it did (None: it did not, or it was empty)."""
        if outcome in _EMPTY_OUTCOMES:
            return None
        timed = [name for name in STAGES if name in self._stages and name != "stream"]
        return failure_of(
            told=self._failure,
            ended_early=str(outcome) if outcome in _FAILED_OUTCOMES else None,
            last_stage=timed[-1] if timed else None,
            agent=self.agent,
            stack=None if self.route is None else self.route.stack,
            response=self.response,
        )

    def _since_start(self) -> float:
        return round(self._clock.now() - self._t0, 3)

    def _sample(self, ms: int) -> int:
        return max(0, ms) * RATE // 1000

    def _start(self, name: str) -> None:
        if name not in self._stages:
            self._stages[name] = [self._since_start(), None]

    def _end(self, name: str) -> None:
        span = self._stages.get(name)
        if span is not None and span[1] is None:
            span[1] = self._since_start()


def _by_sample(marker: tuple[str, int]) -> int:
    return marker[1]


def _decision(route: Route) -> dict[str, Any]:
    return {
        "frame": route.frame,
        "rule": route.rule,
        "reason": route.reason,
        "trace": list(route.trace),
        "explain": route.explain,
        "stack": list(route.stack),
        "sent_to_agent": route.agent_text is not None,
    }
