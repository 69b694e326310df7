"""Selects: pipeline and VAD sensitivity (Assist pipeline's own) and the voice mode."""

from __future__ import annotations

from homeassistant.components.assist_pipeline import vad
from homeassistant.components.assist_pipeline.select import (
    AssistPipelineSelect,
    VadSensitivitySelect,
)
from homeassistant.components.select import SelectEntity, SelectEntityDescription
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import DOMAIN
from .core.router import MODES
from .entity import VoiceStackEntity, VoiceStackSettingEntity
from .hub import SatelliteHub
from .modes.voice_modes import VoiceModes
from .runtime import VoiceStackConfigEntry

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """The pipeline and the VAD sensitivity the satellite's requests use."""
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


class ModeSelect(VoiceStackEntity, SelectEntity):
    """The voice mode: the frame on top, or the listen mode when none is open.

    Choosing a listen mode closes every frame; choosing a frame opens it (or
    brings it to the top), as if the words had been said. ``confirm`` only opens
    by itself, when an action needs a yes.
    """

    entity_description = SelectEntityDescription(key="mode", translation_key="mode")

    def __init__(self, hub: SatelliteHub, modes: VoiceModes) -> None:
        """Every mode is offered; the router decides what selecting one does."""
        super().__init__(hub)
        self.modes = modes
        self._attr_options = list(MODES)

    @property
    def current_option(self) -> str:
        """The router's mode."""
        return self.modes.router.mode

    @property
    def extra_state_attributes(self) -> dict[str, object]:
        """The whole stack, base first, and the listen mode."""
        state = self.modes.router.state()
        return {"stack": list(state.stack), "listen_mode": str(state.listen_mode)}

    async def async_select_option(self, option: str) -> None:
        """Push or pop frames; the satellite says the result."""
        if option == "confirm":
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="confirm_not_selectable"
            )
        await self.modes.request(self.modes.router.select_mode(option))
