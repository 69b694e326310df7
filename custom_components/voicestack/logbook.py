"""The logbook tells a follow-up conversation turn by turn, and each barge-in.

Each ``voicestack_turn`` becomes one line on the satellite ("turn 2 of 3: “and
tomorrow?” → agent, listening 8 s"), and each ``voicestack_session_ended`` one
line saying why the satellite stopped listening: what a user reads to find out
why the assistant is (or is not) still listening. Each ``voicestack_barge_in``
says what speech did to the answer ("answer resumed at sentence 2: another
voice"), so "why did it stop talking?" has an answer too. A request that came
to nothing (a false wake, nobody spoke) gets its own line, so "why did it not
answer?" has one as well (``log_empty_request``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from homeassistant.components.logbook import (
    LOGBOOK_ENTRY_ENTITY_ID,
    LOGBOOK_ENTRY_MESSAGE,
    LOGBOOK_ENTRY_NAME,
    async_log_entry,
)
from homeassistant.core import Event, HomeAssistant, callback

from .const import DOMAIN, EVENT_BARGE_IN, EVENT_SESSION_ENDED, EVENT_TURN

NAME = "VoiceStack"
# Why a session ended, in words.
END_REASONS = {
    "answered": "the answer needed no reply",
    "max_turns": "the turn limit was reached",
    "silence": "nobody spoke in the window",
    "stop_word": "a stop word was said",
    "wake_word": "a new wake word started another",
    "cancelled": "the request was cancelled",
}


# What a barge-in did, and why, in words.
BARGE_IN_KINDS = {
    "pause": "answer paused",
    "check": "answer held",
    "resume": "answer resumed",
    "stop": "answer stopped",
    "silence": "answer stopped",
    "timeout": "answer stopped",
}
BARGE_IN_REASONS = {
    "speech": "someone spoke over it",
    "enrolled": "its user spoke; what they said is the next request",
    "gate_off": "someone spoke (nobody is enrolled: it is taken as the user)",
    "other_speaker": "another voice, not the user",
    "nothing_left": "another voice, and the answer was over",
    "unsure": "not sure it was the user; checking whether they said a command",
    "unsure_command": "not sure it was the user, but a command: it is the next request",
    "not_a_command": "not sure it was the user, and no command",
    "max_resumes": "interrupted too often",
    "too_soon": "interrupted again too soon",
    "no_verdict": "no verdict on the voice in time",
}


# Why a request was empty, in words (``core.no_speech.EmptyReason``).
EMPTY_REASONS = {
    "no_speech": "nobody spoke after the wake word",
    "no_words": "speech-to-text found no words",
}


@callback
def log_empty_request(hass: HomeAssistant, entity_id: str, reason: str) -> None:
    """A request came to nothing: one line on the satellite saying why."""
    why = EMPTY_REASONS.get(reason, reason)
    message = f"nothing was asked: {why}; the request was dropped unanswered"
    async_log_entry(hass, NAME, message, DOMAIN, entity_id)


def describe_barge_in(data: Mapping[str, Any]) -> str:
    """One barge-in record: what happened to the answer, where, and why."""
    what = BARGE_IN_KINDS.get(data.get("kind", ""), str(data.get("kind")))
    if (sentence := data.get("sentence")) is not None:
        what += f" at sentence {sentence + 1}"
    why = BARGE_IN_REASONS.get(data.get("reason", ""), str(data.get("reason")))
    if (score := data.get("score")) is not None:
        why += f" (voice {data.get('verdict') or 'judged'}: score {score:.2f}"
        if (normalized := data.get("normalized")) is not None:
            why += f", normalized {normalized:.1f} against the cohort"
        why += ")"
    return f"{what}: {why}"


def describe_turn(data: Mapping[str, Any]) -> str:
    """One turn: what was said, where it went, what happens next."""
    said = f"“{data.get('text') or ''}”"
    if data.get("frame") is None:
        went = "ended the conversation"
    elif data.get("sent_to_agent"):
        went = "→ agent"
    else:
        went = f"→ {data['frame']} ({data.get('rule')})"
    next_step = (
        f"listening {data['listen_s']:g} s"
        if data.get("listen_s")
        else "waiting for the wake word"
    )
    return f"turn {data['turn']} of {data['max_turns']}: {said} {went}, {next_step}"


def describe_session_end(data: Mapping[str, Any]) -> str:
    """Why a session ended, after how many turns."""
    reason = END_REASONS.get(data.get("reason", ""), str(data.get("reason")))
    turns = data.get("turns", 0)
    return f"conversation ended after {turns} turn{'s' if turns != 1 else ''}: {reason}"


@callback
def async_describe_events(
    hass: HomeAssistant,
    async_describe_event: Callable[[str, str, Callable[[Event], dict[str, str]]], None],
) -> None:
    """Describe the follow-up and barge-in events."""

    def entry(
        describe: Callable[[Mapping[str, Any]], str],
    ) -> Callable[[Event], dict[str, str]]:
        @callback
        def logbook_entry(event: Event) -> dict[str, str]:
            described = {
                LOGBOOK_ENTRY_NAME: NAME,
                LOGBOOK_ENTRY_MESSAGE: describe(event.data),
            }
            if entity_id := event.data.get("entity_id"):
                described[LOGBOOK_ENTRY_ENTITY_ID] = entity_id
            return described

        return logbook_entry

    async_describe_event(DOMAIN, EVENT_TURN, entry(describe_turn))
    async_describe_event(DOMAIN, EVENT_SESSION_ENDED, entry(describe_session_end))
    async_describe_event(DOMAIN, EVENT_BARGE_IN, entry(describe_barge_in))
