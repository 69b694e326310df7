"""VoiceStack: a voice layer for Home Assistant that behaves."""

from __future__ import annotations

from functools import partial
from typing import cast

from homeassistant.config_entries import SOURCE_IGNORE
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryNotReady
from homeassistant.helpers import config_validation as cv, device_registry as dr
from homeassistant.helpers.typing import ConfigType

from .agent.config import is_agent_entry
from .agent.entity import AgentConfigEntry
from .agent.setup import async_setup_agent_entry, async_unload_agent_entry
from .announce.service import async_add_satellite, async_setup_announcements
from .announce.socket_requests import SatelliteAnnounceRequests
from .barge_in.control import BargeInControl
from .const import DESCRIBE_TIMEOUT_S, DOMAIN, PLATFORMS
from .conversation.sessions import Conversations
from .core.identity import Identity, async_identify
from .core.wyoming_info import NotWyomingError, PeerUnreachableError
from .deferred_queue import DeferredQueueStore
from .hub import SatelliteHub
from .migration import async_migrate, async_remove_issues
from .modes.actions import async_setup_mode_actions
from .modes.satellite import SatelliteDevice
from .modes.voice_modes import VoiceModes
from .recording.api import async_setup_recording_api
from .recording.library import recording_library
from .recording.panel import (
    async_add_debug_panel,
    async_remove_debug_panel,
    async_setup_debug_panel_files,
)
from .recording.recorder import RequestRecorder
from .request.speech_output import SpeechOutput
from .runtime import SatelliteRuntime, VoiceStackConfigEntry
from .voiceprints.actions import async_setup_voiceprint_actions
from .voiceprints.library import (
    async_remove_voiceprints,
    async_setup_voiceprints,
    voiceprint_library,
)

MANUFACTURER = "VoiceStack"
CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """The actions, the announcer and the recordings' API live as long as HA."""
    async_setup_announcements(hass)
    async_setup_mode_actions(hass)
    async_setup_recording_api(hass)
    await async_setup_voiceprints(hass)
    async_setup_voiceprint_actions(hass)
    await async_setup_debug_panel_files(hass)
    return True


async def async_migrate_entry(
    hass: HomeAssistant, entry: VoiceStackConfigEntry
) -> bool:
    """An entry made by an older VoiceStack: see ``migration.py``."""
    return await async_migrate(hass, entry)


async def async_setup_entry(hass: HomeAssistant, entry: VoiceStackConfigEntry) -> bool:
    """Describe the satellite, register its device, connect and keep connected.

    An agent entry (the VoiceStack conversation agent) has no satellite: see
    ``agent/setup.py``.
    """
    if is_agent_entry(entry):
        return await async_setup_agent_entry(hass, cast("AgentConfigEntry", entry))
    host, port = entry.data[CONF_HOST], entry.data[CONF_PORT]
    try:
        identity = await async_identify(host, port, DESCRIBE_TIMEOUT_S)
    except PeerUnreachableError as err:
        raise ConfigEntryNotReady(
            translation_domain=DOMAIN,
            translation_key="cannot_connect",
            translation_placeholders={"error": str(err)},
        ) from err
    except NotWyomingError as err:  # JSON, but not Wyoming: try again later
        raise _not_a_satellite(host, port) from err
    if identity.satellite is None:
        raise _not_a_satellite(host, port)
    hub = SatelliteHub(hass, entry, identity)
    _register_device(hass, entry, hub.satellite_id, identity)
    queue = DeferredQueueStore(hass, entry.entry_id, hub.notify)
    await queue.async_load()
    barge_in = BargeInControl(hass, hub, voiceprint_library(hass))
    barge_in.start()
    entry.async_on_unload(barge_in.close)
    speech = SpeechOutput(hass, hub, barge_in)
    device = SatelliteDevice(hass, hub)
    modes = VoiceModes(hass, device, queue, controls=device)
    entry.async_on_unload(modes.close)
    conversations = Conversations(hass, hub)
    entry.async_on_unload(conversations.close)
    announcements = async_add_satellite(hass, hub, speech)
    entry.async_on_unload(announcements.remove)
    announce_requests = SatelliteAnnounceRequests(hass, hub)
    entry.async_on_unload(announce_requests.close)
    recorder = RequestRecorder(hass, entry)
    entry.async_on_unload(recorder.close)
    entry.runtime_data = SatelliteRuntime(
        hub=hub,
        speech=speech,
        modes=modes,
        conversations=conversations,
        announcements=announcements,
        announce_requests=announce_requests,
        recorder=recorder,
        barge_in=barge_in,
    )
    await async_add_debug_panel(hass, entry.entry_id)
    entry.async_on_unload(partial(async_remove_debug_panel, hass, entry.entry_id))
    hub.start()
    entry.async_on_unload(hub.stop)
    entry.async_on_unload(hub.remove_issues)
    entry.async_on_unload(entry.add_update_listener(_options_updated))
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


async def _options_updated(hass: HomeAssistant, entry: VoiceStackConfigEntry) -> None:
    """New announcer options apply at once; voice mode and follow-up options reload.

    (Reloading rebuilds the router: frames open now close without submitting.)
    """
    runtime = entry.runtime_data
    runtime.announcements.set_options(entry.options)
    if runtime.modes.options_changed(
        entry.options
    ) or runtime.conversations.options_changed(entry.options):
        hass.config_entries.async_schedule_reload(entry.entry_id)


async def async_remove_entry(hass: HomeAssistant, entry: VoiceStackConfigEntry) -> None:
    """The satellite is gone for good: so are its queue, notices and recordings.

    The enrolled voices belong to no one satellite: they go with the last one.
    """
    await DeferredQueueStore(hass, entry.entry_id, lambda: None).async_remove()
    await recording_library(hass).async_delete_entry(entry.entry_id)
    async_remove_issues(hass, entry.entry_id)
    if not any(
        other.entry_id != entry.entry_id
        and other.source != SOURCE_IGNORE
        and not is_agent_entry(other)
        for other in hass.config_entries.async_entries(DOMAIN)
    ):
        await async_remove_voiceprints(hass)


async def async_unload_entry(hass: HomeAssistant, entry: VoiceStackConfigEntry) -> bool:
    """Say the queued announcements, then remove the entities.

    The entities go first otherwise, and with the satellite entity the voice
    that says the queue. The link stops through ``async_on_unload``.
    """
    if is_agent_entry(entry):
        return await async_unload_agent_entry(hass, cast("AgentConfigEntry", entry))
    await entry.runtime_data.announcements.remove()
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)


def _not_a_satellite(host: str, port: int) -> ConfigEntryNotReady:
    return ConfigEntryNotReady(
        translation_domain=DOMAIN,
        translation_key="not_a_satellite",
        translation_placeholders={"address": f"{host}:{port}"},
    )


def _register_device(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    satellite_id: str,
    identity: Identity,
) -> None:
    satellite = identity.satellite
    assert satellite is not None
    dr.async_get(hass).async_get_or_create(
        config_entry_id=entry.entry_id,
        identifiers={(DOMAIN, satellite_id)},
        name=satellite.name or entry.title,
        manufacturer=MANUFACTURER,
        model="voicestack-satellite" if identity.voicestack else "Wyoming satellite",
        sw_version=satellite.version,
        suggested_area=satellite.area,
    )
