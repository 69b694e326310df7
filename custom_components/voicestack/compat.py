"""The one place that reaches into Home Assistant beyond its public API.

VoiceStack supports Home Assistant 2026.3.4 to 2026.11 (hacs.json;
docs/development.md says why). ``AssistSatelliteEntity`` offers no public way to
do three things a satellite that runs its own pipeline stages needs; each is
used here only, and tests/integration/test_compat.py fails when Home Assistant
changes what it relies on:

- ``_set_state``: the entity's state (idle, listening, processing, responding).
  HA sets it from pipeline events; VoiceStack's pipeline stops after STT, so the
  later states are VoiceStack's to set. All supported versions.
- ``_run_has_tts``: tells the base class that a response will follow the STT-only
  run, so its RUN_END does not set the state back to idle while the agent thinks.
  All supported versions.
- ``_conversation_id``: the conversation that ``start_conversation`` opened (with
  the announced question in its chat log) and that follow-ups continue. All
  supported versions.

And one private member of the default conversation agent:

- ``DefaultAgent._intent_cache``: the agent keeps each text's recognition (keyed
  by text, language, satellite and, in 2026.11, device). The sensitive-entity
  check recognizes the text with the same keys just before the agent gets it,
  so the agent finds the result there instead of recognizing again. Only its
  presence is read (``caches_recognition``): without it the check is extra work
  and gets a deadline. All supported versions.

One difference between the supported versions lives here too:
``async_accept_pipeline_from_satellite`` takes the request's ``context`` as a
keyword in 2026.11 (not in 2026.3.4, which reads the entity's recent context),
and so does ``chat_session.async_get_chat_session`` (its first context's user
owns the conversation; 2026.3.4 has no owner).
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from contextlib import AbstractContextManager
import inspect

from homeassistant.components.assist_pipeline import PipelineStage
from homeassistant.components.assist_satellite import AssistSatelliteEntity
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.components.conversation.default_agent import DefaultAgent
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import chat_session

_ACCEPTS_CONTEXT = (
    "context"
    in inspect.signature(
        AssistSatelliteEntity.async_accept_pipeline_from_satellite
    ).parameters
)

_SESSION_HAS_OWNER = (
    "context" in inspect.signature(chat_session.async_get_chat_session).parameters
)


def chat_session_for(
    hass: HomeAssistant, conversation_id: str | None, context: Context
) -> AbstractContextManager[chat_session.ChatSession]:
    """The chat session ``conversation_id``, owned by ``context``'s user (2026.11)."""
    if _SESSION_HAS_OWNER:
        return chat_session.async_get_chat_session(
            hass, conversation_id, context=context
        )
    return chat_session.async_get_chat_session(hass, conversation_id)


def set_satellite_state(
    entity: AssistSatelliteEntity, state: AssistSatelliteState
) -> None:
    """Set the satellite's state and write it (all supported versions)."""
    entity._set_state(state)  # noqa: SLF001


def expect_response_after_run(entity: AssistSatelliteEntity) -> None:
    """Keep the state past the STT-only run's end: a response follows."""
    entity._run_has_tts = True  # noqa: SLF001


def conversation_id(entity: AssistSatelliteEntity) -> str | None:
    """The conversation the next agent call continues."""
    return entity._conversation_id  # noqa: SLF001


def set_conversation_id(entity: AssistSatelliteEntity, value: str | None) -> None:
    """Continue (or, with None, end) a conversation."""
    entity._conversation_id = value  # noqa: SLF001


def caches_recognition(agent: DefaultAgent) -> bool:
    """The default agent keeps recognitions, so a second one for a text is free."""
    return hasattr(agent, "_intent_cache")


async def accept_pipeline_from_satellite(
    entity: AssistSatelliteEntity,
    audio_stream: AsyncIterable[bytes],
    *,
    start_stage: PipelineStage,
    end_stage: PipelineStage,
    wake_word_phrase: str | None,
    context: Context,
) -> None:
    """Run HA's pipeline for a request in ``context``, on every supported version."""
    if _ACCEPTS_CONTEXT:
        await entity.async_accept_pipeline_from_satellite(
            audio_stream,
            start_stage=start_stage,
            end_stage=end_stage,
            wake_word_phrase=wake_word_phrase,
            context=context,
        )
        return
    # 2026.3.4 keeps a context set within the last few seconds.
    entity.async_set_context(context)
    await entity.async_accept_pipeline_from_satellite(
        audio_stream,
        start_stage=start_stage,
        end_stage=end_stage,
        wake_word_phrase=wake_word_phrase,
    )
