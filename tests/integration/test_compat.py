"""What compat.py relies on in Home Assistant still holds on this version.

compat.py is the only module that touches private members of
``AssistSatelliteEntity`` and of the default conversation agent; these tests
fail first when Home Assistant changes one of them, on each version the suite
runs on.
"""

from __future__ import annotations

import dataclasses
import inspect

from homeassistant.components.assist_satellite import AssistSatelliteEntity
from homeassistant.components.conversation.default_agent import (
    DefaultAgent,
    IntentCacheKey,
)
from homeassistant.core import HomeAssistant

from custom_components.voicestack import compat


def test_the_state_setter_exists_and_writes_the_state() -> None:
    source = inspect.getsource(AssistSatelliteEntity._set_state)
    assert "async_write_ha_state" in source
    assert "tts_response_finished" in dir(AssistSatelliteEntity)


def test_run_has_tts_keeps_the_state_at_the_end_of_a_run() -> None:
    assert AssistSatelliteEntity._run_has_tts is False
    source = inspect.getsource(AssistSatelliteEntity._internal_on_pipeline_event)
    assert "if not self._run_has_tts:" in source


def test_the_conversation_id_is_the_one_start_conversation_opens() -> None:
    assert AssistSatelliteEntity._conversation_id is None
    start = inspect.getsource(AssistSatelliteEntity.async_internal_start_conversation)
    assert "self._conversation_id = session.conversation_id" in start


def test_the_pipeline_call_matches_what_compat_passes() -> None:
    parameters = inspect.signature(
        AssistSatelliteEntity.async_accept_pipeline_from_satellite
    ).parameters
    assert {"start_stage", "end_stage", "wake_word_phrase"} <= set(parameters)
    assert ("context" in parameters) == compat._ACCEPTS_CONTEXT


async def test_the_default_agent_keeps_recognitions_by_the_keys_the_check_uses(
    hass: HomeAssistant,
) -> None:
    """The sensitive check recognizes a text just before the agent does."""
    agent = DefaultAgent(hass)
    keys = {field.name for field in dataclasses.fields(IntentCacheKey)}

    assert compat.caches_recognition(agent)
    assert {"text", "language", "satellite_id"} <= keys
    assert keys <= {"text", "language", "satellite_id", "device_id"}
    source = inspect.getsource(DefaultAgent._recognize)
    assert "self._intent_cache.get(cache_key)" in source
