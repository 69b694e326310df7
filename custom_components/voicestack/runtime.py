"""What one loaded satellite entry holds (``entry.runtime_data``).

Eight parts, each built on the ones before and none reaching back: the hub (link,
Speaker, shared state), barge-in (speech that interrupts a voice response), the
speech output (text to sound, through the Speaker), the voice modes (the router
and what it needs of Home Assistant), the follow-up sessions (conversations),
the satellite's announcements and the announcements its local scripts ask for,
and the recorder of its requests (the debug panel). ``__init__.py`` builds them
in that order; entities and actions take the parts they need from here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError

from .agent.config import is_agent_entry
from .announce.satellites import SatelliteAnnouncements
from .announce.socket_requests import SatelliteAnnounceRequests
from .barge_in.control import BargeInControl
from .const import DOMAIN
from .conversation.sessions import Conversations
from .hub import SatelliteHub, loaded_entry_for_entity
from .modes.voice_modes import VoiceModes
from .recording.recorder import RequestRecorder
from .request.speech_output import SpeechOutput


@dataclass(frozen=True, slots=True, kw_only=True)
class SatelliteRuntime:
    """The parts of one satellite while its entry is loaded."""

    hub: SatelliteHub
    speech: SpeechOutput
    modes: VoiceModes
    conversations: Conversations
    announcements: SatelliteAnnouncements
    announce_requests: SatelliteAnnounceRequests  # from the satellite's local scripts
    recorder: RequestRecorder  # its requests, for the debug panel
    barge_in: BargeInControl  # speech that interrupts its voice responses


type VoiceStackConfigEntry = ConfigEntry[SatelliteRuntime]


def runtime_for_entity(hass: HomeAssistant, entity_id: str) -> SatelliteRuntime | None:
    """The runtime behind ``entity_id`` if it is a loaded VoiceStack assist satellite."""
    entry: VoiceStackConfigEntry | None = loaded_entry_for_entity(hass, entity_id)
    return entry.runtime_data if entry is not None else None


def runtimes_for_entities(
    hass: HomeAssistant, entity_ids: Iterable[str]
) -> list[SatelliteRuntime]:
    """The runtimes behind ``entity_ids`` (loaded VoiceStack assist satellites).

    Anything else is the caller's mistake: a translated validation error.
    """
    runtimes = []
    for entity_id in entity_ids:
        runtime = runtime_for_entity(hass, entity_id)
        if runtime is None:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="not_a_satellite_entity",
                translation_placeholders={"entity_id": entity_id},
            )
        runtimes.append(runtime)
    return runtimes


def satellite_runtimes(hass: HomeAssistant) -> list[SatelliteRuntime]:
    """The runtimes of the loaded satellite entries (agent entries have none)."""
    return [
        entry.runtime_data
        for entry in hass.config_entries.async_loaded_entries(DOMAIN)
        if not is_agent_entry(entry)
    ]
