"""The post-action fragment buffer, exact on a manual clock."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.conversation.debounce import (
    MAX_S,
    QUIET_S,
    DebounceConfigError,
    DebouncePolicy,
    FragmentBuffer,
    debounce_from_options,
    is_bypass,
)
from custom_components.voicestack.core.conversation.policy import (
    DEFAULT_STOP_WORDS,
    FollowUpConfigError,
)
from devstack.manual_clock import ManualClock


def _ignore(_text: str) -> None:
    """An ``on_flush`` for buffers that never flush."""


class Harness:
    """An armed buffer on a manual clock that records every flush."""

    def __init__(self, **timing: float) -> None:
        """``timing``: the buffer's ``quiet_s`` and ``max_s``, if not the defaults."""
        self.clock = ManualClock()
        self.flushed: list[str] = []
        self.buffer = FragmentBuffer(self.clock, self.flushed.append, **timing)
        self.buffer.arm()


def test_the_defaults_are_the_notes() -> None:
    assert (QUIET_S, MAX_S) == (1.5, 5.0)


def test_a_disarmed_buffer_takes_nothing() -> None:
    run = Harness()
    run.buffer.disarm()

    assert run.buffer.add("and the hall") is False
    assert (run.buffer.armed, run.buffer.buffering) == (False, False)
    assert run.clock.pending == 0


def test_an_armed_buffer_waits_for_speech_without_timers() -> None:
    run = Harness()

    run.clock.advance(60.0)

    assert (run.buffer.armed, run.buffer.buffering) == (True, False)
    assert run.clock.pending == 0
    assert run.flushed == []


def test_each_fragment_restarts_the_quiet_timer() -> None:
    run = Harness()
    assert run.buffer.add("turn on the kitchen light")
    run.clock.advance(1.0)
    assert run.buffer.add("and the hall")
    run.clock.advance(1.0)  # 2 s after the first fragment, 1 s after the last
    assert run.flushed == []
    assert run.buffer.buffered_texts == ("turn on the kitchen light", "and the hall")

    run.clock.advance(0.5)

    assert run.flushed == ["turn on the kitchen light and the hall"]
    assert (run.buffer.armed, run.buffer.buffering) == (False, False)
    assert run.clock.pending == 0


def test_the_max_time_cuts_off_fragments_that_keep_coming() -> None:
    run = Harness()
    run.buffer.add("one")
    for word in ("two", "three", "four", "five"):
        run.clock.advance(1.0)
        run.buffer.add(word)

    run.clock.advance(1.0)  # 5 s after the first, 1 s after the last

    assert run.flushed == ["one two three four five"]
    assert run.buffer.add("six") is False  # a new turn: the caller acts on it
    assert run.clock.pending == 0


def test_an_emergency_while_buffering_flushes_at_once() -> None:
    run = Harness()
    run.buffer.add("there is smoke in")
    said = "Help! The kitchen"

    assert is_bypass(said)
    run.buffer.add(said)
    run.buffer.flush_now()

    assert run.flushed == ["there is smoke in Help! The kitchen"]
    assert run.clock.pending == 0


def test_a_stop_phrase_while_buffering_ends_the_session_and_flushes_first() -> None:
    run = Harness()
    run.buffer.add("turn off the lights")

    assert is_bypass("That's all.", end_phrases=DEFAULT_STOP_WORDS)
    run.buffer.disarm()  # the session ends on the stop phrase

    assert run.flushed == ["turn off the lights"]
    assert run.buffer.armed is False
    run.clock.advance(60.0)
    assert run.flushed == ["turn off the lights"]


def test_disarming_with_nothing_buffered_flushes_nothing() -> None:
    run = Harness()

    run.buffer.disarm()

    assert run.flushed == []
    assert run.buffer.armed is False


def test_flush_now_with_nothing_buffered_changes_nothing() -> None:
    run = Harness()

    run.buffer.flush_now()

    assert run.flushed == []
    assert run.buffer.armed is True


def test_noise_is_taken_but_never_buffered() -> None:
    run = Harness()

    assert run.buffer.add("[BLANK_AUDIO]")
    assert run.buffer.add("  ")

    assert run.buffer.buffering is False
    assert run.clock.pending == 0


def test_the_flushed_turn_may_arm_again() -> None:
    clock = ManualClock()
    flushed: list[str] = []

    def on_flush(text: str) -> None:
        flushed.append(text)
        buffer.arm()  # the flushed request changed state too

    buffer = FragmentBuffer(clock, on_flush, quiet_s=0.5, max_s=0.5)
    buffer.arm()
    buffer.add("first")
    clock.advance(0.5)
    buffer.add("second")
    clock.advance(0.5)

    assert flushed == ["first", "second"]
    assert buffer.armed is True


@pytest.mark.parametrize(
    ("said", "bypass"),
    [
        ("Help!", True),
        ("um, help me", True),
        ("call mom", True),
        ("Fire", True),
        ("Stop the music", True),
        ("callback please", False),
        ("helpful tips", False),
        ("turn on the fireplace", False),
        ("and the hall", False),
        ("", False),
    ],
)
def test_emergency_words_bypass_as_whole_words_at_the_start(
    said: str, bypass: bool
) -> None:
    assert is_bypass(said) is bypass


