"""The frame stack and its dispatcher: what an utterance means, and why.

``FrameStack`` holds a stack of frames (the base frame at the bottom, never
popped). ``dispatch(text)`` walks it from the top: each frame asks its rules in
order; a matching rule handles the utterance and dispatch stops; ``CHECK_PARENT``
asks the frame below (recursively) and, if nothing there handles it, goes on with
the frame's next rule; a frame that runs out of rules declines, and the top frame
declining means the utterance is ignored.

Every decision is a ``Decision``: the frame and rule that handled it (or
``none``), a reason ("exact phrase 'cancel'; popped query, nothing sent"), the
steps through the stack, and the stack afterwards. ``Decision.route()`` is the
``route.Route`` the voice loop consumes (``await stack(utterance) -> Route``).

Decisions are serialized by one asyncio lock: an utterance, a frame's timer
(silence, timeout) and an outside request (``perform``, e.g. a Home Assistant
action) never interleave. Timer decisions are not caused by an utterance, so
their ``Route`` goes to ``emit`` (the glue speaks it and sends ``agent_text`` to
the agent as the voice loop would). Listeners (``add_listener``) are called after
every decision, for entity state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import partial
import logging
from typing import Any, NamedTuple, cast

from ..clock import Cancellable, Clock
from .frames import Frame
from .normalize import FILLER, Heard, hear
from .route import Route, Utterance
from .rules import CHECK_PARENT, ActionResult, Hit, Miss, Outcome, Rule

__all__ = ["Decision", "Emit", "FrameStack", "Step"]

_LOGGER = logging.getLogger(__name__)

type Emit = Callable[[Route], Awaitable[None]]
_NOTHING = Outcome()


class Step(NamedTuple):
    """One step of a decision: a frame and what happened there."""

    frame: str
    verdict: str

    def __str__(self) -> str:
        """``frame: verdict``."""
        return f"{self.frame}: {self.verdict}"


@dataclass(frozen=True, slots=True)
class Decision:
    """What the router decided about one utterance (or timer, or request)."""

    text: str  # the utterance as heard ("" for timers and requests)
    frame: str  # the frame that decided ("api" for requests)
    rule: str  # the rule ("none" when nothing handled it; the timer's name)
    reason: str
    handled: bool
    speak: str | None
    agent_text: str | None
    steps: tuple[Step, ...]
    stack: tuple[str, ...]  # frame names afterwards, base first
    listen: bool  # the top frame expects more speech
    background: bool = False  # caused by a timer, not by an utterance
    changed: bool = False  # the stack changed: a mode opened, closed or delivered

    def explain(self) -> str:
        """One line for debug logs."""
        what = (
            f"{self.text!r}"
            if self.text
            else "(timer)"
            if self.background
            else "(request)"
        )
        steps = "; ".join(map(str, self.steps))
        return (
            f"{what} → {self.frame}/{self.rule}: {self.reason} [{steps}]"
            f" stack {' > '.join(self.stack)}"
        )

    def route(self) -> Route:
        """The voice loop's view (rule ``ignored`` when nothing handled it)."""
        return Route(
            frame=self.frame,
            rule=self.rule if self.handled else "ignored",
            agent_text=self.agent_text,
            speak=self.speak,
            reason=self.reason,
            trace=tuple(map(str, self.steps)),
            listen=self.listen,
            changed=self.changed,
            explain=self.explain(),
            stack=self.stack,
        )


type _Found = tuple[Frame, Rule, Hit[Frame], Outcome]


