"""The built-in frames assembled: the base frame, the frame kit, ``VoiceRouter``.

The base frame is the bottom of every satellite's stack. In both listen modes it
answers the mode query, switches modes, runs shortcuts, starts dictation,
inventory and the voice picker. What it does with everything else depends on the
mode:

- **wake word**: the satellite's wake word started the request, so any other
  utterance with real words goes to the agent (``AgentTarget``, which may ask for
  confirmation first). Only while the base frame is on top: a child frame's
  ``CHECK_PARENT`` never hands its content to the agent.
- **always listening**: the satellite streams VAD-segmented speech; a wake phrase
  anywhere in an utterance opens a query frame (or finds the open one), and what
  follows the phrase is dispatched into it ("okay nabu, start dictation" starts
  dictation). Speech without a wake phrase is ignored.

``FrameKit`` compiles every frame kind's plan once (from ``Settings``) and builds
frames on demand. ``VoiceRouter`` is what the glue creates per satellite: a
``FrameStack`` plus the operations Home Assistant needs (mode select,
start/abort/submit actions, state for sensors).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
import copy
from dataclasses import dataclass, field
from functools import partial
import logging
from typing import ClassVar, Final

from ..clock import Clock
from .confirm import ConfirmFrame, Deliverer, PendingAction
from .frames import Frame, Plan
from .gather import DictationFrame, GatheringFrame, InventoryFrame, QueryFrame
from .hooks import Hooks, ListenMode, Voice
from .normalize import hear
from .picker import VoicePickerFrame
from .replies import Replies
from .route import Route, Utterance
from .rules import (
    CatchAllRule,
    Hit,
    Outcome,
    PhraseRule,
    Rule,
    Split,
    frame_action,
    phrase_rules,
)
from .stack import Decision, Emit, FrameStack
from .targets import Submission, Target
from .vocabulary import Vocabulary

__all__ = ["MODES", "BaseFrame", "FrameKit", "RouterState", "Settings", "VoiceRouter"]

_LOGGER = logging.getLogger(__name__)

# The mode select's options: the listen modes, then the frames that can be on top.
MODES: Final = (
    ListenMode.WAKE_WORD.value,
    ListenMode.ALWAYS_LISTENING.value,
    "query",
    "dictation",
    "inventory",
    "confirm",
    "voice_picker",
)
_LISTEN_MODES: Final = frozenset(mode.value for mode in ListenMode)
_GATHERING: Final[dict[str, type[GatheringFrame]]] = {
    frame.kind: frame for frame in (QueryFrame, DictationFrame, InventoryFrame)
}


@dataclass(frozen=True, slots=True)
class Settings:
    """What the user configures (options flow) for one satellite's router.

    Timers in seconds; None switches one off.
    """

    vocabulary: Vocabulary = field(default_factory=Vocabulary)
    replies: Replies = field(default_factory=Replies)
    listen_mode: ListenMode = ListenMode.WAKE_WORD  # at start-up
    query_silence_s: float | None = 3.0
    inventory_silence_s: float | None = 120.0
    confirm_timeout_s: float | None = 20.0
    picker_timeout_s: float | None = 30.0


class FrameKit:
    """Builds built-in frames; plans are compiled once and shared."""

    def __init__(
        self, settings: Settings, hooks: Hooks, extra_rules: Sequence[Rule] = ()
    ) -> None:
        """Compile every plan now.

        ``extra_rules`` go into the base frame after the built-in commands (e.g. a
        ``ClassifierRule``), before the wake phrase / agent catch-all.
        """
        self.settings = settings
        self.hooks = hooks
        vocabulary = settings.vocabulary
        self.deliver = Deliverer(self.confirm)
        self._plans: dict[str, Plan] = {
            kind: frame.build_plan(vocabulary) for kind, frame in _GATHERING.items()
        }
        self._confirm_plan = ConfirmFrame.build_plan(vocabulary, hooks.classify)
        self._picker_cancel = VoicePickerFrame.cancel_rules(vocabulary)
        self._base_plans = {
            mode: BaseFrame.build_plan(vocabulary, mode, extra_rules)
            for mode in ListenMode
        }

    def base_plan(self, mode: ListenMode) -> Plan:
        """The base frame's plan in ``mode``."""
        return self._base_plans[mode]

    def base(self) -> BaseFrame:
        """A base frame in the configured start-up listen mode."""
        return BaseFrame(self, self.settings.listen_mode)

    def gathering(self, kind: str, target: Target | None = None) -> GatheringFrame:
        """A query, dictation or inventory frame; ``target`` overrides the hooks'."""
        silence = {
            "query": self.settings.query_silence_s,
            "inventory": self.settings.inventory_silence_s,
        }.get(kind)
        return _GATHERING[kind](
            self._plans[kind],
            target=target or self.hooks.target(kind),
            deliver=self.deliver,
            replies=self.settings.replies,
            silence_s=silence,
        )

    def voice_picker(self, voices: Sequence[Voice]) -> VoicePickerFrame:
        """A picker offering ``voices``."""
        return VoicePickerFrame(
            voices,
            cancel=self._picker_cancel,
            set_voice=self.hooks.set_voice,
            replies=self.settings.replies,
            timeout_s=self.settings.picker_timeout_s,
        )

    def confirm(self, question: str, on_yes: PendingAction) -> ConfirmFrame:
        """A confirm frame for ``on_yes``."""
        return ConfirmFrame(
            question,
            on_yes,
            plan=self._confirm_plan,
            replies=self.settings.replies,
            timeout_s=self.settings.confirm_timeout_s,
        )


