"""The base of every VoiceStack entity: one device per satellite.

Availability follows the link: entities are unavailable while disconnected.
"""

from __future__ import annotations

from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import Entity

from .const import DOMAIN
from .hub import SatelliteHub


class VoiceStackEntity(Entity):
    """An entity of one satellite; unavailable while it is disconnected."""

    _attr_has_entity_name = True
    _attr_should_poll = False

    def __init__(self, hub: SatelliteHub) -> None:
        """Key the unique id on the satellite id and the description key."""
        self.hub = hub
        self._attr_unique_id = f"{hub.satellite_id}-{self.entity_description.key}"
        self._attr_device_info = DeviceInfo(identifiers={(DOMAIN, hub.satellite_id)})

    @property
    def available(self) -> bool:
        """Only while the satellite is connected."""
        return self.hub.connected

    async def async_added_to_hass(self) -> None:
        """Follow the hub's changes."""
        await super().async_added_to_hass()
        self.async_on_remove(self.hub.async_add_listener(self._hub_changed))

    def _hub_changed(self) -> None:
        """Default: availability may have changed."""
        self.async_write_ha_state()


class VoiceStackSettingEntity(VoiceStackEntity):
    """A setting kept in Home Assistant: usable while the satellite is away.

    (It is applied when the satellite is back; an unavailable VAD select would
    also break Home Assistant's own lookup of the sensitivity.)
    """

    @property
    def available(self) -> bool:
        """Always."""
        return True