class FrameStack:
    """A stack of frames for one satellite; a route hook."""

    def __init__(
        self,
        base: Frame,
        *,
        clock: Clock,
        emit: Emit | None = None,
        filler: frozenset[str] = FILLER,
        name: str = "router",
    ) -> None:
        """``base`` is the bottom frame; ``emit`` receives timer decisions.

        ``name`` prefixes log lines (e.g. the satellite's name).
        """
        self.name = name
        self._clock = clock
        self._emit = emit
        self._filler = filler
        self._stack: list[Frame] = [base]
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._listeners: list[Callable[[], None]] = []
        self._steps: list[Step] = []
        self._before: tuple[str, ...] = ()  # the stack when the decision began
        self.last: Decision | None = None
        base.on_push(self)

    # -- StackControl -------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        """The clock timers and classifier timeouts run on."""
        return self._clock

    @property
    def stack(self) -> tuple[Frame, ...]:
        """Bottom (base) to top."""
        return tuple(self._stack)

    @property
    def top(self) -> Frame:
        """The innermost frame."""
        return self._stack[-1]

    @property
    def base(self) -> Frame:
        """The bottom frame."""
        return self._stack[0]

    def push(self, frame: Frame) -> None:
        """Put ``frame`` on top (the previous top's timer waits)."""
        if frame.control is not None:
            raise ValueError(f"frame {frame.name} is already on a stack")
        self.top.on_cover()
        self._stack.append(frame)
        frame.on_push(self)

    def pop(self, frame: Frame | None = None) -> bool:
        """Remove ``frame`` (default: the top) and every frame above it.

        False if ``frame`` is not on this stack (already popped). The base frame
        cannot be popped.
        """
        frame = frame or self.top
        if frame is self.base:
            raise ValueError("the base frame cannot be popped")
        if frame.control is not self:
            return False
        index = self._stack.index(frame)
        for gone in reversed(self._stack[index:]):
            gone.on_pop()
        del self._stack[index:]
        self.top.on_uncover()
        return True

    def pop_to_base(self) -> tuple[str, ...]:
        """Pop every frame above the base; the names popped, top first."""
        popped = tuple(frame.name for frame in reversed(self._stack[1:]))
        if len(self._stack) > 1:
            self.pop(self._stack[1])
        return popped

    def after(
        self,
        delay_s: float,
        frame: Frame,
        name: str,
        callback: Callable[[], ActionResult | Awaitable[ActionResult]],
    ) -> Cancellable:
        """Run ``callback`` after ``delay_s`` as a decision of ``frame``.

        Only if ``frame`` is still the top frame then: a popped or covered
        frame's timer is void.
        """
        return self._clock.call_later(
            delay_s, lambda: self._spawn(self._fire(frame, name, callback))
        )

    async def forward(self, text: str) -> Outcome:
        """Dispatch ``text`` through the current stack within the running decision.

        Only for actions (the lock is held): e.g. "okay nabu, start dictation"
        opens the query frame and forwards "start dictation".
        """
        heard = hear(text, self._filler)
        self._steps.append(Step(self.top.name, f"forwarded {heard.text!r}"))
        found = await self._walk(heard, len(self._stack) - 1) if heard.real else None
        if found is None:
            return Outcome(reason=f"forwarded {heard.text!r}, not handled")
        frame, rule, hit, outcome = found
        return Outcome(
            speak=outcome.speak,
            agent_text=outcome.agent_text,
            reason=f"forwarded to {frame.name}/{rule.name}: {_reason(rule, hit, outcome)}",
        )

    # -- dispatch -----------------------------------------------------------------

    async def __call__(self, utterance: Utterance) -> Route:
        """Dispatch ``utterance`` and return its route."""
        return (await self.dispatch(utterance.text)).route()

    async def dispatch(self, text: str) -> Decision:
        """Decide what ``text`` means and run the handling rule's action.

        An utterance without real words (empty, noise, filler) is never a
        command and never content: it is ignored without asking any rule.
        """
        heard = hear(text, self._filler)
        async with self._lock:
            self._begin()
            self._steps = [] if heard.real else [Step(self.top.name, "no real words")]
            found = (
                await self._walk(heard, len(self._stack) - 1) if heard.real else None
            )
            if found is None:
                decision = self._decision(
                    heard.raw,
                    self.top.name,
                    "none",
                    self._ignored(heard),
                    _NOTHING,
                    handled=False,
                )
            else:
                frame, rule, hit, outcome = found
                decision = self._decision(
                    heard.raw,
                    frame.name,
                    rule.name,
                    _reason(rule, hit, outcome),
                    outcome,
                )
        self._publish(decision)
        return decision

    async def perform(
        self,
        name: str,
        operation: Callable[[], ActionResult | Awaitable[ActionResult]],
        *,
        by: str = "api",
    ) -> Decision:
        """Run ``operation`` (push, pop, ...) as a decision of its own.

        For requests from outside the voice (a Home Assistant action, the mode
        select): serialized with utterances and timers, explained like them.
        Not for actions (they hold the lock already; they use the stack directly).
        ``by`` names who decided (default ``api``).
        """
        async with self._lock:
            self._begin()
            self._steps = [Step(self.top.name, f"request {name}")]
            outcome = await self._call(operation, f"request {name}")
            decision = self._decision("", by, name, outcome.reason or name, outcome)
        self._publish(decision)
        return decision

    async def _walk(self, heard: Heard, level: int) -> _Found | None:
        """Ask frame ``level`` (and, through CHECK_PARENT, those below it)."""
        frame = self._stack[level]
        on_top = level == len(self._stack) - 1
        steps = self._steps
        for entry in frame.plan.entries:
            if entry is CHECK_PARENT:
                if level == 0:
                    continue
                steps.append(Step(frame.name, "check_parent"))
                result = await self._walk(heard, level - 1)
                if result is not None:
                    return result
                steps.append(Step(frame.name, "parent declined, continuing"))
                continue
            if (entry.top_only and not on_top) or (entry.covered_only and on_top):
                continue
            if entry.is_async:
                payload = await entry.amatch(heard, self._clock)
                if isinstance(payload, Miss):
                    steps.append(Step(frame.name, f"{entry.name}: {payload.reason}"))
                    continue
            else:
                payload = entry.match(heard)
            if payload is None:
                continue
            rule = entry
            if entry.merged:  # a table of exact rules: the pair names the rule
                rule, payload = cast("tuple[Rule, object]", payload)
            steps.append(Step(frame.name, f"handled by {rule.name}"))
            hit = Hit(heard, payload, frame, self, rule)
            outcome = await self._call(partial(rule.action, hit), f"rule {rule.name}")
            return frame, rule, hit, outcome
        steps.append(Step(frame.name, _declined(frame, level)))
        return None

    async def _call(
        self, call: Callable[[], ActionResult | Awaitable[ActionResult]], what: str
    ) -> Outcome:
        """Run an action; a failing one is logged and explained, never raised."""
        try:
            result = call()
            if result is not None and not isinstance(result, Outcome):
                result = await result
        except Exception as err:
            _LOGGER.exception("%s: %s failed", self.name, what)
            return Outcome(reason=f"failed: {err!r}")
        return result or _NOTHING

    def _ignored(self, heard: Heard) -> str:
        if not heard.real:
            return "no real words (empty, noise or filler)"
        if len(self._stack) == 1:
            return f"no rule of {self.top.name} (the bottom frame) matched"
        if self.top.exclusive:
            return f"no rule matched; {self.top.name} is exclusive"
        return "no rule matched down to the bottom frame"

    def _names(self) -> tuple[str, ...]:
        return tuple(frame.name for frame in self._stack)

    def _begin(self) -> None:
        """A decision begins: remember the stack it starts from."""
        self._before = self._names()

    def _decision(
        self,
        text: str,
        frame: str,
        rule: str,
        reason: str,
        outcome: Outcome,
        *,
        handled: bool = True,
        background: bool = False,
    ) -> Decision:
        return Decision(
            text=text,
            frame=frame,
            rule=rule,
            reason=reason,
            handled=handled,
            speak=outcome.speak,
            agent_text=outcome.agent_text,
            steps=tuple(self._steps),
            stack=(after := self._names()),
            listen=self.top.expects_speech,
            background=background,
            changed=after != self._before,
        )

    def _publish(self, decision: Decision) -> None:
        self.last = decision
        if _LOGGER.isEnabledFor(logging.DEBUG):
            _LOGGER.debug("%s: %s", self.name, decision.explain())
        for listener in tuple(self._listeners):
            try:
                listener()
            except Exception:
                _LOGGER.exception("%s: listener failed", self.name)

    # -- timers -------------------------------------------------------------------

    def _spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _fire(
        self,
        frame: Frame,
        name: str,
        callback: Callable[[], ActionResult | Awaitable[ActionResult]],
    ) -> None:
        async with self._lock:
            if frame.control is not self or frame is not self.top:
                return  # popped or covered since: the timer is void
            self._begin()
            self._steps = [Step(frame.name, f"{name} timer fired")]
            outcome = await self._call(callback, f"{frame.name} {name}")
            decision = self._decision(
                "", frame.name, name, outcome.reason or name, outcome, background=True
            )
        self._publish(decision)
        if self._emit is not None:
            try:
                await self._emit(decision.route())
            except Exception:
                _LOGGER.exception("%s: emitting a timer decision failed", self.name)

    # -- listeners and lifetime ----------------------------------------------------

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after every decision; returns the remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    async def settle(self) -> None:
        """Wait until timer decisions under way are done (tests, unload)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def close(self) -> None:
        """Pop every frame (timers stop) and end timer decisions under way."""
        async with self._lock:
            self.pop_to_base()
            self.base.on_pop()
        for task in tuple(self._tasks):
            task.cancel()
        await self.settle()


def _declined(frame: Frame, level: int) -> str:
    """Why a frame let an utterance go."""
    if level == 0:
        return "no rule matched (bottom)"
    return "no rule matched" + (" (exclusive)" if frame.exclusive else "")


def _reason(rule: Rule, hit: Hit[Frame], outcome: Outcome) -> str:
    """What matched, then what the action says it did."""
    why = rule.why(hit)
    return f"{why}; {outcome.reason}" if outcome.reason else why
