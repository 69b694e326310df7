"""Scripted dialogs with the built-in frames, at text level, on a manual clock.

Each test is a conversation: what is said, which frame and rule took it, what the
stack looks like afterwards, what is spoken and what goes to the agent.
"""

from __future__ import annotations

import asyncio

import pytest

from custom_components.voicestack.core.router import (
    AgentTarget,
    ConfirmPolicy,
    ExactRule,
    Outcome,
    Settings,
    TodoTarget,
    Vocabulary,
    Voice,
    normalize,
)
from custom_components.voicestack.core.router.hooks import ListenMode
from custom_components.voicestack.core.router.route import Utterance

from .harness import Dialog, Glue, RecordingTarget, check

# -- base frame, wake-word mode ---------------------------------------------------------


async def test_wake_word_mode_sends_requests_to_the_agent() -> None:
    dialog = Dialog()

    decision = await dialog.says(
        "Turn on the kitchen light.",
        at="base/agent",
        stack="base",
        agent="Turn on the kitchen light.",
        speak=None,
    )

    assert decision.reason == "catch-all (real words); submitted to agent"
    assert not decision.route().listen
    assert dialog.agent.texts == ["Turn on the kitchen light."]


@pytest.mark.parametrize("text", ["", "[BLANK_AUDIO]", "(noise)", "uh", "um"])
async def test_noise_goes_nowhere(text: str) -> None:
    dialog = Dialog()

    decision = await dialog.says(text, at="base/none", agent=None)

    assert decision.route().rule == "ignored"
    assert dialog.agent.submissions == []


async def test_mode_query_speaks_the_mode() -> None:
    dialog = Dialog()

    await dialog.says(
        "What mode?", at="base/what_mode", speak="Wake word mode.", agent=None
    )


async def test_mode_switches_tell_the_satellite() -> None:
    dialog = Dialog()

    await dialog.says(
        "Always listening", at="base/always_listening", speak="Always listening mode."
    )
    # From now on a command counts only after a wake phrase (the TV may say one).
    await dialog.says("what mode", at="base/none", speak=None)
    await dialog.says(
        "okay nabu, always listen",
        at="base/wake",
        speak="Always listening mode already.",
    )
    await dialog.says("cancel", at="query/cancel", stack="base")
    await dialog.says(
        "hey jarvis wake word mode", at="base/wake", speak="Wake word mode."
    )

    assert dialog.glue.listen_modes == [
        ListenMode.ALWAYS_LISTENING,
        ListenMode.WAKE_WORD,
    ]
    assert dialog.router.listen_mode is ListenMode.WAKE_WORD


async def test_a_failed_mode_switch_keeps_the_mode() -> None:
    glue = Glue()

    async def refuse(mode: ListenMode) -> None:
        raise ConnectionError("satellite gone")

    glue.set_listen_mode = refuse  # type: ignore[method-assign]
    dialog = Dialog(glue=glue)

    await dialog.says("always listen", speak="Could not switch the mode.")

    assert dialog.router.listen_mode is ListenMode.WAKE_WORD


async def test_shortcuts_run_at_once_without_the_agent() -> None:
    vocabulary = Vocabulary(
        shortcuts="movie time = script.movie\nre:lights? off = script.off"
    )
    dialog = Dialog(Settings(vocabulary=vocabulary))

    await dialog.says("Movie time!", at="base/shortcut", speak="Done.", agent=None)
    await dialog.says("Light off.", at="base/shortcut", agent=None)

    assert dialog.glue.shortcuts_run == ["script.movie", "script.off"]
    assert dialog.agent.submissions == []
    assert dialog.router.frames.last is not None
    assert dialog.router.frames.last.reason == "pattern 'lights? off'; ran script.off"


