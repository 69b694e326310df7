"""What the Home Assistant glue plugs into the built-in frames (besides targets).

All optional: a router without hooks still routes (no shortcuts run, no voices
offered, the listen mode changes only inside the router).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from .rules import Classify
from .targets import AgentTarget, Target

__all__ = [
    "Hooks",
    "ListenMode",
    "ListenModeSetter",
    "ShortcutRunner",
    "Voice",
    "VoiceLister",
    "VoiceSetter",
]


class ListenMode(StrEnum):
    """How the satellite listens while the base frame is on top."""

    WAKE_WORD = "wake_word"  # one request per wake word; it goes to the agent
    ALWAYS_LISTENING = "always_listening"  # VAD segments; a wake phrase opens a query


@dataclass(frozen=True, slots=True)
class Voice:
    """A voice the pipeline's TTS engine offers."""

    voice_id: str
    name: str


# Run shortcut ``action_id`` (a script); what to say afterwards, if anything.
type ShortcutRunner = Callable[[str], Awaitable[str | None]]
# The voices to offer (the pipeline's TTS engine, language of the pipeline).
type VoiceLister = Callable[[], Awaitable[Sequence[Voice]]]
# Use ``voice`` for this satellite from the next sentence on.
type VoiceSetter = Callable[[Voice], Awaitable[None]]
# Tell the satellite to stream VAD segments (always listening) or not.
type ListenModeSetter = Callable[[ListenMode], Awaitable[None]]


@dataclass(slots=True)
class Hooks:
    """The glue's side of one satellite's router.

    ``targets`` maps a frame name ("query", "dictation", "inventory") to where its
    submissions go; a frame without an entry submits to ``agent``.
    """

    agent: Target = field(default_factory=AgentTarget)
    targets: Mapping[str, Target] = field(default_factory=dict)
    run_shortcut: ShortcutRunner | None = None
    list_voices: VoiceLister | None = None
    set_voice: VoiceSetter | None = None
    set_listen_mode: ListenModeSetter | None = None
    # Asks the pipeline's (LLM) agent to pick a label: answers the confirm frame
    # does not know word for word ("sure, go ahead").
    classify: Classify | None = None

    def target(self, frame: str) -> Target:
        """Where frame ``frame`` submits."""
        return self.targets.get(frame, self.agent)
