"""Pipeline and VAD-sensitivity selects, reusing Assist pipeline's own entities."""

from __future__ import annotations

from homeassistant.components.assist_pipeline.select import (
    AssistPipelineSelect,
    VadSensitivitySelect,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import DOMAIN
from .entity import VoiceStackSettingEntity
from .hub import SatelliteHub, VoiceStackConfigEntry

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """The pipeline and the VAD sensitivity the satellite's requests use."""
    hub = entry.runtime_data
    async_add_entities([PipelineSelect(hass, hub), VadSelect(hass, hub)])


class PipelineSelect(VoiceStackSettingEntity, AssistPipelineSelect):
    """Which Assist pipeline (STT, agent, TTS) the satellite uses."""

    def __init__(self, hass: HomeAssistant, hub: SatelliteHub) -> None:
        """Unique id ``<satellite>-pipeline``, like HA's own satellites."""
        AssistPipelineSelect.__init__(self, hass, DOMAIN, hub.satellite_id)
        VoiceStackSettingEntity.__init__(self, hub)


class VadSelect(VoiceStackSettingEntity, VadSensitivitySelect):
    """How long a pause ends the request."""

    def __init__(self, hass: HomeAssistant, hub: SatelliteHub) -> None:
        """Unique id ``<satellite>-vad_sensitivity``."""
        VadSensitivitySelect.__init__(self, hass, hub.satellite_id)
        VoiceStackSettingEntity.__init__(self, hub)

    async def async_select_option(self, option: str) -> None:
        """The satellite ends requests after the new quiet time too."""
        await super().async_select_option(option)
        self.hub.send_hello()