async def test_a_failing_shortcut_says_so() -> None:
    glue = Glue()

    async def broken(action_id: str) -> str | None:
        raise RuntimeError("script missing")

    glue.run_shortcut = broken  # type: ignore[method-assign]
    dialog = Dialog(
        Settings(vocabulary=Vocabulary(shortcuts={"movie time": "script.movie"})),
        glue=glue,
    )

    await dialog.says("movie time", speak="That shortcut did not work.", agent=None)


async def test_extra_rules_come_before_the_agent() -> None:
    rule = ExactRule("weather", ["weather"], lambda hit: Outcome(speak="Sunny."))
    dialog = Dialog(extra_rules=[rule])

    await dialog.says("Weather?", at="base/weather", speak="Sunny.", agent=None)


# -- base frame, always-listening mode ------------------------------------------------------


async def test_always_listening_ignores_speech_without_a_wake_phrase() -> None:
    dialog = Dialog()
    await dialog.always_listening()

    decision = await dialog.says("did anyone feed the cat", at="base/none", agent=None)

    assert decision.reason == "no rule of base (the bottom frame) matched"
    assert dialog.agent.submissions == []


async def test_a_wake_phrase_opens_a_query_and_the_rest_goes_into_it() -> None:
    dialog = Dialog()
    await dialog.always_listening()

    opened = await dialog.says(
        "Okay Nabu", at="base/wake", stack="base > query", speak=None
    )
    assert opened.route().listen
    await dialog.says("cancel", at="query/cancel", stack="base")

    await dialog.says(
        "so, hey Jarvis, turn on the porch light", at="base/wake", stack="base > query"
    )
    await dialog.says("and the hallway", at="query/append")
    await dialog.says(
        "go",
        at="query/submit",
        stack="base",
        agent="turn on the porch light and the hallway",
    )


async def test_a_wake_phrase_with_a_command_runs_the_command() -> None:
    dialog = Dialog()
    await dialog.always_listening()

    await dialog.says(
        "okay nabu, what mode", at="base/wake", speak="Always listening mode, in query."
    )
    await dialog.says(
        "okay nabu start dictation", at="base/wake", stack="base > dictation"
    )


async def test_extra_rules_need_a_wake_phrase_when_always_listening() -> None:
    """The TV saying "weather" is no request; "okay nabu, weather" is."""
    rule = ExactRule("weather", ["weather"], lambda hit: Outcome(speak="Sunny."))
    dialog = Dialog(extra_rules=[rule])
    await dialog.says("Weather?", at="base/weather", speak="Sunny.")  # wake word mode
    await dialog.always_listening()

    await dialog.says("Weather?", at="base/none", speak=None, agent=None)
    await dialog.says("okay nabu, weather", at="base/wake", speak="Sunny.")


async def test_the_satellites_wake_word_opens_a_query_when_always_listening() -> None:
    dialog = Dialog()
    await dialog.always_listening()

    route = await dialog.router(
        Utterance("turn on the porch light", "sat", wake_word="hey_jarvis")
    )

    assert (route.frame, route.rule, route.listen) == ("base", "wake_word", True)
    assert dialog.stack == "base > query"
    await dialog.says("go", at="query/submit", agent="turn on the porch light")


async def test_the_satellites_wake_word_goes_to_the_open_frame() -> None:
    dialog = Dialog()
    await dialog.always_listening()
    await dialog.says("okay nabu start dictation", stack="base > dictation")

    route = await dialog.router(Utterance("cancel", "sat", wake_word="hey_jarvis"))

    assert (route.frame, route.rule) == ("dictation", "append")
    assert dialog.stack == "base > dictation"


# -- query frame ------------------------------------------------------------------------------


async def _open_query(dialog: Dialog) -> None:
    await dialog.always_listening()
    await dialog.says("okay nabu", stack="base > query")


async def test_query_cancel_pops_and_sends_nothing() -> None:
    dialog = Dialog()
    await _open_query(dialog)
    await dialog.says("buy milk", at="query/append")

    decision = await dialog.says(
        "Abort!", at="query/cancel", stack="base", speak="Cancelled.", agent=None
    )

    assert "1 item(s) discarded, nothing sent" in decision.reason
    assert dialog.agent.submissions == []


