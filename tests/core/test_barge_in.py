"""Barge-in verdicts, resumes and limits, exact on a manual clock."""

from __future__ import annotations

from collections.abc import Sequence
import itertools

import pytest

from custom_components.voicestack.core.barge_in.policy import (
    MAX_RESUMES,
    MIN_RESUME_GAP_S,
    VERDICT_TIMEOUT_S,
    BargeInConfigError,
    BargeInCounters,
    BargeInKind as Kind,
    BargeInLimits,
    BargeInRecord,
    Reason,
    ResponseToken,
    Verdict,
)
from custom_components.voicestack.core.barge_in.verdict import BargeIn
from custom_components.voicestack.core.resume_point import SentenceMismatchError
from custom_components.voicestack.core.sentences import split_sentences
from devstack.manual_clock import ManualClock

ANSWER = "The fan is on. The kitchen is at 21 degrees. Anything else I can do?"
SAMPLES = (16000, 24000, 20000)  # starts at 0, 16000, 40000; 60000 in all
START = 1000.0  # the manual clock's first reading


class Harness:
    """A satellite's barge-in on a manual clock that records every record."""

    def __init__(self, gate: bool = True, **limits: float) -> None:
        """``gate``: someone is enrolled; ``limits``: BargeInLimits fields."""
        self.clock = ManualClock(START)
        self.records: list[BargeInRecord] = []
        self.gate = gate
        ids = itertools.count(1)
        self.barge_in = BargeIn(
            self.clock,
            self.records.append,
            lambda: self.gate,
            BargeInLimits(**limits),
            new_id=lambda: f"r{next(ids)}",
        )

    def answer(
        self, text: str = ANSWER, samples: Sequence[int] = SAMPLES
    ) -> ResponseToken:
        """A new response, all of its sentences synthesized."""
        token = self.barge_in.start_response(text)
        for sentence, count in zip(split_sentences(text), samples, strict=True):
            assert self.barge_in.add_sentence(token, sentence, count)
        assert self.barge_in.finish(token)
        return token

    def kinds(self) -> list[tuple[Kind, Reason]]:
        """What the records said, in order."""
        return [(record.kind, record.reason) for record in self.records]

    def intruder(self, token: ResponseToken, played: int, after_s: float) -> None:
        """Someone else pauses the answer; the gate says so ``after_s`` later."""
        assert self.barge_in.pause(token, played)
        self.clock.advance(after_s)
        assert self.barge_in.verdict(token, Verdict.OTHER)


def test_the_limits_are_the_notes() -> None:
    assert (VERDICT_TIMEOUT_S, MAX_RESUMES, MIN_RESUME_GAP_S) == (10.0, 3, 2.0)
    assert BargeInLimits() == BargeInLimits(10.0, 3, 2.0)


def test_someone_else_resumes_the_answer_at_its_sentences_start() -> None:
    run = Harness()
    token = run.answer()
    run.clock.advance(2.0)

    assert run.barge_in.pause(token, 30000)
    assert run.barge_in.waiting
    run.clock.advance(1.25)
    assert run.barge_in.verdict(token, Verdict.OTHER)

    pause = BargeInRecord(Kind.PAUSE, "r1", 1, 30000, Reason.SPEECH, 1002.0, 1002.0)
    resume = BargeInRecord(
        Kind.RESUME, "r1", 1, 30000, Reason.OTHER_SPEAKER, 1002.0, 1003.25, 16000
    )
    assert run.records == [pause, resume]
    assert not resume.request
    assert not token.cancelled
    assert not run.barge_in.waiting
    assert run.clock.pending == 0  # the timeout was called off
    assert run.barge_in.counters == BargeInCounters(pauses=1, resumes=1)


