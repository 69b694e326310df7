"""The dispatcher and every rule type, with plain frames (no built-ins).

Checks the stack semantics (handle → stop, no match → next rule, CHECK_PARENT →
the frame below and back, exclusive frames), the explanation of each decision,
timers on the manual clock, and the LLM classifier's timeout and fallback.
"""

from __future__ import annotations

import asyncio
import logging
import re

import pytest

from custom_components.voicestack.core.router import (
    CHECK_PARENT,
    CatchAllRule,
    ClassifierRule,
    ExactRule,
    Frame,
    FrameStack,
    Hit,
    Outcome,
    PhraseRule,
    Plan,
    RegexRule,
)
from custom_components.voicestack.core.router.route import Route, Utterance
from custom_components.voicestack.core.router.rules import (
    ClassifierUnavailableError,
    phrase_rules,
)
from devstack.manual_clock import ManualClock


def says(text: str):
    """An action that speaks ``text`` and records the payload."""

    def action(hit: Hit) -> Outcome:
        said.append((text, hit.payload))
        return Outcome(speak=text)

    return action


said: list[tuple[str, object]] = []


@pytest.fixture(autouse=True)
def _clear_said() -> None:
    said.clear()


def make_router(*frames: Frame, emit=None) -> tuple[FrameStack, ManualClock]:
    """Base = the first frame; the others pushed in order."""
    clock = ManualClock()
    router = FrameStack(frames[0], clock=clock, emit=emit, name="t")
    for frame in frames[1:]:
        router.push(frame)
    return router, clock


async def spin() -> None:
    """Let started tasks run up to their next real wait."""
    for _ in range(10):
        await asyncio.sleep(0)


# -- stack semantics ----------------------------------------------------------------


async def test_first_matching_rule_handles_and_dispatch_stops() -> None:
    base = Frame("base", [ExactRule("low", ["hello"], says("base"))])
    top = Frame(
        "top",
        [
            ExactRule("greet", ["hello"], says("first")),
            CatchAllRule("rest", says("second")),
            CHECK_PARENT,
        ],
    )
    router, _ = make_router(base, top)

    decision = await router.dispatch("Hello!")

    assert (decision.frame, decision.rule, decision.speak) == ("top", "greet", "first")
    assert said == [("first", "hello")]
    assert decision.steps == (("top", "handled by greet"),)


async def test_no_match_tries_the_next_rule() -> None:
    top = Frame(
        "top", [ExactRule("a", ["alpha"], says("a")), CatchAllRule("b", says("b"))]
    )
    router, _ = make_router(Frame("base", []), top)

    decision = await router.dispatch("beta")

    assert decision.rule == "b"
    assert said == [("b", "beta")]


async def test_a_frame_without_check_parent_is_exclusive() -> None:
    base = Frame("base", [CatchAllRule("anything", says("base"))])
    top = Frame("top", [ExactRule("yes", ["yes"], says("yes"))])
    router, _ = make_router(base, top)

    decision = await router.dispatch("turn on the light")

    assert top.exclusive
    assert not decision.handled
    assert (decision.frame, decision.rule) == ("top", "none")
    assert decision.reason == "no rule matched; top is exclusive"
    assert said == []
    assert decision.route().rule == "ignored"
    assert decision.route().agent_text is None


async def test_check_parent_hands_down_and_the_parent_handles() -> None:
    base = Frame("base", [ExactRule("mode", ["what mode"], says("mode"))])
    top = Frame("top", [ExactRule("go", ["go"], says("go")), CHECK_PARENT])
    router, _ = make_router(base, top)

    decision = await router.dispatch("What mode?")

    assert (decision.frame, decision.rule) == ("base", "mode")
    assert [str(step) for step in decision.steps] == [
        "top: check_parent",
        "base: handled by mode",
    ]


async def test_check_parent_before_a_catch_all_gives_the_parent_first_refusal() -> None:
    base = Frame("base", [ExactRule("mode", ["what mode"], says("mode"))])
    top = Frame("top", [CHECK_PARENT, CatchAllRule("append", says("append"))])
    router, _ = make_router(base, top)

    mode = await router.dispatch("what mode")
    content = await router.dispatch("buy milk")

    assert f"{mode.frame}/{mode.rule}" == "base/mode"
    assert f"{content.frame}/{content.rule}" == "top/append"
    assert [str(step) for step in content.steps] == [
        "top: check_parent",
        "base: no rule matched (bottom)",
        "top: parent declined, continuing",
        "top: handled by append",
    ]


