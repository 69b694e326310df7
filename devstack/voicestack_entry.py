"""What a loaded VoiceStack entry holds, for tests, benchmarks and the demo.

The integration keeps its satellite entity out of its runtime data (the entity
subscribes to the runtime, not the other way round); a measurement that needs
the entity or its voice loop finds it where Home Assistant keeps it.
"""

from __future__ import annotations

from homeassistant.components.assist_satellite.const import DATA_COMPONENT
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant

from custom_components.voicestack.assist_satellite import VoiceStackSatellite
from custom_components.voicestack.runtime import SatelliteRuntime


def runtime_of(entry: ConfigEntry) -> SatelliteRuntime:
    """The entry's runtime data (hub, speech, modes, announcements)."""
    runtime: SatelliteRuntime = entry.runtime_data
    return runtime


def satellite_entity(
    hass: HomeAssistant, entry: ConfigEntry
) -> VoiceStackSatellite | None:
    """The entry's assist satellite entity, once Home Assistant added it."""
    entity_id = runtime_of(entry).hub.satellite_entity_id()
    if entity_id is None:
        return None
    entity = hass.data[DATA_COMPONENT].get_entity(entity_id)
    return entity if isinstance(entity, VoiceStackSatellite) else None