def test_the_enrolled_speaker_stops_the_answer_and_is_the_next_request() -> None:
    run = Harness()
    token = run.answer()

    run.barge_in.pause(token, 17000)
    run.clock.advance(0.75)
    assert run.barge_in.verdict(token, Verdict.ENROLLED)

    stop = run.records[-1]
    assert (stop.kind, stop.reason, stop.request) == (Kind.STOP, Reason.ENROLLED, True)
    assert (stop.sentence, stop.offset, stop.resume_from) == (1, 17000, None)
    assert (stop.paused_at, stop.at) == (START, START + 0.75)
    assert token.cancelled
    assert run.clock.pending == 0
    assert run.barge_in.heard(token) == "The fan is on."
    # The response is over: nothing more of it is taken.
    assert not run.barge_in.pause(token, 18000)
    assert not run.barge_in.verdict(token, Verdict.OTHER)
    assert run.kinds() == [(Kind.PAUSE, Reason.SPEECH), (Kind.STOP, Reason.ENROLLED)]
    assert run.barge_in.counters == BargeInCounters(
        pauses=1, stops=1, stale_verdicts=1, ignored_pauses=1
    )


def test_unsure_keeps_the_answer_paused_and_a_command_stops_it() -> None:
    run = Harness()
    token = run.answer()
    run.barge_in.pause(token, 17000)
    run.clock.advance(1.4)

    assert run.barge_in.verdict(token, Verdict.UNSURE)

    check = run.records[-1]
    assert (check.kind, check.reason, check.request) == (
        Kind.CHECK,
        Reason.UNSURE,
        False,
    )
    assert run.barge_in.checking
    assert not token.cancelled
    # Whatever the satellite says meanwhile does not decide: the check does.
    assert not run.barge_in.verdict(token, Verdict.OTHER)
    run.clock.advance(1.6)
    assert run.barge_in.checked(command=True)

    stop = run.records[-1]
    assert (stop.kind, stop.reason, stop.request) == (
        Kind.STOP,
        Reason.UNSURE_COMMAND,
        True,
    )
    assert (stop.paused_at, stop.at) == (START, START + 3.0)
    assert token.cancelled
    assert not run.barge_in.checking
    assert run.clock.pending == 0
    assert not run.barge_in.checked(command=False)  # nothing waits any more
    assert run.barge_in.counters == BargeInCounters(
        pauses=1, checks=1, stops=1, stale_verdicts=1
    )


def test_unsure_and_no_command_resumes_at_the_sentence_within_the_limits() -> None:
    run = Harness(max_resumes=1)
    token = run.answer()
    run.barge_in.pause(token, 17000)
    run.barge_in.verdict(token, Verdict.UNSURE)

    assert run.barge_in.checked(command=False)

    resume = run.records[-1]
    assert (resume.kind, resume.reason, resume.resume_from) == (
        Kind.RESUME,
        Reason.NOT_A_COMMAND,
        16000,
    )
    assert not token.cancelled
    assert not run.barge_in.waiting
    # The resume counts against the answer's limits like anyone else's.
    run.clock.advance(5.0)
    run.barge_in.pause(token, 45000)
    run.barge_in.verdict(token, Verdict.UNSURE)
    run.barge_in.checked(command=False)
    assert run.kinds()[-1] == (Kind.SILENCE, Reason.MAX_RESUMES)


def test_a_check_that_never_ends_times_out_ten_seconds_after_the_verdict() -> None:
    run = Harness()
    token = run.answer()
    run.barge_in.pause(token, 100)
    run.clock.advance(1.0)
    run.barge_in.verdict(token, Verdict.UNSURE)

    run.clock.advance(9.999)
    assert run.kinds()[-1] == (Kind.CHECK, Reason.UNSURE)
    run.clock.advance(0.001)

    assert run.kinds()[-1] == (Kind.TIMEOUT, Reason.NO_VERDICT)
    assert run.records[-1].at == START + 11.0
    assert token.cancelled
    assert not run.barge_in.checking


