"""The logbook platform describes both follow-up events, on the satellite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from homeassistant.components.logbook import (
    LOGBOOK_ENTRY_ENTITY_ID,
    LOGBOOK_ENTRY_MESSAGE,
    LOGBOOK_ENTRY_NAME,
)
from homeassistant.core import Event, HomeAssistant

from custom_components.voicestack import logbook
from custom_components.voicestack.const import (
    DOMAIN,
    EVENT_SESSION_ENDED,
    EVENT_TURN,
)

SATELLITE = "assist_satellite.kitchen"


def test_both_events_become_sentences_on_the_satellite(hass: HomeAssistant) -> None:
    described: dict[str, Callable[[Event], dict[str, Any]]] = {}

    def describe(domain: str, event_type: str, how: Callable[..., Any]) -> None:
        assert domain == DOMAIN
        described[event_type] = how

    logbook.async_describe_events(hass, describe)
    turn = described[EVENT_TURN](
        Event(
            EVENT_TURN,
            {
                "entity_id": SATELLITE,
                "text": "And tomorrow?",
                "turn": 2,
                "max_turns": 3,
                "frame": "base",
                "rule": "agent",
                "sent_to_agent": True,
                "listen_s": 8.0,
            },
        )
    )
    mode = described[EVENT_TURN](
        Event(
            EVENT_TURN,
            {"text": "Start dictation.", "turn": 1, "max_turns": 3}
            | {"frame": "base", "rule": "start_dictation", "listen_s": None},
        )
    )
    ended = described[EVENT_SESSION_ENDED](
        Event(
            EVENT_SESSION_ENDED,
            {"entity_id": SATELLITE, "turns": 1, "reason": "silence"},
        )
    )

    assert turn == {
        LOGBOOK_ENTRY_NAME: "VoiceStack",
        LOGBOOK_ENTRY_MESSAGE: "turn 2 of 3: “And tomorrow?” → agent, listening 8 s",
        LOGBOOK_ENTRY_ENTITY_ID: SATELLITE,
    }
    assert mode[LOGBOOK_ENTRY_MESSAGE] == (
        "turn 1 of 3: “Start dictation.” → base (start_dictation),"
        " waiting for the wake word"
    )
    assert LOGBOOK_ENTRY_ENTITY_ID not in mode
    assert ended[LOGBOOK_ENTRY_MESSAGE] == (
        "conversation ended after 1 turn: nobody spoke in the window"
    )