class BaseFrame(Frame):
    """The bottom frame: modes, shortcuts, starting other frames, the agent."""

    def __init__(self, kit: FrameKit, mode: ListenMode) -> None:
        """Starts in ``mode``."""
        super().__init__("base", kit.base_plan(mode))
        self.kit = kit
        self.mode = mode

    @staticmethod
    def build_plan(
        vocabulary: Vocabulary, mode: ListenMode, extra_rules: Sequence[Rule] = ()
    ) -> Plan:
        """Commands and shortcuts, extra rules, then wake phrase or agent."""
        rules: list[Rule] = [
            *phrase_rules("what_mode", vocabulary["base.what_mode"], _what_mode),
            *phrase_rules(
                "always_listening", vocabulary["base.always_listening"], _always
            ),
            *phrase_rules(
                "wake_word_mode", vocabulary["base.wake_word"], _wake_word_mode
            ),
            *phrase_rules(
                "switch_voice", vocabulary["base.switch_voice"], _switch_voice
            ),
            *phrase_rules("shortcut", vocabulary.shortcuts, _shortcut),
            PhraseRule("start_dictation", vocabulary["base.start_dictation"], _start),
            PhraseRule("start_inventory", vocabulary["base.start_inventory"], _start),
        ]
        if mode is ListenMode.ALWAYS_LISTENING:
            # Speech without a wake phrase is never a command (the TV may say
            # one): commands, extra rules too, count only below the query a wake
            # phrase opened. Extra rules are copied: the other mode's plan
            # shares them.
            rules += map(copy.copy, extra_rules)
            for rule in rules:
                rule.covered_only = True
            rules.append(
                PhraseRule("wake", vocabulary["base.wake"], _wake, at="anywhere")
            )
        else:
            rules += [*extra_rules, CatchAllRule("agent", _agent, top_only=True)]
        return Plan(rules)

    @property
    def replies(self) -> Replies:
        """The kit's replies."""
        return self.kit.settings.replies

    def mode_name(self, mode: ListenMode | None = None) -> str:
        """How a listen mode is spoken of."""
        mode = mode or self.mode
        if mode is ListenMode.ALWAYS_LISTENING:
            return self.replies.always_listening_mode
        return self.replies.wake_word_mode

    def open(self, frame: Frame) -> None:
        """Push ``frame`` on top.

        An empty query on top (opened by a wake phrase alone) is replaced rather
        than left waiting underneath.
        """
        top = self.stack.top
        if isinstance(top, QueryFrame) and not top.items:
            self.stack.pop(top)
        self.stack.push(frame)

    async def switch(self, mode: ListenMode) -> Outcome:
        """Change the listen mode (tells the satellite through the hook first)."""
        name = self.mode_name(mode)
        if mode is self.mode:
            return Outcome(
                speak=self.replies.mode_already.format(mode=name), reason="unchanged"
            )
        if self.kit.hooks.set_listen_mode is not None:
            try:
                await self.kit.hooks.set_listen_mode(mode)
            except Exception as err:
                _LOGGER.exception("Switching to %s failed", mode)
                return Outcome(
                    speak=self.replies.mode_failed or None, reason=f"failed: {err}"
                )
        self.mode = mode
        self.plan = self.kit.base_plan(mode)
        return Outcome(
            speak=self.replies.mode_set.format(mode=name), reason=f"now {mode}"
        )

    async def start(self, kind: str, target: Target | None = None) -> Outcome:
        """Open a query, dictation, inventory or voice picker frame."""
        if kind == "voice_picker":
            return await self._offer_voices()
        frame = self.kit.gathering(kind, target)
        self.open(frame)
        started = {
            "dictation": self.replies.dictation_started,
            "inventory": self.replies.inventory_started,
        }.get(kind)
        return Outcome(speak=started or None, reason=f"opened {kind}")

    async def _offer_voices(self) -> Outcome:
        lister = self.kit.hooks.list_voices
        voices = list(await lister()) if lister is not None else []
        if not voices:
            return Outcome(
                speak=self.replies.no_voices or None, reason="no voices offered"
            )
        picker = self.kit.voice_picker(voices)
        self.open(picker)
        return Outcome(speak=picker.prompt(), reason=f"offered {len(voices)} voice(s)")

    # -- rule actions ------------------------------------------------------------------

    def on_what_mode(self, hit: Hit[BaseFrame]) -> Outcome:
        """Say the listen mode, and the frame on top if it is not this one."""
        top = self.stack.top
        if top is self:
            speech = self.replies.mode.format(mode=self.mode_name())
        else:
            speech = self.replies.mode_in_frame.format(
                mode=self.mode_name(), frame=top.title
            )
        return Outcome(speak=speech, reason=f"{self.mode}, top {top.name}")

    async def on_always_listening(self, hit: Hit[BaseFrame]) -> Outcome:
        """Switch to always-listening mode."""
        return await self.switch(ListenMode.ALWAYS_LISTENING)

    async def on_wake_word_mode(self, hit: Hit[BaseFrame]) -> Outcome:
        """Switch to wake-word mode."""
        return await self.switch(ListenMode.WAKE_WORD)

    async def on_shortcut(self, hit: Hit[BaseFrame]) -> Outcome:
        """Run the shortcut's action at once; no agent involved."""
        action_id: str = hit.payload
        runner = self.kit.hooks.run_shortcut
        if runner is None:
            return Outcome(reason=f"{action_id}: no shortcut runner")
        try:
            reply = await runner(action_id)
        except Exception as err:
            _LOGGER.exception("Shortcut %s failed", action_id)
            return Outcome(
                speak=self.replies.shortcut_failed or None,
                reason=f"{action_id} failed: {err}",
            )
        return Outcome(speak=reply, reason=f"ran {action_id}")

    async def on_start(self, hit: Hit[BaseFrame]) -> Outcome:
        """Start dictation / inventory; the rest of the utterance goes into it."""
        split: Split = hit.payload
        kind = hit.rule.name.removeprefix("start_")
        opened = await self.start(kind)
        return await self._then(opened, split.after)

    async def on_switch_voice(self, hit: Hit[BaseFrame]) -> Outcome:
        """Open the voice picker."""
        return await self.start("voice_picker")

    async def on_wake(self, hit: Hit[BaseFrame]) -> Outcome:
        """A wake phrase (always listening): open a query; the rest goes into it.

        With a query already open (the phrase reached the base through its
        CHECK_PARENT), the phrase is dropped and the rest goes into that query.
        """
        split: Split = hit.payload
        if isinstance(self.stack.top, QueryFrame):
            return await self._then(Outcome(reason="query already open"), split.after)
        self.open(self.kit.gathering("query"))
        return await self._then(Outcome(reason="opened query"), split.after)

    async def woken(self, text: str) -> Outcome:
        """The satellite's wake word in always-listening mode: a query with ``text``."""
        self.open(self.kit.gathering("query"))
        return await self._then(Outcome(reason="woken by the wake word"), text)

    async def on_agent(self, hit: Hit[BaseFrame]) -> Outcome:
        """Wake-word mode: the request goes to the agent (maybe after a "yes")."""
        submission = Submission(self.name, (hit.payload,), reason="wake-word request")
        return await self.kit.deliver(
            self, self.kit.hooks.agent, submission, close=False
        )

    async def _then(self, first: Outcome, rest: str) -> Outcome:
        """Dispatch ``rest`` (if it has real words) after ``first``."""
        if not hear(rest).real:
            return first
        then = await self.stack.forward(rest)
        speech = " ".join(part for part in (first.speak, then.speak) if part)
        return Outcome(
            speak=speech or None,
            agent_text=then.agent_text,
            reason=f"{first.reason}; {then.reason}",
        )


