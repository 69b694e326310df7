"""VoiceStack: a voice layer for Home Assistant that behaves."""

from __future__ import annotations

from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryNotReady

from .const import DESCRIBE_TIMEOUT_S, DOMAIN
from .core.wyoming_info import PeerUnreachableError, async_describe


@dataclass(slots=True)
class VoiceStackData:
    """What a loaded entry holds (``entry.runtime_data``)."""

    satellite_name: str
    satellite_version: str | None


type VoiceStackConfigEntry = ConfigEntry[VoiceStackData]


async def async_setup_entry(hass: HomeAssistant, entry: VoiceStackConfigEntry) -> bool:
    """Check the satellite answers, then hold what it told us."""
    try:
        info = await async_describe(
            entry.data[CONF_HOST], entry.data[CONF_PORT], DESCRIBE_TIMEOUT_S
        )
    except PeerUnreachableError as err:
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN,
            translation_key="cannot_connect",
            translation_placeholders={"error": str(err)},
        ) from err
    satellite = info.satellite
    entry.runtime_data = VoiceStackData(
        satellite_name=satellite.name if satellite else entry.title,
        satellite_version=satellite.version if satellite else None,
    )
    return True


async def async_unload_entry(hass: HomeAssistant, entry: VoiceStackConfigEntry) -> bool:
    """Nothing runs yet between setup and unload."""
    return True
