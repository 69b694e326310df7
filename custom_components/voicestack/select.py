"""Selects: pipeline and VAD sensitivity (Assist pipeline's own) and the voice mode."""

from __future__ import annotations

from typing import cast

from homeassistant.components.assist_pipeline import vad
from homeassistant.components.assist_pipeline.select import (
    AssistPipelineSelect,
    VadSensitivitySelect,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .agent.config import is_agent_entry
from .agent.runtime import AgentRuntime
from .agent.select import async_setup_agent_selects
from .const import DOMAIN
from .core.router import MODES
from .entity import VoiceStackEntity, VoiceStackSettingEntity
from .hub import SatelliteHub
from .modes.mode_select import VoiceModeSelect
from .modes.voice_modes import VoiceModes
from .runtime import VoiceStackConfigEntry

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """The pipeline and the VAD sensitivity the satellite's requests use.

    An agent entry's selects are its devices' voice modes (``agent/select.py``).
    """
    if is_agent_entry(entry):
        async_setup_agent_selects(
            cast("AgentRuntime", entry.runtime_data), async_add_entities
        )
        return
    hub, modes = entry.runtime_data.hub, entry.runtime_data.modes
    async_add_entities(
        [PipelineSelect(hass, hub), VadSelect(hass, hub), ModeSelect(hub, modes)]
    )


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

    async def async_added_to_hass(self) -> None:
        """Tell the satellite the restored choice.

        It may have been told the default when it connected first.
        """
        await super().async_added_to_hass()
        self._tell_satellite()

    async def async_select_option(self, option: str) -> None:
        """The satellite ends requests after the new quiet time too."""
        await super().async_select_option(option)
        self._tell_satellite()

    def _tell_satellite(self) -> None:
        # Home Assistant's select starts at the default and never goes back to None.
        option = self.current_option or vad.VadSensitivity.DEFAULT
        self.hub.send_hello(vad.VadSensitivity.to_seconds(option))


class ModeSelect(VoiceStackEntity, VoiceModeSelect):
    """The satellite's voice mode (``modes/mode_select.py``); says the result."""

    def __init__(self, hub: SatelliteHub, modes: VoiceModes) -> None:
        """Every mode is offered; the router decides what selecting one does."""
        super().__init__(hub)
        self.modes = modes
        self._attr_options = list(MODES)

    @property
    def voice_modes(self) -> VoiceModes:
        """The satellite's."""
        return self.modes
