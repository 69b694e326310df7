"""The bounded follow-up loop, exact on a manual clock: turns, ends, memory, stop."""

from __future__ import annotations

import itertools

import pytest

from custom_components.voicestack.core.conversation.follow_up import (
    LISTEN_GRACE_S,
    EndReason,
    FollowUpLoop,
    Session,
    asks,
)
from custom_components.voicestack.core.conversation.policy import (
    FollowUpMode,
    FollowUpPolicy,
    Memory,
)
from devstack.manual_clock import ManualClock


class Harness:
    """A loop on a manual clock that records every end."""

    def __init__(self, **policy: object) -> None:
        """``policy``: the ``FollowUpPolicy`` fields that are not the defaults."""
        self.clock = ManualClock()
        self.ended: list[tuple[str, int, EndReason]] = []
        ids = (f"s{n}" for n in itertools.count(1))
        self.loop = FollowUpLoop(
            FollowUpPolicy(**policy),  # type: ignore[arg-type]
            self.clock,
            self.on_end,
            new_id=lambda: next(ids),
        )

    def on_end(self, session: Session, reason: EndReason) -> None:
        """Record the session, its turns and why it ended."""
        self.ended.append((session.id, session.turn, reason))


def test_a_single_shot_ends_answered_and_opens_nothing() -> None:
    run = Harness(mode=FollowUpMode.OFF)

    session = run.loop.begin_turn(woken=True)
    assert run.loop.status.text == "turn 1 of 1"
    assert run.loop.answered(agent_asked_back=True) is None

    assert (session.id, session.started_at) == ("s1", 1000.0)
    assert run.ended == [("s1", 1, EndReason.ANSWERED)]
    assert run.loop.status.text == "idle"
    assert run.clock.pending == 0


def test_agent_mode_follows_up_only_when_the_agent_asks_back() -> None:
    run = Harness()

    run.loop.begin_turn(woken=True)
    assert run.loop.answered(agent_asked_back=True) == 8.0
    assert run.ended == []
    run.loop.begin_turn(woken=False)
    assert run.loop.status.text == "turn 2 of 3"
    assert run.loop.answered(agent_asked_back=False) is None

    assert run.ended == [("s1", 2, EndReason.ANSWERED)]


@pytest.mark.parametrize("mode", [FollowUpMode.AGENT, FollowUpMode.ALWAYS])
def test_one_turn_at_most_ends_at_the_limit(mode: FollowUpMode) -> None:
    run = Harness(mode=mode, max_turns=1)

    run.loop.begin_turn(woken=True)

    assert run.loop.answered(agent_asked_back=True) is None
    assert run.ended == [("s1", 1, EndReason.MAX_TURNS)]


def test_always_keeps_listening_up_to_three_turns() -> None:
    run = Harness(mode=FollowUpMode.ALWAYS)

    run.loop.begin_turn(woken=True)
    assert run.loop.answered(agent_asked_back=False) == 8.0
    run.loop.begin_turn(woken=False)
    assert run.loop.answered(agent_asked_back=False) == 8.0
    run.loop.begin_turn(woken=False)
    assert run.loop.status.text == "turn 3 of 3"
    assert run.loop.answered(agent_asked_back=False) is None

    assert run.ended == [("s1", 3, EndReason.MAX_TURNS)]
    assert run.clock.pending == 0


def test_silence_ends_the_session_exactly_at_window_plus_grace() -> None:
    run = Harness(listen_s=4.0)
    run.loop.begin_turn(woken=True)
    assert run.loop.answered(agent_asked_back=True) == 4.0

    run.clock.advance(4.0 + LISTEN_GRACE_S - 0.5)
    assert run.ended == []
    assert run.loop.status.open
    run.clock.advance(0.5)

    assert run.ended == [("s1", 1, EndReason.SILENCE)]
    run.clock.advance(60.0)
    assert run.ended == [("s1", 1, EndReason.SILENCE)]


def test_speech_in_the_window_is_the_next_turn_and_stops_the_silence_timer() -> None:
    run = Harness()
    run.loop.begin_turn(woken=True)
    run.loop.answered(agent_asked_back=True)

    run.clock.advance(8.75)  # after the window, within the grace
    session = run.loop.begin_turn(woken=False)
    run.clock.advance(60.0)

    assert (session.id, session.turn) == ("s1", 2)
    assert run.ended == []
    assert run.clock.pending == 0