@pytest.mark.parametrize("word", ["go", "Done.", "send", "send it"])
async def test_query_submit_words_send_what_was_gathered(word: str) -> None:
    dialog = Dialog()
    await _open_query(dialog)
    await dialog.says("what is the weather", at="query/append")
    await dialog.says("in Paris tomorrow", at="query/append")

    await dialog.says(
        word,
        at="query/submit",
        stack="base",
        agent="what is the weather in Paris tomorrow",
    )

    assert dialog.agent.submissions[0].items == (
        "what is the weather",
        "in Paris tomorrow",
    )


async def test_query_read_back_speaks_what_was_gathered() -> None:
    dialog = Dialog()
    await _open_query(dialog)

    await dialog.says("read back", at="query/read_back", speak="Nothing yet.")
    await dialog.says("Call mum at six.", at="query/append")
    await dialog.says(
        "Read it back",
        at="query/read_back",
        speak="Call mum at six.",
        stack="base > query",
    )


async def test_query_check_parent_lets_the_base_take_mode_words() -> None:
    dialog = Dialog()
    await _open_query(dialog)
    await dialog.says("remind me to water the plants", at="query/append")

    await dialog.says("what mode", at="base/what_mode", stack="base > query")
    await dialog.says("wake word mode", at="base/wake_word_mode", stack="base > query")
    await dialog.says(
        "tomorrow", at="query/append"
    )  # the base's agent rule is top-only
    await dialog.says("go", agent="remind me to water the plants tomorrow")


async def test_query_submits_on_silence_exactly() -> None:
    dialog = Dialog()
    await _open_query(dialog)
    await dialog.says("turn off the lights", at="query/append")

    assert await dialog.silence(2.999) == []
    emitted = await dialog.silence(0.001)

    assert [(r.frame, r.rule, r.agent_text) for r in emitted] == [
        ("query", "silence", "turn off the lights")
    ]
    assert emitted[0].reason == "silence for 3 s; 1 item(s), submitted to agent"
    assert dialog.stack == "base"


async def test_each_addition_restarts_the_silence_timer() -> None:
    dialog = Dialog()
    await _open_query(dialog)
    await dialog.says("one", at="query/append")
    await dialog.silence(2.0)
    await dialog.says("two", at="query/append")

    assert await dialog.silence(2.9) == []
    assert [r.agent_text for r in await dialog.silence(0.1)] == ["one two"]


async def test_speech_coming_in_holds_the_silence_timer() -> None:
    dialog = Dialog()
    await _open_query(dialog)
    await dialog.says("turn off the lights", at="query/append")
    await dialog.silence(2.0)

    dialog.router.hold_timer()  # the satellite streams the next sentence
    assert await dialog.silence(10.0) == []
    await dialog.says("in the attic", at="query/append")
    dialog.router.resume_timer()  # already running again: not restarted

    assert await dialog.silence(2.999) == []
    assert [r.agent_text for r in await dialog.silence(0.001)] == [
        "turn off the lights in the attic"
    ]


async def test_a_request_without_words_resumes_the_silence_timer() -> None:
    dialog = Dialog()
    await _open_query(dialog)
    await dialog.says("turn off the lights", at="query/append")
    dialog.router.hold_timer()
    await dialog.says("[BLANK_AUDIO]", at="query/none")
    dialog.router.resume_timer()

    assert await dialog.silence(2.999) == []
    assert [r.agent_text for r in await dialog.silence(0.001)] == [
        "turn off the lights"
    ]


async def test_an_empty_query_closes_quietly_on_silence() -> None:
    dialog = Dialog()
    await _open_query(dialog)

    emitted = await dialog.silence(3.0)

    assert [(r.rule, r.agent_text, r.speak) for r in emitted] == [
        ("silence", None, None)
    ]
    assert dialog.stack == "base"


