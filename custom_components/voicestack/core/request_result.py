"""Did a request work, and if not, where did it fail? The debug panel's answer.

A recording's ``result`` is ``success``, ``failure`` or ``empty`` (nobody
spoke, speech-to-text found no words). A failure names its stage the way Home
Assistant's own pipeline debug view does (wake, stt, intent, tts, playback),
with a code and a message: an engine's error, the conversation agent's error
response (``no_intent_match``, ``no_valid_targets``), an action still waiting
for its yes (``awaiting_confirmation``), a request cancelled or failed in the
stage it was in, a playback that never ended.

Home Assistant-free: ``core/recording.py`` asks it when it writes the metadata.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final

__all__ = [
    "AWAITING_CONFIRMATION",
    "FailedStage",
    "Result",
    "failure_of",
    "stage_failing_as",
    "stage_of_error",
]


class Result(StrEnum):
    """Did the request work? The debug panel's chip."""

    SUCCESS = "success"  # answered, acted, or handed to a mode
    FAILURE = "failure"  # a stage failed, the agent said no, nothing ran
    EMPTY = "empty"  # nobody spoke, or speech-to-text found no words


class FailedStage(StrEnum):
    """The stage a request failed in, as Home Assistant's debug view names it."""

    WAKE = "wake"
    STT = "stt"
    INTENT = "intent"  # the router, a mode, the conversation agent
    TTS = "tts"
    PLAYBACK = "playback"


# The recording's timed stages, by the stage a failure in them is told as.
_FAILS_AS: Final = {
    "wake": FailedStage.WAKE,
    "stream": FailedStage.STT,
    "stt": FailedStage.STT,
    "route": FailedStage.INTENT,
    "agent": FailedStage.INTENT,
    "speech": FailedStage.TTS,
}
# Home Assistant's pipeline error codes start with their stage ("stt-stream-failed").
_CODE_PREFIXES: Final = {
    "wake": FailedStage.WAKE,
    "stt": FailedStage.STT,
    "intent": FailedStage.INTENT,
    "tts": FailedStage.TTS,
}
# A confirm frame left on top: the action waits for a yes and has not run.
AWAITING_CONFIRMATION: Final = "awaiting_confirmation"
MAX_MESSAGE: Final = 300  # characters of a failure's message kept


def stage_failing_as(timed_stage: str) -> FailedStage:
    """The stage a failure in one of the recording's timed stages is told as."""
    return _FAILS_AS.get(timed_stage, FailedStage.INTENT)


def stage_of_error(code: str | None) -> FailedStage:
    """The stage of a Home Assistant pipeline error code (speech-to-text if unknown).

    VoiceStack runs the pipeline through speech-to-text only, so an error
    without a known prefix happened there.
    """
    prefix = (code or "").partition("-")[0]
    return _CODE_PREFIXES.get(prefix, FailedStage.STT)


def failure(stage: FailedStage, code: str | None, message: str) -> dict[str, Any]:
    """A failure as the metadata keeps it (the message cut to ``MAX_MESSAGE``)."""
    return {"stage": stage, "code": code, "message": message[:MAX_MESSAGE]}


def failure_of(
    *,
    told: dict[str, Any] | None,
    ended_early: str | None,
    last_stage: str | None,
    agent: dict[str, Any] | None,
    stack: tuple[str, ...] | None,
    response: str,
) -> dict[str, Any] | None:
    """Where a request that was not empty failed, if it did (None: it worked).

    ``told``: the failure recorded as it happened (an engine's error, a stage
    that raised); ``ended_early``: the outcome of a request that failed or was
    cancelled (None otherwise), ``last_stage`` the timed stage it was in;
    ``agent``: the agent's answer; ``stack``: the mode stack after the route;
    ``response``: what was said back.
    """
    if told is not None:
        return told
    if agent is not None and agent["response_type"] == "error":
        return failure(FailedStage.INTENT, agent["error_code"], response)
    if ended_early is not None:
        stage = FailedStage.STT if last_stage is None else stage_failing_as(last_stage)
        return failure(stage, ended_early, "")
    if agent is None and stack is not None and stack[-1:] == ("confirm",):
        return failure(
            FailedStage.INTENT,
            AWAITING_CONFIRMATION,
            "the action waits for a yes: it did not run",
        )
    return None