def test_a_wake_word_mid_session_ends_it_and_starts_a_new_one() -> None:
    run = Harness()
    run.loop.begin_turn(woken=True)
    run.loop.answered(agent_asked_back=True)

    session = run.loop.begin_turn(woken=True)

    assert (session.id, session.turn) == ("s2", 1)
    assert run.ended == [("s1", 1, EndReason.WAKE_WORD)]
    run.clock.advance(60.0)  # the old session's silence timer is gone
    assert run.ended == [("s1", 1, EndReason.WAKE_WORD)]


def test_a_window_without_a_session_starts_one() -> None:
    run = Harness()

    session = run.loop.begin_turn(woken=False)

    assert (session.id, session.turn) == ("s1", 1)
    assert run.ended == []


def test_turns_never_reported_answered_still_count() -> None:
    run = Harness(mode=FollowUpMode.ALWAYS)
    for _ in range(4):
        run.loop.begin_turn(woken=False)

    assert run.loop.answered(agent_asked_back=True) is None
    assert run.ended == [("s1", 4, EndReason.MAX_TURNS)]


def test_stop_and_cancel_end_a_session_once() -> None:
    run = Harness()
    run.loop.begin_turn(woken=True)
    run.loop.answered(agent_asked_back=True)
    run.loop.begin_turn(woken=False)
    run.loop.stop()
    run.loop.stop()
    run.loop.cancel()
    assert run.loop.answered(agent_asked_back=True) is None

    run.loop.begin_turn(woken=True)
    run.loop.answered(agent_asked_back=True)
    run.loop.cancel()
    run.loop.cancel()
    run.clock.advance(60.0)

    assert run.ended == [("s1", 2, EndReason.STOP_WORD), ("s2", 1, EndReason.CANCELLED)]


def test_a_window_request_without_words_ends_the_session_in_silence() -> None:
    run = Harness(mode=FollowUpMode.ALWAYS)
    run.loop.begin_turn(woken=True)
    run.loop.answered(agent_asked_back=False)
    run.loop.begin_turn(woken=False)  # the TV, in the window
    run.loop.nothing_heard()
    run.loop.nothing_heard()

    assert run.ended == [("s1", 2, EndReason.SILENCE)]
    assert run.clock.pending == 0


def test_held_fragments_stop_the_silence_timer_and_make_one_turn() -> None:
    run = Harness(mode=FollowUpMode.ALWAYS)
    run.loop.begin_turn(woken=True)
    run.loop.answered(agent_asked_back=False)
    run.loop.hold()  # a fragment in the window
    run.loop.hold()  # and another
    run.clock.advance(60.0)
    session = run.loop.begin_turn(woken=False)  # the buffer flushed: one turn

    assert session.turn == 2
    assert run.ended == []


def test_answering_twice_keeps_one_silence_timer() -> None:
    run = Harness()
    run.loop.begin_turn(woken=True)
    run.loop.answered(agent_asked_back=True)
    run.clock.advance(5.0)
    run.loop.answered(agent_asked_back=True)

    assert run.clock.pending == 1
    run.clock.advance(8.5)
    assert run.ended == []
    run.clock.advance(0.5)
    assert run.ended == [("s1", 1, EndReason.SILENCE)]


def test_shared_memory_carries_the_conversation_within_a_session_only() -> None:
    run = Harness()
    run.loop.begin_turn(woken=True)
    assert run.loop.conversation_id() is None
    run.loop.remember("c1")
    run.loop.answered(agent_asked_back=True)
    run.loop.begin_turn(woken=False)
    assert run.loop.conversation_id() == "c1"

    run.loop.begin_turn(woken=True)

    assert run.loop.conversation_id() is None


def test_independent_memory_starts_a_fresh_conversation_every_turn() -> None:
    run = Harness(memory=Memory.INDEPENDENT)
    run.loop.begin_turn(woken=True)
    run.loop.remember("c1")
    run.loop.answered(agent_asked_back=True)
    run.loop.begin_turn(woken=False)

    assert run.loop.conversation_id() is None


def test_no_session_no_conversation() -> None:
    run = Harness()
    run.loop.remember("c1")

    assert run.loop.conversation_id() is None