async def test_submit_on_silence_can_be_switched_off() -> None:
    dialog = Dialog(Settings(query_silence_s=None))
    await _open_query(dialog)
    await dialog.says("note this", at="query/append")

    assert await dialog.silence(3600) == []
    assert dialog.stack == "base > query"
    assert dialog.clock.pending == 0


async def test_a_wake_phrase_alone_is_replaced_by_the_frame_it_starts() -> None:
    dialog = Dialog()
    await _open_query(dialog)

    await dialog.says(
        "start dictation", at="base/start_dictation", stack="base > dictation"
    )


# -- raw dictation ----------------------------------------------------------------------------


async def test_dictation_keeps_everything_verbatim_until_the_exit_phrase() -> None:
    dialog = Dialog()
    await dialog.says(
        "Start dictation.",
        at="base/start_dictation",
        stack="base > dictation",
        speak="Dictation started.",
    )
    content = [
        "Cancel.",
        "zero zero zero",
        "zero zero zero",
        "go",
        "What mode?",
        "Okay Nabu, switch voice.",
        "[BLANK_AUDIO]",
        "The code is 000, not cancel!",
    ]
    for text in content:
        decision = await dialog.says(text, stack="base > dictation", agent=None)
        assert decision.route().listen

    await dialog.says(
        "End dictation.", at="dictation/exit", stack="base", speak="Saved dictation."
    )

    (submission,) = dialog.targets["dictation"].submissions
    assert submission.items == tuple(
        text for text in content if text != "[BLANK_AUDIO]"
    )
    assert submission.text.startswith(
        "Cancel. zero zero zero zero zero zero go What mode?"
    )
    assert dialog.agent.submissions == []


async def test_dictation_has_no_silence_timer() -> None:
    dialog = Dialog()
    await dialog.says("start dictation")
    await dialog.says("first thought")

    assert await dialog.silence(24 * 3600) == []
    assert dialog.stack == "base > dictation"


async def test_dictation_exit_at_the_end_of_an_utterance_keeps_the_words_before() -> (
    None
):
    dialog = Dialog()
    await dialog.says("start dictation, Dear Anna,", stack="base > dictation")

    await dialog.says("see you soon. End dictation!", at="dictation/exit", stack="base")

    assert dialog.targets["dictation"].submissions[0].items == (
        "Dear Anna,",
        "see you soon.",
    )


async def test_a_wake_phrase_before_the_exit_is_not_dictated() -> None:
    """Always listening, "Okay Nabu, end dictation." saves the notes, not the name."""
    dialog = Dialog()
    await dialog.always_listening()
    await dialog.says("okay nabu start dictation", stack="base > dictation")
    await dialog.says("Buy milk.", stack="base > dictation")

    await dialog.says("Okay Nabu, end dictation.", at="dictation/exit", stack="base")

    assert dialog.targets["dictation"].submissions[0].items == ("Buy milk.",)


async def test_dictation_abort_phrase_discards() -> None:
    dialog = Dialog()
    await dialog.says("start dictation")
    await dialog.says("secret")

    await dialog.says(
        "abort dictation", at="dictation/abort", stack="base", speak="Cancelled."
    )

    assert dialog.targets["dictation"].submissions == []


async def test_dictation_leaves_on_an_explicit_abort_request() -> None:
    dialog = Dialog()
    await dialog.says("start dictation")
    await dialog.says("half a thought")

    decision = await dialog.router.abort()

    assert (decision.frame, decision.rule) == ("api", "abort")
    assert decision.reason == "closed dictation; nothing sent"
    assert dialog.stack == "base"
    assert dialog.targets["dictation"].submissions == []


