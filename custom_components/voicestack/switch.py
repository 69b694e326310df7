"""Per satellite: mute, and whether its requests are recorded (the debug panel).

Mute: the satellite stops listening for the wake word until unmuted. Record
requests: every request's audio and what became of it is kept for the debug
panel (off by default: it keeps what people said, on disk).
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.switch import SwitchEntity, SwitchEntityDescription
from homeassistant.const import STATE_ON, EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.restore_state import RestoreEntity

from .entity import VoiceStackSettingEntity
from .hub import SatelliteHub
from .request_recorder import RequestRecorder
from .runtime import VoiceStackConfigEntry

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """A mute and a record switch per satellite."""
    runtime = entry.runtime_data
    async_add_entities(
        [MuteSwitch(runtime.hub), RecordRequestsSwitch(runtime.hub, runtime.recorder)]
    )


class MuteSwitch(VoiceStackSettingEntity, SwitchEntity, RestoreEntity):
    """Muted survives restarts and reconnects (the hub re-applies it)."""

    entity_description = SwitchEntityDescription(
        key="mute", translation_key="mute", entity_category=EntityCategory.CONFIG
    )

    async def async_added_to_hass(self) -> None:
        """Restore the last state."""
        await super().async_added_to_hass()
        state = await self.async_get_last_state()
        if state is not None and state.state == STATE_ON:
            await self.hub.async_set_muted(True)

    @property
    def is_on(self) -> bool:
        """Muted."""
        return self.hub.muted

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Mute."""
        await self.hub.async_set_muted(True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Unmute."""
        await self.hub.async_set_muted(False)


class RecordRequestsSwitch(VoiceStackSettingEntity, SwitchEntity, RestoreEntity):
    """Record every request (off by default); survives restarts."""

    entity_description = SwitchEntityDescription(
        key="record_requests",
        translation_key="record_requests",
        entity_category=EntityCategory.CONFIG,
    )

    def __init__(self, hub: SatelliteHub, recorder: RequestRecorder) -> None:
        """Turn ``recorder`` on and off."""
        super().__init__(hub)
        self._recorder = recorder

    async def async_added_to_hass(self) -> None:
        """Restore the last state."""
        await super().async_added_to_hass()
        state = await self.async_get_last_state()
        self._recorder.enabled = state is not None and state.state == STATE_ON

    @property
    def is_on(self) -> bool:
        """Requests are recorded."""
        return self._recorder.enabled

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Record from the next request on."""
        self._recorder.enabled = True
        self.async_write_ha_state()

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Record no more requests (the one running is still saved)."""
        self._recorder.enabled = False
        self.async_write_ha_state()