async def test_check_parent_walks_several_frames() -> None:
    base = Frame("base", [ExactRule("deep", ["deep"], says("deep"))])
    middle = Frame("middle", [CHECK_PARENT])
    top = Frame("top", [CHECK_PARENT])
    router, _ = make_router(base, middle, top)

    decision = await router.dispatch("deep")

    assert decision.frame == "base"
    assert [step.frame for step in decision.steps] == ["top", "middle", "base"]


async def test_a_top_only_rule_is_skipped_when_a_child_hands_down() -> None:
    base = Frame("base", [CatchAllRule("agent", says("agent"), top_only=True)])
    top = Frame("top", [CHECK_PARENT, CatchAllRule("append", says("append"))])
    router, _ = make_router(base, top)

    assert (await router.dispatch("buy milk")).rule == "append"
    router.pop(top)
    assert (await router.dispatch("buy milk")).rule == "agent"


@pytest.mark.parametrize("text", ["", "[BLANK_AUDIO]", "(noise)", "uh", "um, uh"])
async def test_catch_all_never_takes_noise_or_filler(text: str) -> None:
    router, _ = make_router(Frame("base", [CatchAllRule("all", says("all"))]))

    decision = await router.dispatch(text)

    assert not decision.handled
    assert decision.reason == "no real words (empty, noise or filler)"


# -- rule types ------------------------------------------------------------------------


async def test_exact_rule_with_values_passes_the_value() -> None:
    rule = ExactRule(
        "shortcut", {"lights off": "script.off", "movie": "script.movie"}, says("ok")
    )
    router, _ = make_router(Frame("base", [rule]))

    await router.dispatch("Lights, off.")

    assert said == [("ok", "script.off")]


async def test_phrase_rule_positions_and_verbatim_split() -> None:
    start = PhraseRule("start", ["start dictation"], says("start"), at="start")
    end = PhraseRule("end", ["end dictation", "end"], says("end"), at="end")
    anywhere = PhraseRule(
        "wake", ["okay nabu", "hey nabu"], says("wake"), at="anywhere"
    )
    router, _ = make_router(Frame("base", [start, end, anywhere]))

    await router.dispatch("Start dictation: Dear Anna,")
    await router.dispatch("That's all. End dictation.")
    await router.dispatch("so, okay Nabu, lights ON")

    assert [(name, tuple(split)) for name, split in said] == [
        ("start", ("start dictation", "start dictation", "", "Dear Anna,")),
        ("end", ("end dictation", "end dictation", "That's all.", "")),
        ("wake", ("okay nabu", "okay nabu", "so", "lights ON")),
    ]


async def test_regex_rule_on_the_key_and_on_the_text() -> None:
    timer = RegexRule("timer", r"set a timer for (\d+) minutes?", says("timer"))
    name = RegexRule("name", r"call me (\w+)", says("name"), on="text", search=True)
    router, _ = make_router(Frame("base", [timer, name]))

    await router.dispatch("Set a timer for twenty five minutes.")
    await router.dispatch("Please, call me Ishmael.")

    assert isinstance(said[0][1], re.Match)
    assert said[0][1].group(1) == "25"
    assert said[1][1].group(1) == "Ishmael"


async def test_consecutive_exact_rules_share_one_table_and_keep_their_order() -> None:
    first = ExactRule("first", ["stop", "halt"], says("first"))
    second = ExactRule("second", ["stop", "pause"], says("second"))
    regex = RegexRule("regex", "x+", says("regex"))
    third = ExactRule("third", ["go"], says("third"))
    plan = Plan([first, second, regex, third, CHECK_PARENT])
    router, _ = make_router(Frame("base", []), Frame("top", plan))

    assert [type(entry).__name__ for entry in plan.entries] == [
        "MergedExact",
        "RegexRule",
        "MergedExact",
        "_CheckParent",
    ]
    assert (await router.dispatch("stop")).rule == "first"
    assert (await router.dispatch("pause")).rule == "second"
    assert (await router.dispatch("go")).rule == "third"


