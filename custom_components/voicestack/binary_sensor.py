"""Connectivity and "assist in progress" of each satellite."""

from __future__ import annotations

from homeassistant.components.binary_sensor import (
    BinarySensorDeviceClass,
    BinarySensorEntity,
    BinarySensorEntityDescription,
)
from homeassistant.const import EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .entity import VoiceStackEntity
from .runtime import VoiceStackConfigEntry

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One of each per satellite."""
    hub = entry.runtime_data.hub
    async_add_entities([SatelliteConnected(hub), AssistInProgress(hub)])


class SatelliteConnected(VoiceStackEntity, BinarySensorEntity):
    """On while the satellite is connected and run by Home Assistant."""

    entity_description = BinarySensorEntityDescription(
        key="connected",
        device_class=BinarySensorDeviceClass.CONNECTIVITY,
        entity_category=EntityCategory.DIAGNOSTIC,
    )

    @property
    def available(self) -> bool:
        """Always: it reports the connection itself."""
        return True

    @property
    def is_on(self) -> bool:
        """Connected."""
        return self.hub.connected


class AssistInProgress(VoiceStackEntity, BinarySensorEntity):
    """On from the wake word until the response has been played."""

    entity_description = BinarySensorEntityDescription(
        key="assist_in_progress",
        translation_key="assist_in_progress",
        entity_registry_enabled_default=False,
    )

    @property
    def is_on(self) -> bool:
        """A request runs."""
        return self.hub.assist_in_progress