def test_no_verdict_times_out_at_exactly_ten_seconds() -> None:
    run = Harness()
    token = run.answer()
    run.barge_in.pause(token, 100)

    run.clock.advance(9.999)
    assert run.kinds() == [(Kind.PAUSE, Reason.SPEECH)]
    assert not token.cancelled

    run.clock.advance(0.001)

    timeout = run.records[-1]
    assert (timeout.kind, timeout.reason) == (Kind.TIMEOUT, Reason.NO_VERDICT)
    assert (timeout.at, timeout.request) == (START + 10.0, False)
    assert token.cancelled
    assert not run.barge_in.waiting
    # A verdict after the timeout changes nothing: the answer stays stopped.
    assert not run.barge_in.verdict(token, Verdict.OTHER)
    assert len(run.records) == 2
    assert run.barge_in.counters == BargeInCounters(
        pauses=1, timeouts=1, stale_verdicts=1
    )


def test_the_timeout_is_configurable() -> None:
    run = Harness(verdict_timeout_s=1.5)
    token = run.answer()
    run.barge_in.pause(token, 100)

    run.clock.advance(1.499)
    assert run.kinds()[-1][0] is Kind.PAUSE
    run.clock.advance(0.001)

    assert run.records[-1].kind is Kind.TIMEOUT
    assert run.records[-1].at == START + 1.5


def test_a_late_verdict_for_an_old_response_does_nothing() -> None:
    run = Harness()
    old = run.answer()
    run.barge_in.pause(old, 5000)
    run.clock.advance(1.0)
    new = run.answer("Here is the next answer.", (8000,))  # e.g. a wake word

    assert old.cancelled
    assert new is not old
    assert run.barge_in.current is new
    assert run.clock.pending == 0  # the old wait is abandoned, without a record
    assert run.barge_in.counters.abandoned == 1

    # Neither verdict touches the new response, playing or paused.
    assert not run.barge_in.verdict(old, Verdict.ENROLLED)
    assert not new.cancelled
    run.barge_in.pause(new, 4000)
    assert not run.barge_in.verdict(old, Verdict.OTHER)
    assert not run.barge_in.verdict(old, Verdict.ENROLLED)
    assert run.barge_in.waiting
    assert not new.cancelled
    # Nor do the old response's pauses and sentences.
    assert not run.barge_in.pause(old, 6000)
    assert not run.barge_in.add_sentence(old, "More.", 10)
    assert not run.barge_in.finish(old)

    run.clock.advance(0.5)
    assert run.barge_in.verdict(new, Verdict.OTHER)

    assert [(r.kind, r.response_id) for r in run.records] == [
        (Kind.PAUSE, "r1"),
        (Kind.PAUSE, "r2"),
        (Kind.RESUME, "r2"),
    ]
    assert run.records[-1].resume_from == 0
    assert run.barge_in.counters.stale_verdicts == 3
    assert run.barge_in.counters.ignored_pauses == 1


def test_a_continuous_podcast_gets_three_resumes_then_silence() -> None:
    run = Harness()
    token = run.answer()

    for played in (5000, 20000, 41000, 50000):
        run.intruder(token, played, after_s=1.0)
        run.clock.advance(3.0)

    assert run.kinds() == [
        (Kind.PAUSE, Reason.SPEECH),
        (Kind.RESUME, Reason.OTHER_SPEAKER),
        (Kind.PAUSE, Reason.SPEECH),
        (Kind.RESUME, Reason.OTHER_SPEAKER),
        (Kind.PAUSE, Reason.SPEECH),
        (Kind.RESUME, Reason.OTHER_SPEAKER),
        (Kind.PAUSE, Reason.SPEECH),
        (Kind.SILENCE, Reason.MAX_RESUMES),
    ]
    assert [r.resume_from for r in run.records if r.kind is Kind.RESUME] == [
        0,
        16000,
        40000,
    ]
    assert not run.records[-1].request
    assert token.cancelled
    assert not run.barge_in.pause(token, 55000)  # silent for good
    assert run.barge_in.counters == BargeInCounters(
        pauses=4, resumes=3, silences=1, ignored_pauses=1
    )