def test_phrase_rules_split_plain_phrases_and_regexes() -> None:
    rules = phrase_rules("cancel", ["cancel", "re:never ?mind", "abort"], says("x"))

    assert [type(rule).__name__ for rule in rules] == ["ExactRule", "RegexRule"]
    assert set(rules[0].table) == {"cancel", "abort"}


async def test_regex_entries_of_a_mapping_get_the_value() -> None:
    rules = phrase_rules("shortcut", {"re:lights? off": "script.off"}, says("ok"))
    router, _ = make_router(Frame("base", rules))

    await router.dispatch("light off")

    assert said == [("ok", "script.off")]


def test_rules_reject_phrases_without_words() -> None:
    with pytest.raises(ValueError, match="no words"):
        ExactRule("bad", ["?!"], says("x"))
    with pytest.raises(ValueError, match="no words"):
        PhraseRule("bad", ["..."], says("x"))


# -- decisions, explanations, failures -------------------------------------------------------


async def test_the_router_is_a_routing_hook() -> None:
    top = Frame("top", [CatchAllRule("append", says("kept"))], expects_speech=True)
    router, _ = make_router(Frame("base", []), top)

    route = await router(Utterance("buy milk", "sat-1"))

    assert route == Route(
        frame="top",
        rule="append",
        agent_text=None,
        speak="kept",
        reason="catch-all (real words)",
        trace=("top: handled by append",),
        listen=True,
    )


async def test_explain_names_frame_rule_reason_steps_and_stack() -> None:
    def sent(hit: Hit) -> Outcome:
        return Outcome(agent_text=hit.payload, reason="sent to the agent")

    router, _ = make_router(Frame("base", [CatchAllRule("agent", sent)]))

    decision = await router.dispatch("Turn on the light")

    assert decision.reason == "catch-all (real words); sent to the agent"
    assert decision.explain() == (
        "'Turn on the light' → base/agent: catch-all (real words); sent to the agent"
        " [base: handled by agent] stack base"
    )
    assert router.last is decision


