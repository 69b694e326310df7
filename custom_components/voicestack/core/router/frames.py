"""Frames: one way of listening (a mode), with its ordered rules and its own state.

A frame's state lives in the frame (the query's gathered text, the confirm frame's
pending action) and dies with it: popping a frame stops its timer and drops the
frame; nothing outside needs cleaning up.

Rules are compiled once into a ``Plan`` and shared by every frame of a kind (a
pushed query frame costs its state, not a copy of its vocabulary). Compiling merges
consecutive exact rules into one dict, so a frame with 150 shortcut phrases pays
one lookup for all of them; order is kept (the first rule claiming a phrase wins).

Each frame has at most one timer (silence for gathering frames, a timeout for
confirm and voice picker), which runs only while the frame is on top: covering it
stops the timer, uncovering it starts it afresh. When it fires, ``on_timeout`` runs
under the router's lock, as a decision of its own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING, ClassVar

from ..clock import Cancellable
from .rules import CHECK_PARENT, ExactRule, Outcome, Rule, StackControl

if TYPE_CHECKING:
    from .normalize import Heard
    from .rules import ActionResult, Hit

__all__ = ["Frame", "MergedExact", "Plan"]


class MergedExact(Rule):
    """Consecutive exact rules of a plan as one table: key → (rule, payload).

    The router unpacks the pair (``merged``), so explanations name the real rule.
    """

    __slots__ = ("table",)
    merged: ClassVar[bool] = True

    def __init__(self) -> None:
        """Empty; the plan fills it."""
        super().__init__("exact", _unused)
        self.table: dict[str, tuple[Rule, object]] = {}

    def match(self, heard: Heard) -> tuple[Rule, object] | None:
        """One dict lookup for the whole run of exact rules."""
        return self.table.get(heard.key)


def _unused(hit: Hit[object]) -> None:
    raise AssertionError("a merged table never acts itself")


class Plan:
    """A frame kind's rules, compiled for dispatch; immutable once built."""

    __slots__ = ("check_parent", "entries", "rules")

    def __init__(self, rules: Iterable[Rule]) -> None:
        """Merge runs of exact rules (unrestricted ones) into single tables."""
        self.rules = tuple(rules)
        entries: list[Rule] = []
        merged: MergedExact | None = None
        for rule in self.rules:
            if type(rule) is ExactRule and not (rule.top_only or rule.covered_only):
                if merged is None:
                    merged = MergedExact()
                    entries.append(merged)
                for key, value in rule.table.items():
                    merged.table.setdefault(key, (rule, value))
                continue
            merged = None
            entries.append(rule)
        self.entries = tuple(entries)
        self.check_parent = any(rule is CHECK_PARENT for rule in self.rules)

    def __len__(self) -> int:
        """Number of rules (including CHECK_PARENT)."""
        return len(self.rules)


class Frame:
    """A frame: name, plan, a timer, and the state its subclass adds.

    ``expects_speech`` tells the voice loop that the frame waits for more speech
    (a wake-word satellite should listen again without a wake word). A frame
    without ``CHECK_PARENT`` in its plan is exclusive: what none of its rules
    handles is discarded.
    """

    def __init__(
        self,
        name: str,
        plan: Plan | Iterable[Rule],
        *,
        title: str | None = None,
        expects_speech: bool = False,
        timeout_s: float | None = None,
        timer_name: str = "timeout",
    ) -> None:
        """``title`` is how the frame is spoken of ("dictation")."""
        self.name = name
        self.plan = plan if isinstance(plan, Plan) else Plan(plan)
        self.title = title or name.replace("_", " ")
        self.expects_speech = expects_speech
        self.timeout_s = timeout_s
        self.timer_name = timer_name
        self.control: StackControl[Frame] | None = None
        self._timer: Cancellable | None = None

    @property
    def exclusive(self) -> bool:
        """Without CHECK_PARENT, nothing passes to the frames below."""
        return not self.plan.check_parent

    @property
    def stack(self) -> StackControl[Frame]:
        """The stack this frame is on (actions run only while it is)."""
        if self.control is None:
            raise RuntimeError(f"frame {self.name} is not on a stack")
        return self.control

    def gathered(self) -> str:
        """Text gathered so far (for the accumulated-length sensor)."""
        return ""

    # -- lifecycle, called by the router ----------------------------------------

    def on_push(self, control: StackControl[Frame]) -> None:
        """Now on top of ``control``'s stack."""
        self.control = control
        self.restart_timer()

    def on_pop(self) -> None:
        """Removed: the timer stops, the state goes with the frame."""
        self.stop_timer()
        self.control = None

    def on_cover(self) -> None:
        """Another frame was pushed on top: the timer waits."""
        self.stop_timer()

    def on_uncover(self) -> None:
        """On top again: the timer starts afresh."""
        self.restart_timer()

    def on_timeout(self) -> ActionResult | Awaitable[ActionResult]:
        """The timer fired (frame on top): by default the frame closes."""
        self.stack.pop(self)
        return Outcome(reason=f"closed after {self.timeout_s:g} s without input")

    # -- the timer --------------------------------------------------------------

    def restart_timer(self) -> None:
        """(Re)start the timer from zero, if the frame has one and is on a stack."""
        self.stop_timer()
        if self.timeout_s is not None and self.control is not None:
            self._timer = self.control.after(
                self.timeout_s, self, self.timer_name, self.on_timeout
            )

    @property
    def timer_pending(self) -> bool:
        """The timer is running (not stopped, not fired)."""
        return self._timer is not None

    def stop_timer(self) -> None:
        """Call off a pending timer."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def __repr__(self) -> str:
        """Name and rule count, for debugging."""
        return f"<{type(self).__name__} {self.name} ({len(self.plan)} rules)>"