def test_the_status_names_the_session() -> None:
    run = Harness(mode=FollowUpMode.ALWAYS, max_turns=5)
    idle = run.loop.status
    run.loop.begin_turn(woken=True)
    status = run.loop.status

    assert (idle.open, idle.turn, idle.session_id, idle.text) == (
        False,
        0,
        None,
        "idle",
    )
    assert (status.open, status.turn, status.max_turns, status.mode) == (
        True,
        1,
        5,
        FollowUpMode.ALWAYS,
    )
    assert (status.session_id, status.text) == ("s1", "turn 1 of 5")


@pytest.mark.parametrize(
    "said",
    [
        "Stop!",
        "That's all.",
        "that is all",
        "never mind",
        "Nevermind",
        "Never mind, thanks.",
        "stop please",
        "Bye, thank you!",
        "Thank you, bye.",
        "um, cancel",
        "No thanks",
        "Goodbye.",
    ],
)
def test_the_users_stop_phrase_ends_the_loop(said: str) -> None:
    assert Harness().loop.is_stop(said)


@pytest.mark.parametrize(
    "said",
    [
        "stop the music",  # a command, not the end of the conversation
        "please stop",  # only politeness after the phrase, never before
        "thanks",
        "cancel my timer",
        "what's the weather",
        "",
        "[BLANK_AUDIO]",
    ],
)
def test_other_speech_is_not_a_stop(said: str) -> None:
    assert not Harness().loop.is_stop(said)


def test_own_stop_words_replace_the_defaults() -> None:
    loop = Harness(stop_words=(" Enough ", "we're done")).loop

    assert loop.is_stop("enough!")
    assert loop.is_stop("were done")
    assert not loop.is_stop("stop")
    assert not Harness(stop_words=()).loop.is_stop("stop")


def test_sessions_get_unique_ids_by_default() -> None:
    loop = FollowUpLoop(FollowUpPolicy(), ManualClock(), lambda *_: None)

    first = loop.begin_turn(woken=True).id
    second = loop.begin_turn(woken=True).id

    assert first != second
    assert len(first) == 32
    assert int(first, 16) >= 0


@pytest.mark.parametrize(
    ("mode", "answer", "asked_back", "closing"),
    [
        # At the limit, an answer that wants a reply: the user is told.
        (FollowUpMode.ALWAYS, "Shall I check another room?", False, True),
        (FollowUpMode.ALWAYS, "Done.", True, True),
        (FollowUpMode.AGENT, "Done. Anything else?", True, True),
        # Nothing left open: nothing more to say.
        (FollowUpMode.ALWAYS, "Done.", False, False),
        # The agent did not ask back: the session ends answered, not at the limit.
        (FollowUpMode.AGENT, "Shall I check another room?", False, False),
    ],
)
def test_the_last_turns_question_gets_the_closing(
    mode: FollowUpMode, answer: str, asked_back: bool, closing: bool
) -> None:
    run = Harness(mode=mode, max_turns=2)
    run.loop.begin_turn(woken=True)
    before_the_limit = run.loop.closing(answer, asked_back)
    run.loop.answered(agent_asked_back=True)
    run.loop.begin_turn(woken=False)

    said = run.loop.closing(answer, asked_back)
    run.loop.answered(asked_back)

    assert before_the_limit == ""  # someone still listens after turn 1
    assert said == ("Say the wake word to go on." if closing else "")
    if closing:
        assert run.ended == [("s1", 2, EndReason.MAX_TURNS)]


def test_no_closing_when_single_shot_or_none_is_set() -> None:
    off = Harness(mode=FollowUpMode.OFF)
    off.loop.begin_turn(woken=True)
    silent = Harness(mode=FollowUpMode.ALWAYS, max_turns=1, closing="")
    silent.loop.begin_turn(woken=True)
    idle = Harness(max_turns=1)

    assert off.loop.closing("Anything else?", agent_asked_back=True) == ""
    assert silent.loop.closing("Anything else?", agent_asked_back=True) == ""
    assert idle.loop.closing("Anything else?", agent_asked_back=True) == ""


@pytest.mark.parametrize(
    ("answer", "question"),
    [
        ("Shall I check another room?", True),
        ('He asked: "Which room?"', True),
        ("¿Quieres algo más?", True),
        ("Voulez-vous autre chose ? ", True),
        ("Done.", False),
        ("Why? Because it was on.", False),
        ("", False),
    ],
)
def test_an_answer_asks_when_it_ends_in_a_question_mark(
    answer: str, question: bool
) -> None:
    assert asks(answer) is question
