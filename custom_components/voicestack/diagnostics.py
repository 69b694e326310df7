"""Diagnostics: what the satellite said about itself, the link and the last playback.

The address is redacted: it identifies the user's network.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.const import CONF_HOST
from homeassistant.core import HomeAssistant

from .hub import VoiceStackConfigEntry

TO_REDACT = {CONF_HOST}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: VoiceStackConfigEntry
) -> dict[str, Any]:
    """Entry data (redacted), identity, link statistics, Speaker state."""
    hub = entry.runtime_data
    playback = hub.speaker.last
    return {
        "entry": async_redact_data(dict(entry.data), TO_REDACT),
        "satellite_id": hub.satellite_id,
        "info": hub.identity.info.to_dict(),
        "voicestack": asdict(hub.identity.voicestack)
        if hub.identity.voicestack
        else None,
        "link": {"connected": hub.connected, **asdict(hub.link.stats)},
        "muted": hub.muted,
        "assist_in_progress": hub.assist_in_progress,
        "speaker": {
            "busy": hub.speaker.busy,
            "last_playback": asdict(playback) if playback else None,
        },
        "announcements": hub.announcer.snapshot().as_dict() if hub.announcer else None,
    }