_what_mode = frame_action(BaseFrame.on_what_mode)
_always = frame_action(BaseFrame.on_always_listening)
_wake_word_mode = frame_action(BaseFrame.on_wake_word_mode)
_switch_voice = frame_action(BaseFrame.on_switch_voice)
_shortcut = frame_action(BaseFrame.on_shortcut)
_start = frame_action(BaseFrame.on_start)
_wake = frame_action(BaseFrame.on_wake)
_agent = frame_action(BaseFrame.on_agent)


@dataclass(frozen=True, slots=True)
class RouterState:
    """For entities: the mode select, the accumulated-length sensor."""

    mode: str  # one of MODES: the top frame, or the listen mode on the base
    listen_mode: ListenMode
    stack: tuple[str, ...]  # base first
    gathered_chars: int  # text gathered by the topmost gathering frame


class VoiceRouter:
    """One satellite's router with the built-in frames.

    Create one per satellite; feed it every transcript (``await
    router(utterance)``). Timer decisions (silence, timeouts) go to ``emit``;
    listeners hear about every change.
    """

    MODES: ClassVar = MODES

    def __init__(
        self,
        settings: Settings | None = None,
        hooks: Hooks | None = None,
        *,
        clock: Clock,
        emit: Emit | None = None,
        extra_rules: Sequence[Rule] = (),
        name: str = "voicestack",
    ) -> None:
        """Build the kit and the stack (base frame in the start-up listen mode)."""
        self.kit = FrameKit(settings or Settings(), hooks or Hooks(), extra_rules)
        self.base = self.kit.base()
        self.frames = FrameStack(self.base, clock=clock, emit=emit, name=name)

    async def __call__(self, utterance: Utterance) -> Route:
        """The routing hook.

        In always-listening mode a request the satellite's own wake word started
        counts as woken: its transcript lacks the wake phrase (the satellite cut
        it off), so it goes into a query as if the phrase had been said.
        """
        if (
            utterance.wake_word is not None
            and self.base.mode is ListenMode.ALWAYS_LISTENING
            and self.frames.top is self.base
        ):
            decision = await self.frames.perform(
                "wake_word", partial(self.base.woken, utterance.text), by="base"
            )
            return decision.route()
        return await self.frames(utterance)

    async def dispatch(self, text: str) -> Decision:
        """Route one transcript; the full decision."""
        return await self.frames.dispatch(text)

    # -- state ------------------------------------------------------------------------

    @property
    def listen_mode(self) -> ListenMode:
        """The base frame's listen mode."""
        return self.base.mode

    @property
    def mode(self) -> str:
        """The mode select's state: the top frame, or the listen mode."""
        top = self.frames.top
        return self.base.mode.value if top is self.base else top.name

    def state(self) -> RouterState:
        """A snapshot for entities."""
        gathering = [f for f in self.frames.stack if isinstance(f, GatheringFrame)]
        return RouterState(
            mode=self.mode,
            listen_mode=self.base.mode,
            stack=tuple(frame.name for frame in self.frames.stack),
            gathered_chars=len(gathering[-1].gathered()) if gathering else 0,
        )

    # -- requests from Home Assistant (serialized with speech, explained) ---------------

    async def select_mode(self, mode: str) -> Decision:
        """The mode select.

        A listen mode closes every frame and switches; a frame already on the
        stack comes to the top; another frame is opened on top.

        ``confirm`` cannot be selected (it needs a pending action): ValueError.
        """
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}; one of {', '.join(MODES)}")
        if mode == "confirm":
            raise ValueError("confirm opens by itself when an action needs a yes")

        async def select() -> Outcome:
            if mode in _LISTEN_MODES:
                closed = self.frames.pop_to_base()
                switched = await self.base.switch(ListenMode(mode))
                return Outcome(
                    speak=switched.speak, reason=f"closed {closed}; {switched.reason}"
                )
            return await self._bring_up(mode)

        return await self.frames.perform(f"select {mode}", select)

    async def _bring_up(self, kind: str, target: Target | None = None) -> Outcome:
        """An open frame of ``kind`` comes to the top (as it is); else one opens.

        Starting dictation while dictating must not stack a second dictation.
        """
        on_stack = [frame for frame in self.frames.stack if frame.name == kind]
        if not on_stack:
            return await self.base.start(kind, target)
        above = self.frames.stack[self.frames.stack.index(on_stack[-1]) + 1 :]
        if above:
            self.frames.pop(above[0])
        return Outcome(reason=f"{kind} already open, now on top")

    async def start(self, kind: str, target: Target | None = None) -> Decision:
        """Open a frame on top (``voicestack.start_dictation`` etc.).

        ``kind``: ``query``, ``dictation``, ``inventory`` (optionally submitting to
        ``target``) or ``voice_picker``. A frame of that kind already open comes
        to the top instead, keeping its content and target.
        """
        if kind not in (*_GATHERING, "voice_picker"):
            raise ValueError(f"cannot start {kind!r}")
        return await self.frames.perform(
            f"start {kind}", lambda: self._bring_up(kind, target)
        )

    async def abort(self) -> Decision:
        """Close every frame above the base; nothing is submitted."""

        def abort() -> Outcome:
            closed = self.frames.pop_to_base()
            return Outcome(
                reason=f"closed {', '.join(closed) or 'nothing'}; nothing sent"
            )

        return await self.frames.perform("abort", abort)

    async def submit(self) -> Decision:
        """Submit the top frame's content now (if it gathers any)."""

        async def submit() -> Outcome:
            top = self.frames.top
            if not isinstance(top, GatheringFrame):
                return Outcome(reason=f"{top.name} gathers nothing")
            return await top.submit("submit requested")

        return await self.frames.perform("submit", submit)

    def hold_timer(self) -> None:
        """Speech is coming in (the satellite streams a request): no timer fires.

        A query's silence timer counts from the last transcript; without this,
        a long sentence still being said or transcribed would split the query.
        """
        self.frames.top.stop_timer()

    def resume_timer(self) -> None:
        """The request is over: the top frame's timer starts afresh if it waits."""
        top = self.frames.top
        if not top.timer_pending:
            top.restart_timer()

    async def set_listen_mode(self, mode: ListenMode) -> Decision:
        """Switch the listen mode without touching the frames."""
        return await self.frames.perform(
            f"listen {mode}", lambda: self.base.switch(mode)
        )

    async def ask(self, question: str, on_yes: PendingAction) -> Decision:
        """Push a confirm frame for ``on_yes`` (say ``question`` from the decision)."""

        def ask() -> Outcome:
            self.frames.push(self.kit.confirm(question, on_yes))
            return Outcome(speak=question, reason="asking")

        return await self.frames.perform("ask", ask)

    # -- plumbing ---------------------------------------------------------------------

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after every decision (entity updates); the remover."""
        return self.frames.add_listener(listener)

    async def settle(self) -> None:
        """Wait for timer decisions under way."""
        await self.frames.settle()

    async def close(self) -> None:
        """Unload: every frame closes, timers stop; nothing is submitted."""
        await self.frames.close()
