"""The voice loop's events: every transcript, and every turn of a session.

``voicestack_utterance`` tells what became of a transcript (routed, empty,
buffered, stopped) and who decided; ``voicestack_turn`` tells one turn of a
follow-up session, with its answer, the window after it, why the session ended
if it did, and timings. Automations, the logbook and tests read them.
"""

from __future__ import annotations

from typing import Any, Protocol

from homeassistant.core import HomeAssistant

from ..const import EVENT_TURN, EVENT_UTTERANCE
from ..conversation.sessions import Conversations
from ..core.conversation.follow_up import Session
from ..core.conversation.turn import Turn
from ..core.router.route import Route
from ..hub import SatelliteHub


class _Satellite(Protocol):
    """What the events name: the entity and its conversation."""

    @property
    def entity_id(self) -> str:
        """The satellite entity."""

    @property
    def conversation_id(self) -> str | None:
        """The conversation the agent continues."""


class VoiceEvents:
    """Fires one satellite's utterance and turn events."""

    def __init__(
        self,
        hass: HomeAssistant,
        hub: SatelliteHub,
        conversations: Conversations,
        satellite: _Satellite,
    ) -> None:
        """Events name ``satellite`` and its device."""
        self._hass = hass
        self._hub = hub
        self._conversations = conversations
        self._satellite = satellite

    def routed(self, turn: Turn, route: Route) -> None:
        """``voicestack_utterance``: the router decided what ``turn`` meant."""
        self._utterance(
            turn,
            outcome="routed",
            frame=route.frame,
            rule=route.rule,
            reason=route.reason,
            trace=list(route.trace),
            listen=route.listen,
            sent_to_agent=route.agent_text is not None,
        )

    def unrouted(self, turn: Turn, outcome: str, reason: str) -> None:
        """``voicestack_utterance`` for a transcript the router never saw."""
        self._utterance(
            turn,
            outcome=outcome,
            frame=None,
            rule=None,
            reason=reason,
            trace=[],
            listen=False,
            sent_to_agent=False,
        )

    def turn(
        self,
        turn: Turn,
        session: Session,
        route: Route | None,
        response: str,
        listen_s: float | None,
    ) -> None:
        """``voicestack_turn``: one turn of a session, and why it ended if it did."""
        last_end = self._conversations.last_end
        ended = last_end is not None and last_end[0] == session.id
        self._hass.bus.async_fire(
            EVENT_TURN,
            {
                **self._about(turn),
                "session_id": session.id,
                "turn": session.turn,
                "max_turns": self._conversations.loop.status.max_turns,
                "frame": route.frame if route else None,
                "rule": route.rule if route else None,
                "sent_to_agent": route is not None and route.agent_text is not None,
                "response": response,
                "listen_s": listen_s,
                "fragments": turn.fragments,
                "buffering_next": self._conversations.buffer.armed,
                "session_ended": ended,
                "end_reason": str(last_end[1]) if ended and last_end else None,
                "timings": turn.timings(),
            },
        )

    def _utterance(self, turn: Turn, **decision: Any) -> None:
        self._hass.bus.async_fire(EVENT_UTTERANCE, {**self._about(turn), **decision})

    def _about(self, turn: Turn) -> dict[str, Any]:
        return {
            "entity_id": self._satellite.entity_id,
            "device_id": self._hub.device_id(),
            "text": turn.transcript,
            "wake_word": turn.wake_word,
            "conversation_id": self._satellite.conversation_id,
        }
