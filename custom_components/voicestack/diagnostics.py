"""Diagnostics: what the satellite said about itself, the link, playback, modes.

Redacted, because users post diagnostics in public issues:

- the address, host and port, wherever it appears (the entry, the link's last
  error): it identifies the user's network;
- the satellite's id (by default its MAC address);
- what was said: the last playback keeps its sentences' lengths, not their
  text ("Your PIN is 4711."); the last routing decision shows frame, rule and
  steps, not the words.

An agent entry (the VoiceStack conversation agent) shows the wrapped agent and
each device's router; the device keys (device or satellite ids) are redacted.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, cast

from homeassistant.components.diagnostics import REDACTED, async_redact_data
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant

from .agent.config import CONF_WRAPPED_AGENT, is_agent_entry
from .agent.entity import AgentConfigEntry
from .modes.voice_modes import VoiceModes
from .runtime import SatelliteRuntime, VoiceStackConfigEntry

TO_REDACT = {CONF_HOST, CONF_PORT, "id", "satellite_id", "text", "device"}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: VoiceStackConfigEntry
) -> dict[str, Any]:
    """Entry data (redacted), identity, link statistics, Speaker state."""
    if is_agent_entry(entry):
        return _agent(cast("AgentConfigEntry", entry))
    runtime = entry.runtime_data
    hub = runtime.hub
    playback = hub.speaker.last
    diagnostics = {
        "entry": dict(entry.data),
        "satellite_id": hub.satellite_id,
        "info": hub.identity.info.to_dict(),
        "voicestack": asdict(hub.identity.voicestack)
        if hub.identity.voicestack
        else None,
        "link": {
            "connected": hub.connected,
            **asdict(hub.link.stats),
            "last_error": _without_address(hub.link.stats.last_error, entry),
        },
        "muted": hub.muted,
        "assist_in_progress": hub.assist_in_progress,
        # Requests in which nothing was asked, since Home Assistant started.
        "empty_transcripts": hub.empty_transcripts,
        "stt_speculations": asdict(hub.stt_speculations),
        "speaker": {
            "busy": hub.speaker.busy,
            "last_playback": asdict(playback) if playback else None,
        },
        "announcements": runtime.announcements.announcer.snapshot().as_dict(),
        # Lines from the satellite's --announce-socket, by fate.
        "local_announce_requests": {
            "accepted": runtime.announce_requests.accepted,
            "rejected": runtime.announce_requests.rejected,
        },
        "modes": {**_modes(runtime.modes), "voice": runtime.hub.tts_voice},
        "recording": _recording(entry),
        "barge_in": _barge_in(runtime),
    }
    return async_redact_data(diagnostics, TO_REDACT)


def _without_address(error: str | None, entry: VoiceStackConfigEntry) -> str | None:
    """``error`` with the satellite's host and port taken out."""
    if error is None:
        return None
    for part in (str(entry.data[CONF_HOST]), str(entry.data[CONF_PORT])):
        error = error.replace(part, REDACTED)
    return error


def _recording(entry: VoiceStackConfigEntry) -> dict[str, Any]:
    """Whether requests are recorded, and how many recordings were saved or not."""
    recorder = entry.runtime_data.recorder
    return {
        "enabled": recorder.enabled,
        "saved": recorder.saved,
        "dropped": recorder.dropped,
    }


def _barge_in(runtime: SatelliteRuntime) -> dict[str, Any]:
    """Barge-in's settings, what the satellite can do, and the counters.

    Enrolled people are counted, never named; voiceprints are not shown.
    """
    control = runtime.barge_in
    return {
        "settings": asdict(control.settings),
        "available": control.available,
        "gate_available": control.gate_available,
        "enrolled_people": control.enrolled_people,
        "counters": control.counters,
    }


def _agent(entry: AgentConfigEntry) -> dict[str, Any]:
    """The wrapped agent and every device's router."""
    devices = entry.runtime_data.devices
    diagnostics = {
        "wrapped_agent": entry.options.get(CONF_WRAPPED_AGENT),
        "devices": [
            {"device": key, **_modes(found.modes)} for key, found in devices.items()
        ],
    }
    return async_redact_data(diagnostics, TO_REDACT)


def _modes(modes: VoiceModes) -> dict[str, Any]:
    """The router's state and its last decision (what was said is redacted)."""
    state = modes.router.state()
    last = modes.router.frames.last
    return {
        "mode": state.mode,
        "listen_mode": str(state.listen_mode),
        "stack": list(state.stack),
        "gathered_chars": state.gathered_chars,
        "deferred_queue": len(modes.queue),
        "last_decision": None
        if last is None
        else {
            "frame": last.frame,
            "rule": last.rule,
            "handled": last.handled,
            "stack": list(last.stack),
        },
    }