async def test_a_failing_target_keeps_the_dictation() -> None:
    dialog = Dialog()
    target = dialog.targets["dictation"]
    await dialog.says("start dictation")
    await dialog.says("precious words")
    target.fail = OSError("disk full")

    failed = await dialog.says(
        "end dictation",
        stack="base > dictation",
        speak="Could not deliver to dictation; nothing was lost.",
    )
    assert "dictation failed (disk full); 1 item(s) kept" in failed.reason
    target.fail = None
    await dialog.says("end dictation", stack="base")

    assert target.texts == ["precious words"]


# -- inventory ------------------------------------------------------------------------------------


async def test_inventory_gathers_items_and_saves_each_to_the_target() -> None:
    dialog = Dialog()
    await dialog.says(
        "Start inventory",
        at="base/start_inventory",
        speak="Inventory. Say save when you are done.",
    )
    for item in ("three boxes of M4 screws", "one drill", "cancel", "a ladder"):
        await dialog.says(item, at="inventory/append", stack="base > inventory")
    await dialog.says("scratch that", at="inventory/undo", speak="Removed a ladder.")
    await dialog.says(
        "read back", speak="3 items: three boxes of M4 screws, one drill, cancel."
    )

    await dialog.says(
        "Save.", at="inventory/save", stack="base", speak="Saved inventory."
    )

    (submission,) = dialog.targets["inventory"].submissions
    assert submission.as_list
    assert submission.lines() == ("three boxes of M4 screws", "one drill", "cancel")


async def test_inventory_has_a_long_silence_timer() -> None:
    dialog = Dialog()
    await dialog.says("start inventory")
    await dialog.says("shelf A: paint")

    assert await dialog.silence(119.9) == []
    emitted = await dialog.silence(0.1)

    assert [(r.frame, r.rule, r.speak) for r in emitted] == [
        ("inventory", "silence", "Saved inventory.")
    ]
    assert dialog.targets["inventory"].texts == ["shelf A: paint"]


async def test_inventory_to_a_todo_list_adds_one_item_each_and_keeps_the_rest_on_failure() -> (
    None
):
    added: list[str] = []

    async def add_item(text: str) -> None:
        if text == "fails" and "fails" not in added:
            added.append("fails")  # the next attempt works
            raise ConnectionError("todo list unavailable")
        added.append(text)

    dialog = Dialog(targets={"inventory": TodoTarget(add_item)})
    await dialog.says("start inventory")
    for item in ("milk", "fails", "eggs"):
        await dialog.says(item)

    failed = await dialog.says("save", stack="base > inventory")
    assert "2 item(s) kept" in failed.reason
    await dialog.says("save", stack="base", speak="Added 2 items to the list.")

    assert added == ["milk", "fails", "fails", "eggs"]


# -- voice picker -------------------------------------------------------------------------------------

VOICES = (
    Voice("en_US-lessac-medium", "Lessac (medium)"),
    Voice("en_US-lessac-high", "Lessac (high)"),
    Voice("en_GB-alba-medium", "Alba"),
    Voice("en_US-amy-low", "Amy"),
)


async def test_voice_picker_sets_the_named_voice_and_confirms() -> None:
    dialog = Dialog(glue=Glue(voices=VOICES))

    opened = await dialog.says(
        "Switch voice",
        at="base/switch_voice",
        stack="base > voice_picker",
        speak="Which voice? Lessac (medium), Lessac (high), Alba or Amy. Or say cancel.",
    )
    assert opened.route().listen
    await dialog.says(
        "something else",
        at="voice_picker/reprompt",
        speak="Say a voice name, or cancel.",
    )
    await dialog.says(
        "Use Alba, please.",
        at="voice_picker/voice",
        stack="base",
        speak="This is Alba.",
    )

    assert dialog.glue.voices_set == [VOICES[2]]


