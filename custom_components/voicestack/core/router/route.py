"""What goes into the router (``Utterance``) and what comes out (``Route``).

Every transcript passes through one satellite's ``VoiceRouter``. A route always
says who decided, so ``voicestack_utterance`` events and debug logs can explain it.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Utterance:
    """One transcript from one satellite."""

    text: str
    satellite_id: str
    wake_word: str | None = None
    conversation_id: str | None = None


@dataclass(frozen=True, slots=True)
class Route:
    """What to do with an utterance, and which frame and rule decided it.

    ``agent_text`` is sent to the conversation agent (None: do not); ``speak``
    is said directly instead of (or before) the agent's answer. ``reason`` and
    ``trace`` explain the decision (what matched; the steps through the frame
    stack) for events and debug logs. ``listen``: the router expects more speech
    (a wake-word satellite should listen again without a wake word).
    ``changed``: the decision changed the mode stack (a mode opened, closed, or
    delivered what it gathered): the follow-up buffer arms after it.
    ``explain`` is the decision's one line (``Decision.explain``) and ``stack``
    the frame names afterwards, base first, for the debug panel's recordings.
    """

    frame: str
    rule: str
    agent_text: str | None
    speak: str | None = None
    reason: str = ""
    trace: tuple[str, ...] = ()
    listen: bool = False
    changed: bool = False
    # Descriptions of the decision, not part of it: routes compare without them.
    explain: str = field(default="", compare=False)
    stack: tuple[str, ...] = field(default=(), compare=False)
