"""Mute: the satellite stops listening for the wake word until unmuted."""

from __future__ import annotations

from typing import Any

from homeassistant.components.switch import SwitchEntity, SwitchEntityDescription
from homeassistant.const import STATE_ON, EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.restore_state import RestoreEntity

from .entity import VoiceStackSettingEntity
from .runtime import VoiceStackConfigEntry

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One mute switch per satellite."""
    async_add_entities([MuteSwitch(entry.runtime_data.hub)])


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