async def test_voice_picker_full_names_and_shared_first_words() -> None:
    dialog = Dialog(glue=Glue(voices=VOICES))
    await dialog.says("change voice")

    await dialog.says(
        "lessac high", at="voice_picker/voice", speak="This is Lessac (high)."
    )
    await dialog.says("change voice")
    await dialog.says(
        "lessac", at="voice_picker/voice"
    )  # shared first word: the first voice

    assert dialog.glue.voices_set == [VOICES[1], VOICES[0]]


async def test_voice_picker_cancel_and_timeout_keep_the_voice() -> None:
    dialog = Dialog(glue=Glue(voices=VOICES))
    await dialog.says("switch voice")
    await dialog.says(
        "cancel", at="voice_picker/cancel", stack="base", speak="Keeping this voice."
    )
    await dialog.says("switch voice")

    emitted = await dialog.silence(30.0)

    assert [(r.frame, r.rule) for r in emitted] == [("voice_picker", "timeout")]
    assert dialog.stack == "base"
    assert dialog.glue.voices_set == []


async def test_voice_picker_without_voices() -> None:
    dialog = Dialog()

    await dialog.says(
        "switch voice", stack="base", speak="No other voices are available."
    )


# -- confirm ---------------------------------------------------------------------------------------------


def guarded_dialog(touches: dict[str, list[str]], **kwargs: object) -> Dialog:
    """The real agent target; ``touches`` says what each request would act on."""

    async def resolve(text: str) -> list[str]:
        if text == "explode":
            raise RuntimeError("recognizer broken")
        return touches.get(normalize(text), [])

    return Dialog(agent=AgentTarget(resolve, ConfirmPolicy()), **kwargs)  # type: ignore[arg-type]


async def test_a_sensitive_request_waits_for_yes() -> None:
    dialog = guarded_dialog({"unlock the front door": ["lock.front_door"]})

    asked = await dialog.says(
        "Unlock the front door.",
        at="base/agent",
        stack="base > confirm",
        speak="Should I unlock the front door? Say yes or no.",
        agent=None,
    )
    assert asked.route().listen
    await dialog.says(
        "turn on the light",
        at="confirm/reprompt",
        speak="Please say yes or no.",
        agent=None,
    )
    await dialog.says("[BLANK_AUDIO]", at="confirm/none", agent=None)

    await dialog.says(
        "Yes.", at="confirm/yes", stack="base", agent="Unlock the front door."
    )


async def test_the_agent_reads_answers_that_are_not_word_for_word() -> None:
    glue = Glue(readings={"sure, go ahead": "yes", "absolutely not": "No."})
    touches = {"unlock the front door": ["lock.front_door"]}
    dialog = guarded_dialog(touches, glue=glue)

    await dialog.says("unlock the front door", stack="base > confirm")
    declined = await dialog.says(
        "absolutely not", at="confirm/understood", stack="base", agent=None
    )
    await dialog.says("unlock the front door", stack="base > confirm")
    await dialog.says(
        "sure, go ahead",
        at="confirm/understood",
        stack="base",
        agent="unlock the front door",
    )

    assert "'no'" in declined.reason
    assert glue.prompts[0].startswith(
        "Someone was asked a yes-or-no question and answered: absolutely not"
    )
    assert "yes, no, unclear" in glue.prompts[0]


async def test_an_unclear_or_slow_reading_never_confirms() -> None:
    glue = Glue(readings={"maybe later": "unclear"})
    dialog = guarded_dialog({"open the garage": ["cover.garage_door"]}, glue=glue)
    await dialog.says("open the garage", stack="base > confirm")

    await dialog.says(
        "maybe later", at="confirm/reprompt", speak="Please say yes or no."
    )
    await dialog.says("whatever you think", at="confirm/reprompt")
    stalled = asyncio.create_task(dialog.router.dispatch("stall"))
    await asyncio.sleep(0)
    dialog.clock.advance(4.0)
    decision = await stalled

    assert (decision.frame, decision.rule, decision.agent_text) == (
        "confirm",
        "reprompt",
        None,
    )
    assert dialog.stack == "base > confirm"


