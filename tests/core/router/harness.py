"""A scripted-dialog harness for the router: text in, decisions out, manual time.

``Dialog`` wraps a ``VoiceRouter`` with a ``ManualClock``, recording targets and
hooks, so a test reads like the conversation it checks::

    await dialog.says("okay nabu", at="base/wake", stack="base > query")
    await dialog.silence(3.0)  # the clock moves; timer decisions run
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import EllipsisType
from typing import Any

from custom_components.voicestack.core.router import (
    Decision,
    Delivery,
    Hooks,
    Settings,
    Submission,
    Voice,
    VoiceRouter,
)
from custom_components.voicestack.core.router.hooks import ListenMode
from custom_components.voicestack.core.router.route import Route
from devstack.manual_clock import ManualClock


@dataclass
class RecordingTarget:
    """A target that records submissions (and can fail on demand)."""

    name: str
    speak: str | None = None
    agent: bool = False  # answer with agent_text, like the agent target
    fail: BaseException | None = None
    submissions: list[Submission] = field(default_factory=list)

    async def deliver(self, submission: Submission) -> Delivery:
        """Record, then fail or deliver."""
        if self.fail is not None:
            raise self.fail
        self.submissions.append(submission)
        return Delivery(
            speak=self.speak, agent_text=submission.text if self.agent else None
        )

    @property
    def texts(self) -> list[str]:
        """What arrived, as text."""
        return [submission.text for submission in self.submissions]


@dataclass
class Glue:
    """Records what the router asks of Home Assistant."""

    voices: Sequence[Voice] = ()
    shortcut_reply: str | None = "Done."
    shortcuts_run: list[str] = field(default_factory=list)
    voices_set: list[Voice] = field(default_factory=list)
    listen_modes: list[ListenMode] = field(default_factory=list)
    # What the (LLM) agent answers when asked to classify: text → label.
    readings: dict[str, str] | None = None
    prompts: list[str] = field(default_factory=list)

    async def run_shortcut(self, action_id: str) -> str | None:
        """A script ran."""
        self.shortcuts_run.append(action_id)
        return self.shortcut_reply

    async def list_voices(self) -> Sequence[Voice]:
        """The TTS engine's voices."""
        return self.voices

    async def set_voice(self, voice: Voice) -> None:
        """The satellite's voice changed."""
        self.voices_set.append(voice)

    async def set_listen_mode(self, mode: ListenMode) -> None:
        """The satellite was told."""
        self.listen_modes.append(mode)

    async def classify(self, prompt: str, labels: tuple[str, ...]) -> str:
        """The agent reads the answer at the end of the prompt's first line."""
        self.prompts.append(prompt)
        assert self.readings is not None
        answer = prompt.splitlines()[0].rpartition(": ")[2]
        if answer == "stall":
            await asyncio.sleep(3600)
        return self.readings.get(answer, "I am not sure")


class Dialog:
    """A ``VoiceRouter`` driven by text and a manual clock."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        glue: Glue | None = None,
        agent: Any = None,
        targets: dict[str, Any] | None = None,
        extra_rules: Sequence[Any] = (),
    ) -> None:
        """Agent and every gathering frame submit to recorders unless given."""
        self.clock = ManualClock()
        self.glue = glue or Glue()
        self.agent = agent or RecordingTarget("agent", agent=True)
        self.targets = targets or {
            name: RecordingTarget(name, speak=f"Saved {name}.")
            for name in ("dictation", "inventory")
        }
        self.emitted: list[Route] = []
        self.router = VoiceRouter(
            settings,
            Hooks(
                agent=self.agent,
                targets=self.targets,
                run_shortcut=self.glue.run_shortcut,
                list_voices=self.glue.list_voices,
                set_voice=self.glue.set_voice,
                set_listen_mode=self.glue.set_listen_mode,
                classify=self.glue.classify if self.glue.readings else None,
            ),
            clock=self.clock,
            emit=self._emit,
            extra_rules=extra_rules,
            name="test",
        )

    async def _emit(self, route: Route) -> None:
        self.emitted.append(route)

    async def says(
        self,
        text: str,
        *,
        at: str | None = None,
        stack: str | None = None,
        speak: str | EllipsisType | None = ...,
        agent: str | EllipsisType | None = ...,
    ) -> Decision:
        """Dispatch ``text``; check ``frame/rule``, stack (``a > b``), speech, agent."""
        decision = await self.router.dispatch(text)
        check(decision, at=at, stack=stack, speak=speak, agent=agent)
        return decision

    async def silence(self, seconds: float) -> list[Route]:
        """Let ``seconds`` pass; the routes emitted meanwhile."""
        before = len(self.emitted)
        self.clock.advance(seconds)
        await self.router.settle()
        return self.emitted[before:]

    async def always_listening(self) -> None:
        """Switch the base frame to always-listening mode."""
        await self.says("always listen", at="base/always_listening")

    @property
    def stack(self) -> str:
        """The frame names, base first."""
        return " > ".join(frame.name for frame in self.router.frames.stack)


def check(
    decision: Decision,
    *,
    at: str | None = None,
    stack: str | None = None,
    speak: str | EllipsisType | None = ...,
    agent: str | EllipsisType | None = ...,
) -> None:
    """Assert parts of a decision, showing its explanation when one fails."""
    explained = decision.explain()
    if at is not None:
        assert f"{decision.frame}/{decision.rule}" == at, explained
    if stack is not None:
        assert " > ".join(decision.stack) == stack, explained
    if speak is not ...:
        assert decision.speak == speak, explained
    if agent is not ...:
        assert decision.agent_text == agent, explained
