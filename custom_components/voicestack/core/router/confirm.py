"""The confirm frame (yes/no) and delivery that may need it.

A pending action waits in the frame; "yes" runs it, "no" or "cancel" discards it,
anything else with real words gets "Please say yes or no." and changes nothing
(no CHECK_PARENT: nothing else is accepted). After ``timeout_s`` without an answer
the action is discarded.

``Deliverer`` hands a submission to its target and, when the target's
``Delivery`` carries a question (a sensitive request), pushes a confirm frame whose
pending action releases the delivery's ``agent_text`` and ``speak``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
import inspect
from typing import Final

from .frames import Frame, Plan
from .replies import Replies
from .rules import (
    ActionResult,
    CatchAllRule,
    ClassifierRule,
    Classify,
    Hit,
    Outcome,
    Rule,
    StackControl,
    frame_action,
    phrase_rules,
)
from .targets import Submission, Target
from .vocabulary import Vocabulary

__all__ = ["ConfirmFrame", "Deliverer", "PendingAction"]

type PendingAction = Callable[[], ActionResult | Awaitable[ActionResult]]

CONFIRM_PROMPT: Final = (
    "Someone was asked a yes-or-no question and answered: {text}\n"
    "Does the answer mean yes or no? Reply with exactly one of: {labels}."
)
CLASSIFY_TIMEOUT_S: Final = 4.0


class ConfirmFrame(Frame):
    """Yes or no to one pending action."""

    def __init__(
        self,
        question: str,
        on_yes: PendingAction,
        *,
        plan: Plan,
        replies: Replies,
        timeout_s: float | None,
    ) -> None:
        """``plan`` from ``build_plan``; ``question`` is what was asked."""
        super().__init__("confirm", plan, expects_speech=True, timeout_s=timeout_s)
        self.question = question
        self.on_yes = on_yes
        self.replies = replies
        self._expires_at: float | None = None  # on the router's clock

    def on_push(self, control: StackControl[Frame]) -> None:
        """Asked now: the question expires ``timeout_s`` from now."""
        self._extend(control)
        super().on_push(control)

    def restart_timer(self) -> None:
        """Run the timer to the question's expiry, not ``timeout_s`` from now.

        Another mode on top (a dictation opened meanwhile) pauses the timer but
        not the time: once that mode closes, an expired question goes at once,
        and a stray "yes" cannot run an action asked about long ago.
        """
        self.stop_timer()
        if self._expires_at is not None and self.control is not None:
            remaining = max(0.0, self._expires_at - self.control.clock.now())
            self._timer = self.control.after(
                remaining, self, self.timer_name, self.on_timeout
            )

    def _extend(self, control: StackControl[Frame]) -> None:
        if self.timeout_s is not None:
            self._expires_at = control.clock.now() + self.timeout_s

    @staticmethod
    def build_plan(vocabulary: Vocabulary, classify: Classify | None = None) -> Plan:
        """yes, no, cancel, the agent's reading of other answers, then a reprompt.

        With ``classify`` (the pipeline's LLM agent), "sure, go ahead" or
        "absolutely not" count too. Its fallback is "unclear": a slow, failing or
        evasive classifier reprompts, it never confirms.
        """
        understood: list[Rule] = []
        if classify is not None:
            understood.append(
                ClassifierRule(
                    "understood",
                    classify,
                    {
                        "yes": frame_action(ConfirmFrame.on_yes_said),
                        "no": frame_action(ConfirmFrame.on_no_said),
                        "unclear": None,
                    },
                    prompt=CONFIRM_PROMPT,
                    timeout_s=CLASSIFY_TIMEOUT_S,
                    fallback="unclear",
                )
            )
        return Plan(
            [
                *phrase_rules(
                    "yes",
                    vocabulary["confirm.yes"],
                    frame_action(ConfirmFrame.on_yes_said),
                ),
                *phrase_rules(
                    "no",
                    vocabulary["confirm.no"],
                    frame_action(ConfirmFrame.on_no_said),
                ),
                *phrase_rules(
                    "cancel",
                    vocabulary["common.cancel"],
                    frame_action(ConfirmFrame.on_no_said),
                ),
                *understood,
                CatchAllRule("reprompt", frame_action(ConfirmFrame.on_other)),
            ]
        )

    async def on_yes_said(self, hit: Hit[ConfirmFrame]) -> Outcome:
        """Close, then run the pending action; its outcome is the answer."""
        self.stack.pop(self)
        result = self.on_yes()
        if inspect.isawaitable(result):
            result = await result
        outcome = result or Outcome()
        reason = "confirmed" + (f"; {outcome.reason}" if outcome.reason else "")
        return Outcome(
            speak=outcome.speak, agent_text=outcome.agent_text, reason=reason
        )

    def on_no_said(self, hit: Hit[ConfirmFrame]) -> Outcome:
        """Close; the pending action is dropped."""
        self.stack.pop(self)
        return Outcome(
            speak=self.replies.cancelled or None, reason="declined; action discarded"
        )

    def on_other(self, hit: Hit[ConfirmFrame]) -> Outcome:
        """Neither yes nor no: ask again, and wait ``timeout_s`` from now."""
        self._extend(self.stack)
        return Outcome(
            speak=self.replies.say_yes_or_no or None, reason="not yes or no; waiting"
        )

    def on_timeout(self) -> Outcome:
        """No answer in time: the action is dropped."""
        self.stack.pop(self)
        return Outcome(
            speak=self.replies.confirm_expired or None,
            reason=f"no answer within {self.timeout_s:g} s; action discarded",
        )


class Deliverer:
    """Deliver a submission; ask first when the target says so.

    ``confirm(question, pending)`` builds the confirm frame (the kit does).
    """

    def __init__(self, confirm: Callable[[str, PendingAction], Frame]) -> None:
        """Frames come from ``confirm``."""
        self._confirm = confirm

    async def __call__(
        self,
        frame: Frame,
        target: Target,
        submission: Submission,
        *,
        close: bool = True,
    ) -> Outcome:
        """Deliver; on success pop ``frame`` (if ``close``); raise on failure.

        A question in the delivery pushes a confirm frame (after the pop) and is
        said; the delivery's agent text and speech wait for "yes".
        """
        delivery = await target.deliver(submission)
        control = frame.stack
        if close:
            control.pop(frame)

        def release() -> Outcome:
            return Outcome(
                speak=delivery.speak,
                agent_text=delivery.agent_text,
                reason=f"submitted to {target.name}",
            )

        if delivery.confirm is None:
            return release()
        control.push(self._confirm(delivery.confirm, release))
        return Outcome(
            speak=delivery.confirm, reason=f"{target.name}: sensitive, asking first"
        )