async def test_no_discards_the_sensitive_request() -> None:
    dialog = guarded_dialog({"open the garage": ["cover.garage_door"]})
    await dialog.says("open the garage", stack="base > confirm")

    await dialog.says(
        "No", at="confirm/no", stack="base", speak="Cancelled.", agent=None
    )
    await dialog.says("open the garage", stack="base > confirm")
    await dialog.says("never mind", at="confirm/cancel", stack="base", agent=None)


async def test_an_unanswered_confirmation_expires() -> None:
    dialog = guarded_dialog({"disarm the alarm": ["alarm_control_panel.home"]})
    await dialog.says("disarm the alarm", stack="base > confirm")

    assert await dialog.silence(19.9) == []
    emitted = await dialog.silence(0.1)

    assert [(r.frame, r.rule, r.speak, r.agent_text) for r in emitted] == [
        ("confirm", "timeout", "Never mind then.", None)
    ]


async def test_a_confirmation_covered_by_another_mode_still_expires() -> None:
    """600 s under a dictation, then a bare "yes" must not unlock the door."""
    dialog = guarded_dialog({"unlock the front door": ["lock.front_door"]})
    await dialog.says("unlock the front door", stack="base > confirm")
    await dialog.router.select_mode("dictation")
    await dialog.says("Buy milk.", at="dictation/append")

    assert await dialog.silence(600.0) == []  # covered: no timer decision
    await dialog.says("End dictation.", at="dictation/exit", stack="base > confirm")
    expired = await dialog.silence(0.0)
    await dialog.says("Yes.", at="base/agent", agent="Yes.")

    assert [(r.frame, r.rule, r.speak) for r in expired] == [
        ("confirm", "timeout", "Never mind then.")
    ]
    assert dialog.stack == "base"


async def test_harmless_requests_are_not_asked_about() -> None:
    dialog = guarded_dialog({"open the blinds": ["cover.living_room_blinds"]})

    await dialog.says("open the blinds", stack="base", agent="open the blinds")


async def test_a_broken_check_asks_rather_than_acts() -> None:
    dialog = guarded_dialog({})

    await dialog.says("explode", stack="base > confirm", agent=None)


async def test_a_sensitive_query_is_asked_about_after_it_closes() -> None:
    dialog = guarded_dialog({"unlock the back door": ["lock.back_door"]})
    await _open_query(dialog)
    await dialog.says("unlock the back door")

    await dialog.says("go", at="query/submit", stack="base > confirm", agent=None)
    await dialog.says(
        "yep", at="confirm/yes", stack="base", agent="unlock the back door"
    )


async def test_confirmation_can_be_switched_off() -> None:
    dialog = Dialog(
        agent=AgentTarget(lambda text: _lock(), ConfirmPolicy(enabled=False))
    )

    await dialog.says(
        "unlock the front door", stack="base", agent="unlock the front door"
    )


async def _lock() -> list[str]:
    return ["lock.front_door"]


async def test_ask_pushes_a_confirmation_for_any_action() -> None:
    dialog = Dialog()
    ran: list[str] = []

    def reboot() -> Outcome:
        ran.append("reboot")
        return Outcome(speak="Rebooting.")

    asked = await dialog.router.ask("Reboot the server?", reboot)
    check(asked, at="api/ask", stack="base > confirm", speak="Reboot the server?")
    await dialog.says("do it", at="confirm/yes", speak="Rebooting.")

    assert ran == ["reboot"]


# -- requests from Home Assistant: mode select, actions, state --------------------------------------------