def test_the_enrolled_speaker_still_stops_an_answer_past_its_resumes() -> None:
    run = Harness(max_resumes=1)
    token = run.answer()
    run.intruder(token, 100, after_s=0.5)
    run.clock.advance(5.0)

    run.barge_in.pause(token, 20000)
    run.barge_in.verdict(token, Verdict.ENROLLED)

    assert run.records[-1].kind is Kind.STOP
    assert run.records[-1].request


def test_three_intruders_half_a_second_apart() -> None:
    """The second is refused by the 2 s floor: the answer goes silent.

    Intruder 1 pauses at 0 s and resumes at 0.25 s; intruder 2 pauses at 0.5 s
    and its verdict at 0.75 s is 0.5 s after that resume: SILENCE (too_soon),
    the rest of the answer is flushed. Intruder 3 at 1.0 s finds it ended: its
    pause and verdict are ignored, and counted.
    """
    run = Harness()
    token = run.answer()

    run.intruder(token, 3000, after_s=0.25)
    run.clock.advance(0.25)
    run.intruder(token, 7000, after_s=0.25)
    run.clock.advance(0.25)
    assert not run.barge_in.pause(token, 11000)
    assert not run.barge_in.verdict(token, Verdict.OTHER)

    assert run.kinds() == [
        (Kind.PAUSE, Reason.SPEECH),
        (Kind.RESUME, Reason.OTHER_SPEAKER),
        (Kind.PAUSE, Reason.SPEECH),
        (Kind.SILENCE, Reason.TOO_SOON),
    ]
    silence = run.records[-1]
    assert (silence.paused_at, silence.at) == (START + 0.5, START + 0.75)
    assert (silence.sentence, silence.offset, silence.request) == (0, 7000, False)
    assert token.cancelled
    assert run.clock.pending == 0
    assert run.barge_in.counters == BargeInCounters(
        pauses=2, resumes=1, silences=1, stale_verdicts=1, ignored_pauses=1
    )


@pytest.mark.parametrize(("gap_s", "kind"), [(1.999, Kind.SILENCE), (2.0, Kind.RESUME)])
def test_the_floor_is_two_seconds_from_the_last_resume(
    gap_s: float, kind: Kind
) -> None:
    run = Harness()
    token = run.answer()
    run.intruder(token, 3000, after_s=0.5)  # resumed at START + 0.5

    run.barge_in.pause(token, 20000)
    run.clock.advance(gap_s)
    run.barge_in.verdict(token, Verdict.OTHER)

    assert run.records[-1].kind is kind
    assert run.records[-1].at - run.records[1].at == pytest.approx(gap_s)


def test_with_no_one_enrolled_every_barge_in_stops_at_once() -> None:
    run = Harness(gate=False)
    token = run.answer()
    run.clock.advance(1.0)

    assert run.barge_in.pause(token, 30000)

    assert run.kinds() == [(Kind.PAUSE, Reason.SPEECH), (Kind.STOP, Reason.GATE_OFF)]
    stop = run.records[-1]
    assert (stop.at, stop.paused_at, stop.request) == (START + 1.0, START + 1.0, True)
    assert token.cancelled
    assert run.clock.pending == 0  # no verdict is awaited
    assert not run.barge_in.verdict(token, Verdict.OTHER)


def test_the_gate_is_read_at_each_pause() -> None:
    run = Harness(gate=False)
    run.barge_in.pause(run.answer(), 100)
    run.gate = True  # someone enrolled

    token = run.answer()
    run.barge_in.pause(token, 100)

    assert run.barge_in.waiting
    assert run.kinds()[-1] == (Kind.PAUSE, Reason.SPEECH)


