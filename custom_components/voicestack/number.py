"""Per satellite: how long speech must last to interrupt an answer (barge-in).

Shorter interrupts sooner; too short and a cough, or what is left of the
answer's own echo, pauses it (docs/barge-in.md, "Tuning").
"""

from __future__ import annotations

from homeassistant.components.number import (
    NumberDeviceClass,
    NumberEntityDescription,
    NumberMode,
    RestoreNumber,
)
from homeassistant.const import EntityCategory, UnitOfTime
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from voicestack_protocol import MIN_SPEECH_S

from .barge_in.control import BargeInControl
from .entity import VoiceStackSettingEntity
from .hub import SatelliteHub
from .runtime import VoiceStackConfigEntry

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """The barge-in minimum speech duration."""
    runtime = entry.runtime_data
    async_add_entities([MinSpeechNumber(runtime.hub, runtime.barge_in)])


class MinSpeechNumber(VoiceStackSettingEntity, RestoreNumber):
    """Seconds of speech over an answer before it pauses; survives restarts."""

    entity_description = NumberEntityDescription(
        key="barge_in_min_speech",
        translation_key="barge_in_min_speech",
        entity_category=EntityCategory.CONFIG,
        device_class=NumberDeviceClass.DURATION,
        native_unit_of_measurement=UnitOfTime.SECONDS,
        native_min_value=MIN_SPEECH_S[0],
        native_max_value=MIN_SPEECH_S[1],
        native_step=0.05,
        mode=NumberMode.BOX,
    )

    def __init__(self, hub: SatelliteHub, control: BargeInControl) -> None:
        """Set ``control``'s minimum speech duration."""
        super().__init__(hub)
        self._control = control

    async def async_added_to_hass(self) -> None:
        """Restore the last value (a value out of range is not restored)."""
        await super().async_added_to_hass()
        last = await self.async_get_last_number_data()
        value = last.native_value if last is not None else None
        if value is not None and MIN_SPEECH_S[0] <= value <= MIN_SPEECH_S[1]:
            self._control.update(min_speech_s=float(value))

    @property
    def native_value(self) -> float:
        """The minimum speech duration in seconds."""
        return self._control.settings.min_speech_s

    async def async_set_native_value(self, value: float) -> None:
        """Use ``value`` from the next answer on (the satellite hears it at once)."""
        self._control.update(min_speech_s=round(value, 3))
        self.async_write_ha_state()