async def test_mode_select_pushes_and_pops_frames() -> None:
    dialog = Dialog()
    assert dialog.router.mode == "wake_word"

    check(
        await dialog.router.select_mode("query"),
        at="api/select query",
        stack="base > query",
    )
    await dialog.says("buy milk", at="query/append")
    check(
        await dialog.router.select_mode("dictation"),
        stack="base > query > dictation",
        speak="Dictation started.",
    )
    assert dialog.router.mode == "dictation"
    check(await dialog.router.select_mode("query"), stack="base > query")
    check(
        await dialog.router.select_mode("always_listening"),
        stack="base",
        speak="Always listening mode.",
    )
    assert dialog.router.mode == "always_listening"
    assert dialog.glue.listen_modes == [ListenMode.ALWAYS_LISTENING]

    with pytest.raises(ValueError, match="confirm opens by itself"):
        await dialog.router.select_mode("confirm")
    with pytest.raises(ValueError, match="unknown mode"):
        await dialog.router.select_mode("party")


@pytest.mark.parametrize("below", ["dictation", "inventory"])
async def test_a_query_selected_over_a_gathering_frame_collects_the_words(
    below: str,
) -> None:
    """docs/modes.md: a mode chosen in the select opens on top and gets the speech."""
    dialog = Dialog()
    await dialog.router.select_mode(below)
    check(await dialog.router.select_mode("query"), stack=f"base > {below} > query")

    await dialog.says("what is the weather", at="query/append")
    await dialog.says("go", at="query/submit", agent="what is the weather")

    assert dialog.stack == f"base > {below}"
    assert dialog.targets[below].submissions == []


async def test_start_with_a_target_and_submit_request() -> None:
    dialog = Dialog()
    queue = RecordingTarget("queue", speak="Queued.")

    await dialog.router.start("dictation", target=queue)
    await dialog.says("call the plumber")
    check(await dialog.router.submit(), at="api/submit", stack="base", speak="Queued.")

    assert queue.texts == ["call the plumber"]
    check(await dialog.router.submit(), stack="base")  # nothing to submit: harmless
    with pytest.raises(ValueError, match="cannot start"):
        await dialog.router.start("confirm")


async def test_state_for_entities_and_listeners() -> None:
    dialog = Dialog()
    changes: list[str] = []
    dialog.router.add_listener(lambda: changes.append(dialog.router.mode))

    await dialog.says("start dictation")
    await dialog.says("twelve chars")
    state = dialog.router.state()

    assert state.mode == "dictation"
    assert state.listen_mode is ListenMode.WAKE_WORD
    assert state.stack == ("base", "dictation")
    assert state.gathered_chars == len("twelve chars")
    assert changes == ["dictation", "dictation"]


async def test_set_listen_mode_request_keeps_the_frames() -> None:
    dialog = Dialog()
    await dialog.says("start dictation")

    await dialog.router.set_listen_mode(ListenMode.ALWAYS_LISTENING)

    assert dialog.stack == "base > dictation"
    assert dialog.router.listen_mode is ListenMode.ALWAYS_LISTENING


async def test_close_ends_everything_without_submitting() -> None:
    dialog = Dialog()
    await dialog.says("start inventory")
    await dialog.says("one item")

    await dialog.router.close()

    assert dialog.targets["inventory"].submissions == []
    assert dialog.clock.pending == 0


async def test_the_voice_router_is_a_routing_hook() -> None:
    from custom_components.voicestack.core.router.route import Utterance

    dialog = Dialog()

    route = await dialog.router(
        Utterance("start dictation", "sat-1", wake_word="okay_nabu")
    )

    assert (route.frame, route.rule, route.speak, route.listen) == (
        "base",
        "start_dictation",
        "Dictation started.",
        True,
    )


async def test_starting_an_open_frame_brings_it_up_instead_of_stacking() -> None:
    dialog = Dialog()
    await dialog.router.start("dictation")
    await dialog.says("first words", at="dictation/append")
    await dialog.router.start("inventory")

    decision = await dialog.router.start("dictation")

    assert decision.stack == ("base", "dictation")
    assert decision.reason == "dictation already open, now on top"
    assert dialog.router.state().gathered_chars == len("first words")
