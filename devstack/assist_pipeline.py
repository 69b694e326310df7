"""Assist as a user sets it up: the engines' entities and a preferred pipeline of them.

Shared by the tests' home and the demo's, so both run the same pipeline.
"""

from __future__ import annotations

from homeassistant.components.assist_pipeline import (
    Pipeline,
    async_create_default_pipeline,
    async_get_pipeline,
    async_update_pipeline,
)
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er

from devstack.errors import StackError
from devstack.servers import VOICE


def entity_of(hass: HomeAssistant, entry: ConfigEntry, domain: str) -> str:
    """The one ``domain`` entity that ``entry`` created."""
    entity_ids = [
        e.entity_id
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        if e.domain == domain
    ]
    if len(entity_ids) != 1:
        raise StackError(f"{entry.title}: expected one {domain} entity, {entity_ids}")
    return entity_ids[0]


async def create_preferred_pipeline(
    hass: HomeAssistant, stt_entry: ConfigEntry, tts_entry: ConfigEntry, name: str
) -> Pipeline:
    """A pipeline of the entries' STT and TTS with HA's default agent, preferred.

    wyoming-piper lists every downloadable voice as installed and Home Assistant
    would pick the first; the pipeline names the one on disk.
    """
    created = await async_create_default_pipeline(
        hass,
        stt_engine_id=entity_of(hass, stt_entry, "stt"),
        tts_engine_id=entity_of(hass, tts_entry, "tts"),
        pipeline_name=name,
    )
    if created is None:
        raise StackError("Home Assistant refused the Assist pipeline")
    await async_update_pipeline(hass, created, tts_voice=VOICE)
    hass.data[KEY_ASSIST_PIPELINE].pipeline_store.async_set_preferred_item(created.id)
    return async_get_pipeline(hass, created.id)