async def test_a_failing_action_is_explained_logged_and_survived(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def boom(hit: Hit) -> Outcome:
        raise RuntimeError("kaputt")

    router, _ = make_router(
        Frame(
            "base", [ExactRule("boom", ["boom"], boom), CatchAllRule("ok", says("ok"))]
        )
    )

    decision = await router.dispatch("boom")

    assert decision.handled
    assert decision.reason == "exact phrase 'boom'; failed: RuntimeError('kaputt')"
    assert "rule boom failed" in caplog.text
    assert (await router.dispatch("fine")).rule == "ok"


async def test_async_actions_are_awaited() -> None:
    async def later(hit: Hit) -> Outcome:
        await asyncio.sleep(0)
        return Outcome(speak="later")

    router, _ = make_router(Frame("base", [CatchAllRule("later", later)]))

    assert (await router.dispatch("hi")).speak == "later"


async def test_forward_dispatches_the_rest_inside_the_same_decision() -> None:
    async def open_top(hit: Hit) -> Outcome:
        hit.control.push(
            Frame("top", [CHECK_PARENT, CatchAllRule("append", says("append"))])
        )
        return await hit.control.forward(hit.payload.after)

    wake = PhraseRule("wake", ["computer"], open_top, at="start")
    router, _ = make_router(Frame("base", [wake]))

    decision = await router.dispatch("Computer, buy milk")

    assert decision.rule == "wake"
    assert decision.speak == "append"
    assert "forwarded to top/append" in decision.reason
    assert "top: forwarded 'buy milk'" in [str(step) for step in decision.steps]
    assert decision.stack == ("base", "top")


def test_stack_guards() -> None:
    base, top = Frame("base", []), Frame("top", [])
    router, _ = make_router(base, top)

    with pytest.raises(ValueError, match="base frame cannot be popped"):
        router.pop(base)
    with pytest.raises(ValueError, match="already on a stack"):
        router.push(top)
    assert router.pop(top)
    assert not router.pop(top)  # already gone: a no-op


async def test_listeners_hear_every_decision_until_removed() -> None:
    router, _ = make_router(Frame("base", [CatchAllRule("x", says("x"))]))
    calls: list[str] = []
    remove = router.add_listener(lambda: calls.append(router.top.name))

    await router.dispatch("one")
    remove()
    await router.dispatch("two")

    assert calls == ["base"]


async def test_perform_runs_a_request_as_an_explained_decision() -> None:
    router, _ = make_router(Frame("base", []))

    def open_top() -> Outcome:
        router.push(Frame("top", []))
        return Outcome(speak="opened", reason="opened top")

    decision = await router.perform("open", open_top)

    assert (decision.frame, decision.rule, decision.reason) == (
        "api",
        "open",
        "opened top",
    )
    assert decision.stack == ("base", "top")
    assert decision.explain().startswith("(request) → api/open")


# -- timers ------------------------------------------------------------------------------


async def test_a_frame_timer_is_a_decision_that_is_emitted() -> None:
    emitted: list[Route] = []

    async def emit(route: Route) -> None:
        emitted.append(route)

    top = Frame("top", [], timeout_s=5.0)
    router, clock = make_router(Frame("base", []), top, emit=emit)

    clock.advance(4.999)
    await router.settle()
    assert router.top is top
    clock.advance(0.001)
    await router.settle()

    assert router.top.name == "base"
    assert router.last is not None
    assert router.last.background
    assert emitted == [
        Route(
            frame="top",
            rule="timeout",
            agent_text=None,
            speak=None,
            reason="closed after 5 s without input",
            trace=("top: timeout timer fired",),
            listen=False,
            changed=True,  # the frame closed
        )
    ]
    assert router.last.explain().startswith("(timer) → top/timeout")


async def test_a_covered_frame_waits_and_restarts_when_uncovered() -> None:
    lower = Frame("lower", [], timeout_s=5.0)
    router, clock = make_router(Frame("base", []), lower)
    clock.advance(4.0)
    upper = Frame("upper", [])
    router.push(upper)

    clock.advance(10.0)
    await router.settle()
    assert router.top is upper  # the covered frame's timer is stopped
    router.pop(upper)
    clock.advance(4.9)
    await router.settle()
    assert router.top is lower  # it started from zero when uncovered
    clock.advance(0.1)
    await router.settle()
    assert router.top.name == "base"


async def test_a_popped_frame_has_no_timer_left() -> None:
    top = Frame("top", [], timeout_s=1.0)
    router, clock = make_router(Frame("base", []), top)

    router.pop(top)

    assert clock.pending == 0


async def test_close_pops_everything_and_stops_timers() -> None:
    router, clock = make_router(Frame("base", []), Frame("top", [], timeout_s=1.0))

    await router.close()

    assert [frame.name for frame in router.stack] == ["base"]
    assert clock.pending == 0


# -- the LLM classifier ----------------------------------------------------------------------


class Classifier:
    """A stand-in for the conversation agent picking a label."""

    def __init__(self, answer: str = "", *, error: Exception | None = None) -> None:
        """Answer ``answer`` (or raise ``error``); ``wait`` holds the answer back."""
        self.answer = answer
        self.error = error
        self.prompts: list[tuple[str, tuple[str, ...]]] = []
        self.release = asyncio.Event()
        self.wait = False
        self.stubborn = False  # ignores cancellation
        self.cancelled = False

    async def __call__(self, prompt: str, labels: tuple[str, ...]) -> str:
        """Record the question; answer, fail, or wait (maybe ignoring cancel)."""
        self.prompts.append((prompt, labels))
        if self.wait:
            try:
                await self.release.wait()
            except asyncio.CancelledError:
                self.cancelled = True
                if not self.stubborn:
                    raise
                await self.release.wait()
        if self.error is not None:
            raise self.error
        return self.answer


def classifier_frame(classify: Classifier, *, fallback: str | None = "chat") -> Frame:
    rule = ClassifierRule(
        "intent",
        classify,
        {"lights": says("lights"), "weather": says("weather"), "chat": None},
        timeout_s=2.0,
        fallback=fallback,
        prompt="Labels: {labels}. Text: {text}",
    )
    return Frame("base", [rule, CatchAllRule("rest", says("rest"))])


async def test_classifier_label_runs_its_action() -> None:
    classify = Classifier("Weather")
    router, _ = make_router(classifier_frame(classify))

    decision = await router.dispatch("Will it rain tomorrow?")

    assert (decision.rule, decision.speak) == ("intent", "weather")
    assert decision.reason == "classified as 'weather' (answered)"
    assert classify.prompts == [
        (
            "Labels: lights, weather, chat. Text: Will it rain tomorrow?",
            ("lights", "weather", "chat"),
        )
    ]


async def test_classifier_answer_naming_one_label_counts() -> None:
    router, _ = make_router(classifier_frame(Classifier("The label is: lights.")))

    assert (await router.dispatch("too dark in here")).speak == "lights"


async def test_classifier_label_without_action_passes_to_the_next_rule() -> None:
    router, _ = make_router(classifier_frame(Classifier("chat")))

    decision = await router.dispatch("nice weather today")

    assert decision.rule == "rest"
    assert "base: intent: classified as 'chat' (answered): not handled here" in [
        str(step) for step in decision.steps
    ]


async def test_classifier_unknown_answer_falls_back() -> None:
    router, _ = make_router(classifier_frame(Classifier("banana"), fallback="lights"))

    decision = await router.dispatch("hm, the lamp")

    assert decision.speak == "lights"
    assert decision.reason == (
        "classified as 'lights' (answer 'banana' is not a label; fallback 'lights')"
    )


async def test_classifier_error_falls_back(caplog: pytest.LogCaptureFixture) -> None:
    classify = Classifier(error=ConnectionError("agent down"))
    router, _ = make_router(classifier_frame(classify, fallback=None))

    decision = await router.dispatch("dim the lights")

    assert decision.rule == "rest"
    assert any(
        "classifier failed: ConnectionError('agent down'); no fallback" in s
        for s in map(str, decision.steps)
    )
    assert "Classifier of rule intent failed" in caplog.text


async def test_an_unavailable_classifier_falls_back_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    classify = Classifier(error=ClassifierUnavailableError("no LLM agent"))
    router, _ = make_router(classifier_frame(classify, fallback=None))

    decision = await router.dispatch("dim the lights")

    assert decision.rule == "rest"
    assert any("no classifier: no LLM agent" in s for s in map(str, decision.steps))
    assert "Classifier of rule" not in caplog.text


async def test_classifier_gives_up_at_its_timeout_on_the_router_clock() -> None:
    classify = Classifier("lights")
    classify.wait = True
    router, clock = make_router(classifier_frame(classify, fallback="weather"))

    task = asyncio.create_task(router.dispatch("is it cold outside"))
    await spin()
    clock.advance(1.999)
    await spin()
    assert not task.done()
    clock.advance(0.001)
    decision = await task

    assert decision.speak == "weather"
    assert (
        decision.reason
        == "classified as 'weather' (no answer within 2 s; fallback 'weather')"
    )
    await spin()
    assert classify.cancelled


async def test_a_classifier_ignoring_cancellation_does_not_hold_dispatch() -> None:
    classify = Classifier("lights")
    classify.wait = classify.stubborn = True
    router, clock = make_router(classifier_frame(classify, fallback=None))

    task = asyncio.create_task(router.dispatch("is it cold outside"))
    await spin()
    clock.advance(2.0)
    decision = await asyncio.wait_for(task, 1.0)

    assert decision.rule == "rest"
    assert classify.cancelled
    classify.release.set()  # let the abandoned call end
    await spin()


async def test_classifier_is_not_asked_about_noise() -> None:
    classify = Classifier("lights")
    router, _ = make_router(classifier_frame(classify))

    await router.dispatch("[BLANK_AUDIO]")

    assert classify.prompts == []


def test_classifier_rule_validates_its_configuration() -> None:
    classify = Classifier()
    with pytest.raises(ValueError, match="no labels"):
        ClassifierRule("c", classify, {})
    with pytest.raises(ValueError, match="fallback 'x' is not a label"):
        ClassifierRule("c", classify, {"a": None}, fallback="x")
    with pytest.raises(ValueError, match="timeout must be positive"):
        ClassifierRule("c", classify, {"a": None}, timeout_s=0)


def test_debug_log_explains_each_decision(caplog: pytest.LogCaptureFixture) -> None:
    async def run() -> None:
        router, _ = make_router(Frame("base", [ExactRule("hi", ["hi"], says("hi"))]))
        await router.dispatch("hi")

    with caplog.at_level(
        logging.DEBUG, logger="custom_components.voicestack.core.router"
    ):
        asyncio.run(run())

    assert (
        "t: 'hi' → base/hi: exact phrase 'hi' [base: handled by hi] stack base"
        in caplog.text
    )
