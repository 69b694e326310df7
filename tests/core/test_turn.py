"""One request's decisions, without Home Assistant: reply, listen window, wake phrase."""

from __future__ import annotations

from wyoming.info import Attribution, WakeModel, WakeProgram

from custom_components.voicestack.core.conversation.turn import (
    FOLLOW_UP_TIMEOUT_S,
    MODE_LISTEN_TIMEOUT_S,
    ListenWindow,
    Reply,
    Turn,
    reply_for,
    wake_phrase,
)
from custom_components.voicestack.core.router.route import Route
from devstack.manual_clock import ManualClock

AGENT = Route(frame="base", rule="agent", agent_text="what time is it")


def test_the_router_speaks_first_then_the_agent() -> None:
    route = Route(frame="base", rule="agent", agent_text="x", speak="Sure.")

    assert reply_for(route, answer="It is noon.") == Reply("Sure. It is noon.", None)
    assert reply_for(route) == Reply("Sure.", None)
    assert reply_for(AGENT) == Reply("", None)


def test_the_follow_up_loops_window_comes_after_the_answer() -> None:
    reply = reply_for(AGENT, answer="Which room?", follow_up_s=FOLLOW_UP_TIMEOUT_S)

    assert reply == Reply("Which room?", FOLLOW_UP_TIMEOUT_S)


def test_the_closing_comes_last_unless_a_mode_listens_on() -> None:
    closing = "Say the wake word to go on."
    dictating = Route(frame="dictation", rule="append", agent_text=None, listen=True)

    assert reply_for(AGENT, answer="Which room?", closing=closing).speech == (
        "Which room? Say the wake word to go on."
    )
    assert reply_for(dictating, closing=closing).speech == ""


def test_a_mode_waiting_for_speech_opens_the_longer_window() -> None:
    dictating = Route(frame="dictation", rule="append", agent_text=None, listen=True)

    assert reply_for(dictating).listen_s == MODE_LISTEN_TIMEOUT_S
    # An always-listening satellite hears everything anyway: no window.
    assert reply_for(dictating, always_listening=True).listen_s is None
    # The follow-up loop's window wins over the mode's.
    asked = reply_for(dictating, follow_up_s=5.0, always_listening=True)
    assert asked.listen_s == 5.0


def test_a_window_opens_and_a_stale_one_is_closed_once() -> None:
    clock = ManualClock()
    window = ListenWindow(clock)

    assert window.request(None) is None  # none open: nothing to send
    assert window.request(15.0) == 15.0
    clock.advance(5.0)
    assert window.request(None) == 0.0  # still open: close it
    assert window.request(None) is None  # closed already


def test_a_window_that_ran_out_or_started_a_request_needs_no_closing() -> None:
    clock = ManualClock()
    window = ListenWindow(clock)

    window.request(8.0)
    clock.advance(8.0)
    assert window.request(None) is None
    window.request(8.0)
    window.used()  # the user spoke into it: a request started
    assert window.request(None) is None


def test_the_wake_phrase_comes_from_the_satellites_info() -> None:
    attribution = Attribution(name="", url="")
    programs = [
        WakeProgram(
            name="openwakeword",
            attribution=attribution,
            installed=True,
            description=None,
            version=None,
            models=[
                WakeModel(
                    name="hey_jarvis",
                    phrase="Hey Jarvis",
                    attribution=attribution,
                    installed=True,
                    description=None,
                    version=None,
                    languages=["en"],
                ),
                WakeModel(
                    name="okay_nabu",
                    phrase=None,
                    attribution=attribution,
                    installed=True,
                    description=None,
                    version=None,
                    languages=["en"],
                ),
            ],
        )
    ]

    assert wake_phrase(programs, "hey_jarvis") == "Hey Jarvis"
    assert wake_phrase(programs, "okay_nabu") == "okay_nabu"
    assert wake_phrase(programs, "unknown") == "unknown"
    assert wake_phrase(programs, None) is None


async def test_a_turn_keeps_its_wake_word_transcript_and_bounded_audio() -> None:
    clock = ManualClock()
    limits: list[str] = []
    turn = Turn(clock, limits.append, wake_word=None, woken=False)

    turn.audio.put(b"\x00\x00" * 160)
    clock.advance(60.0)  # no deadline before the wake word was confirmed
    turn.woken("hey_jarvis")  # HA's wake word engine heard it: STT starts
    clock.advance(turn.audio.max_s)
    chunks = [chunk async for chunk in turn.audio.chunks()]
    turn.heard("turn on the light")
    turn.end()
    turn.audio.put(b"\x00\x00" * 160)  # late audio: nobody reads it

    assert turn.wake_word == "hey_jarvis"
    assert turn.transcript == "turn on the light"
    assert len(limits) == 1  # the request's time ran out once STT had started
    assert chunks == [b"\x00\x00" * 160]  # what came before the limit is heard
    assert turn.audio.dropped_bytes == 320
    assert turn.timings() == {
        "speech_to_text_s": 60.0 + turn.audio.max_s,
        "answer_s": 0.0,
        "total_s": 60.0 + turn.audio.max_s,
    }
