"""The logbook platform describes the follow-up and barge-in events, on the satellite."""

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
    EVENT_BARGE_IN,
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


def test_a_barge_in_says_what_it_did_to_the_answer(hass: HomeAssistant) -> None:
    described: dict[str, Callable[[Event], dict[str, Any]]] = {}
    logbook.async_describe_events(
        hass, lambda _domain, kind, how: described.__setitem__(kind, how)
    )

    def line(**data: Any) -> str:
        entry = described[EVENT_BARGE_IN](Event(EVENT_BARGE_IN, data))
        return entry[LOGBOOK_ENTRY_MESSAGE]

    assert line(kind="resume", sentence=1, reason="other_speaker") == (
        "answer resumed at sentence 2: another voice, not the user"
    )
    assert line(kind="stop", sentence=0, reason="enrolled") == (
        "answer stopped at sentence 1: its user spoke; what they said is the next"
        " request"
    )
    assert line(kind="silence", sentence=None, reason="max_resumes") == (
        "answer stopped: interrupted too often"
    )
    assert line(
        kind="resume",
        sentence=0,
        reason="other_speaker",
        score=0.712,
        verdict="unsure",
        normalized=3.1,
    ) == (
        "answer resumed at sentence 1: another voice, not the user (voice unsure:"
        " score 0.71, normalized 3.1 against the cohort)"
    )