def test_someone_else_after_the_last_sentence_stops_what_is_over() -> None:
    run = Harness()
    token = run.answer()

    run.barge_in.pause(token, 60000)
    run.barge_in.verdict(token, Verdict.OTHER)

    pause, stop = run.records
    assert (pause.sentence, stop.sentence) == (None, None)
    assert (stop.kind, stop.reason, stop.request) == (
        Kind.STOP,
        Reason.NOTHING_LEFT,
        False,
    )
    assert run.barge_in.heard(token) == ANSWER


def test_a_pause_between_sentences_still_being_synthesized() -> None:
    run = Harness()
    token = run.barge_in.start_response(ANSWER)
    run.barge_in.add_sentence(token, "The fan is on.", 16000)

    run.intruder(token, 16000, after_s=0.5)

    assert run.records[-1].resume_from == 16000
    assert run.records[-1].sentence == 1
    # The answer goes on: the next sentence still takes its place.
    assert run.barge_in.add_sentence(token, "The kitchen is at 21 degrees.", 24000)


def test_a_second_pause_while_waiting_keeps_the_first() -> None:
    run = Harness()
    token = run.answer()
    run.barge_in.pause(token, 20000)
    run.clock.advance(0.5)

    assert not run.barge_in.pause(token, 45000)
    run.clock.advance(0.5)
    run.barge_in.verdict(token, Verdict.OTHER)

    assert run.records[-1].resume_from == 16000
    assert run.records[-1].paused_at == START
    assert run.barge_in.counters.ignored_pauses == 1


def test_a_verdict_nobody_waits_for_is_ignored() -> None:
    run = Harness()
    token = run.answer()

    assert not run.barge_in.verdict(token, Verdict.ENROLLED)

    assert run.records == []
    assert not token.cancelled
    assert run.barge_in.counters == BargeInCounters(stale_verdicts=1)


def test_each_response_gets_a_fresh_token() -> None:
    run = Harness()
    tokens = [run.answer() for _ in range(3)]

    assert len({id(token) for token in tokens}) == 3
    assert [token.id for token in tokens] == ["r1", "r2", "r3"]
    assert [token.cancelled for token in tokens] == [True, True, False]
    assert repr(tokens[0]) == "ResponseToken(r1, cancelled)"
    default_ids = BargeIn(ManualClock(), run.records.append, lambda: True)
    assert len({default_ids.start_response("x").id for _ in range(2)}) == 2


def test_cancel_abandons_a_wait_without_a_record() -> None:
    run = Harness()
    token = run.answer()
    run.barge_in.pause(token, 100)

    run.barge_in.cancel()
    run.clock.advance(VERDICT_TIMEOUT_S)

    assert token.cancelled
    assert run.barge_in.current is None
    assert run.kinds() == [(Kind.PAUSE, Reason.SPEECH)]
    assert run.barge_in.counters == BargeInCounters(pauses=1, abandoned=1)
    assert run.barge_in.heard(token) is None


def test_bad_input_is_refused() -> None:
    run = Harness()
    token = run.answer()

    with pytest.raises(ValueError, match="not a sample count"):
        run.barge_in.pause(token, -1)
    with pytest.raises(ValueError, match="maybe"):
        run.barge_in.verdict(token, "maybe")  # type: ignore[arg-type]
    with pytest.raises(SentenceMismatchError):
        run.barge_in.add_sentence(run.barge_in.start_response("One. Two."), "Two.", 1)
    assert run.records == []


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("verdict_timeout_s", 0.0),
        ("verdict_timeout_s", 61.0),
        ("max_resumes", -1),
        ("max_resumes", 2.5),
        ("max_resumes", True),
        ("min_resume_gap_s", -0.1),
        ("min_resume_gap_s", "2"),
    ],
)
def test_limits_out_of_range_are_refused(field: str, value: object) -> None:
    with pytest.raises(BargeInConfigError) as caught:
        BargeInLimits(**{field: value})  # type: ignore[arg-type]

    assert caught.value.code == field