def test_own_phrases_bypass() -> None:
    assert is_bypass("Smoke alarm!", emergency_phrases=["smoke alarm", ""])
    assert not is_bypass("help", emergency_phrases=[])
    assert is_bypass("never mind, thanks", end_phrases=["never mind"])


@pytest.mark.parametrize(
    ("timing", "code"),
    [
        ({"quiet_s": 0.2}, "quiet_s"),
        ({"quiet_s": 5.5, "max_s": 10.0}, "quiet_s"),
        ({"quiet_s": 2.0, "max_s": 1.9}, "max_s"),
        ({"max_s": 15.5}, "max_s"),
    ],
)
def test_bad_timings_name_the_option(timing: dict[str, float], code: str) -> None:
    with pytest.raises(DebounceConfigError) as raised:
        FragmentBuffer(ManualClock(), _ignore, **timing)

    assert raised.value.code == code
    assert isinstance(raised.value, FollowUpConfigError)


def test_timings_at_the_limits_are_valid() -> None:
    FragmentBuffer(ManualClock(), _ignore, quiet_s=0.3, max_s=0.3)
    FragmentBuffer(ManualClock(), _ignore, quiet_s=5.0, max_s=15.0)


def armed() -> tuple[ManualClock, list[str], FragmentBuffer]:
    """An armed buffer on a manual clock, and what it flushed."""
    clock = ManualClock()
    flushed: list[str] = []
    buffer = FragmentBuffer(clock, flushed.append)
    buffer.arm()
    return clock, flushed, buffer


def test_a_fragment_on_its_way_holds_the_quiet_timer_not_the_max() -> None:
    clock, flushed, buffer = armed()

    buffer.add("turn on the kitchen light")
    clock.advance(1.0)
    buffer.hold()  # the next fragment is being spoken and transcribed
    clock.advance(1.4)  # past the quiet time of the first fragment
    assert flushed == []
    buffer.add("and the living room lamp")
    clock.advance(1.5)

    assert flushed == ["turn on the kitchen light and the living room lamp"]


def test_a_held_buffer_still_flushes_at_the_max_time() -> None:
    clock, flushed, buffer = armed()

    buffer.add("one")
    buffer.hold()
    clock.advance(5.0)

    assert flushed == ["one"]


def test_noise_after_a_hold_restarts_the_quiet_timer() -> None:
    clock, flushed, buffer = armed()

    buffer.add("one")
    buffer.hold()
    buffer.add("[BLANK_AUDIO]")
    clock.advance(1.5)

    assert flushed == ["one"]


def test_the_quiet_timer_waits_for_every_fragment_on_its_way() -> None:
    # A loaded CPU: the first fragment's text comes while the second is heard.
    clock, flushed, buffer = armed()

    buffer.hold()  # "turn on the kitchen light", being transcribed
    buffer.hold()  # "and the living room lamp", being spoken
    buffer.add("turn on the kitchen light")
    clock.advance(3.0)  # past the quiet time: the second is still on its way
    assert flushed == []
    buffer.add("and the living room lamp")
    clock.advance(1.4)
    assert flushed == []
    clock.advance(0.1)

    assert flushed == ["turn on the kitchen light and the living room lamp"]


def test_a_flush_forgets_the_fragments_it_did_not_wait_for() -> None:
    clock, flushed, buffer = armed()

    buffer.hold()
    buffer.hold()
    buffer.add("help")
    buffer.flush_now()  # an emergency phrase: at once; the other comes unbuffered
    buffer.arm()  # the answer changed state again
    buffer.hold()
    buffer.add("and the lamp")
    clock.advance(1.5)

    assert flushed == ["help", "and the lamp"]


def test_the_policy_comes_from_the_options_and_is_checked() -> None:
    policy = debounce_from_options(
        {
            "follow_up_quiet_s": 1.0,
            "follow_up_max_s": 4.0,
            "follow_up_emergency_phrases": [" help ", "call"],
            "unrelated": True,
        }
    )

    assert policy == DebouncePolicy(1.0, 4.0, ("help", "call"))
    assert debounce_from_options({}) == DebouncePolicy()
    with pytest.raises(DebounceConfigError) as timing:
        debounce_from_options({"follow_up_max_s": 0.5})
    with pytest.raises(FollowUpConfigError) as phrases:
        debounce_from_options({"follow_up_emergency_phrases": ["help", "Help!"]})
    assert (timing.value.code, phrases.value.code) == ("max_s", "emergency_phrases")


def test_dropping_forgets_the_fragments_and_their_timers() -> None:
    clock, flushed, buffer = armed()
    buffer.add("one")
    buffer.add("two")

    dropped = buffer.drop()
    clock.advance(10.0)

    assert dropped == ("one", "two")
    assert (flushed, buffer.armed, buffer.buffering) == ([], False, False)
    assert clock.pending == 0
