"""The entities of a satellite against the real satellite subprocess.

Device, availability that follows the link (kill the satellite, start it again on
the same port), the mute switch, diagnostics (and what they must not show), and
setup against a peer that never answers.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
import json
from pathlib import Path

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_HOST, CONF_PORT, STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.core.wav import Pcm
from custom_components.voicestack.diagnostics import (
    async_get_config_entry_diagnostics,
)
from devstack import servers, speech
from devstack.satellite import satellite
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack
import voicestack_satellite

CONNECTED = "binary_sensor.test_satellite_connectivity"
SATELLITE = "assist_satellite.test_satellite"
MUTE = "switch.test_satellite_mute"


def _states(hooks: Path) -> list[str]:
    if not hooks.exists():
        return []
    return [json.loads(line)["state"] for line in hooks.read_text().splitlines()]


async def test_device_entities_and_diagnostics(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with AsyncExitStack() as stack:
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(wav))
        )
        entry = await add_voicestack(hass, stack, sat)
        await wait_for(
            lambda: hass.states.get(CONNECTED).state == STATE_ON, 10, "connected"
        )
        diagnostics = await async_get_config_entry_diagnostics(hass, entry)
        entities = er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        (device,) = dr.async_entries_for_config_entry(
            dr.async_get(hass), entry.entry_id
        )

    assert (DOMAIN, entry.unique_id) in device.identifiers
    assert device.name == "test-satellite"
    assert device.model == "voicestack-satellite"
    assert device.sw_version == voicestack_satellite.__version__
    ids = {e.entity_id for e in entities}
    assert {
        SATELLITE,
        "binary_sensor.test_satellite_assist_in_progress",
        CONNECTED,
        "select.test_satellite_assistant",
        "select.test_satellite_finished_speaking_detection",
        MUTE,
        "switch.test_satellite_record_requests",
        "sensor.test_satellite_announcements_queued",
        "sensor.test_satellite_announcements_dropped",
        "sensor.test_satellite_announcement_latency_median",
        "select.test_satellite_voice_mode",
        "sensor.test_satellite_gathered_text",
        "sensor.test_satellite_deferred_queue",
        "sensor.test_satellite_empty_transcripts",
        "sensor.test_satellite_follow_up",
        "switch.test_satellite_barge_in",
        "switch.test_satellite_voice_gate",
        "switch.test_satellite_echo_cancellation",
        "number.test_satellite_barge_in_minimum_speech",
        "sensor.test_satellite_barge_in_pauses",
    } <= ids
    # and the other announcement metrics and barge-in counters
    assert len(ids) == 8 + 10 + 3 + 4 + 6
    # What a user acts on is enabled; counters and latencies wait until enabled
    # (docs/integration.md counts them).
    enabled = {e.entity_id for e in entities if e.disabled_by is None}
    assert enabled == {
        SATELLITE,
        CONNECTED,
        "select.test_satellite_assistant",
        "select.test_satellite_finished_speaking_detection",
        "select.test_satellite_voice_mode",
        MUTE,
        "switch.test_satellite_record_requests",
        "switch.test_satellite_barge_in",
        "switch.test_satellite_voice_gate",
        "switch.test_satellite_echo_cancellation",
        "number.test_satellite_barge_in_minimum_speech",
        "sensor.test_satellite_announcements_queued",
        "sensor.test_satellite_last_announcement",
        "sensor.test_satellite_gathered_text",
        "sensor.test_satellite_deferred_queue",
        "sensor.test_satellite_follow_up",
    }
    disabled = [e.disabled_by for e in entities if e.disabled_by is not None]
    assert disabled == [er.RegistryEntryDisabler.INTEGRATION] * 15
    assert all(e.device_id == device.id for e in entities)
    assert diagnostics["entry"][CONF_HOST] == "**REDACTED**"
    assert diagnostics["entry"][CONF_PORT] == "**REDACTED**"  # where it listens
    assert diagnostics["link"]["connected"] is True
    assert diagnostics["link"]["connects"] == 1
    assert diagnostics["info"]["satellite"]["name"] == "test-satellite"
    assert "voicestack-flush" in diagnostics["voicestack"]["accepts"]
    assert diagnostics["announcements"]["received"] == 0
    assert diagnostics["empty_transcripts"] == 0
    assert diagnostics["modes"]["mode"] == "wake_word"
    assert diagnostics["modes"]["stack"] == ["base"]
    assert diagnostics["modes"]["deferred_queue"] == 0
    assert diagnostics["recording"] == {"enabled": False, "saved": 0, "dropped": 0}
    barge_in = diagnostics["barge_in"]
    assert barge_in["settings"] == {
        "enabled": True,
        "gate": True,
        "min_speech_s": 0.3,
        "echo_cancel": True,
    }
    assert barge_in["available"] is True
    assert barge_in["enrolled_people"] == 0
    assert barge_in["counters"]["pauses"] == 0


async def test_entities_follow_the_link_and_the_mute_survives_a_reconnect(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    hooks = tmp_path / "hooks.jsonl"
    args = ("--mic-file", str(wav), "--event-command", f"tee -a {hooks}")
    async with AsyncExitStack() as stack:
        first = satellite(tmp_path, *args)
        sat = await first.__aenter__()
        entry = await add_voicestack(hass, stack, sat)
        await wait_for(lambda: hass.states.get(SATELLITE).state == "idle", 10, "up")
        await hass.services.async_call(
            "switch", "turn_on", {"entity_id": MUTE}, blocking=True
        )
        await wait_for(lambda: "muted" in _states(hooks), 5, "satellite muted")

        await first.__aexit__(None, None, None)  # the satellite goes away
        await wait_for(
            lambda: hass.states.get(CONNECTED).state == STATE_OFF, 10, "disconnected"
        )
        unavailable = hass.states.get(SATELLITE).state
        hooks.unlink()

        await stack.enter_async_context(satellite(tmp_path, *args, port=sat.port))
        await wait_for(
            lambda: hass.states.get(CONNECTED).state == STATE_ON, 30, "reconnected"
        )
        await wait_for(lambda: "muted" in _states(hooks), 5, "mute re-applied")
        await hass.services.async_call(
            "switch", "turn_off", {"entity_id": MUTE}, blocking=True
        )
        await asyncio.sleep(0.2)
        stats = entry.runtime_data.hub.link.stats

    assert unavailable == "unavailable"
    assert stats.connects == 2
    assert stats.disconnects == 1
    assert _states(hooks)[-1] == "idle"  # run-satellite again after unmute


async def test_setup_retries_when_the_peer_never_answers(
    hass: HomeAssistant,
) -> None:
    async def silent(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await reader.read()  # accept, never answer describe
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    entry = MockConfigEntry(
        domain=DOMAIN, data={CONF_HOST: "127.0.0.1", CONF_PORT: port}, unique_id="x"
    )
    entry.add_to_hass(hass)
    try:
        await hass.config_entries.async_setup(entry.entry_id)
        state = entry.state
        reason = entry.reason
    finally:
        server.close()
        await server.wait_closed()
        await hass.config_entries.async_unload(entry.entry_id)

    assert state is ConfigEntryState.SETUP_RETRY
    assert reason is not None
    assert f"127.0.0.1:{port}" in reason
    assert servers.free_port() != port


async def test_diagnostics_hide_the_address_the_satellite_id_and_what_was_said(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    spoken = "Your PIN is 4711."

    async def parts() -> AsyncIterator[tuple[str, Pcm]]:
        yield spoken, Pcm(bytes(speech.RATE), rate=speech.RATE, width=2, channels=1)

    async with AsyncExitStack() as stack:
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(wav))
        )
        entry = await add_voicestack(hass, stack, sat)
        hub = entry.runtime_data.hub
        await wait_for(lambda: hub.connected, 10, "connected")
        playback = await hub.speaker.play(parts())
        sat.process.kill()
        await wait_for(
            lambda: (hub.link.stats.last_error or "").startswith("cannot connect"),
            30,
            "a failed reconnect",
        )
        diagnostics = await async_get_config_entry_diagnostics(hass, entry)

    assert playback.outcome == "played"
    assert str(sat.port) in (hub.link.stats.last_error or "")
    text = json.dumps(diagnostics)
    for hidden in ("127.0.0.1", hub.satellite_id, "4711"):
        assert hidden not in text, hidden
    assert diagnostics["link"]["last_error"].startswith("cannot connect")
    assert str(sat.port) not in diagnostics["link"]["last_error"]
    assert diagnostics["satellite_id"] == "**REDACTED**"
    assert diagnostics["voicestack"]["id"] == "**REDACTED**"
    (sentence,) = diagnostics["speaker"]["last_playback"]["sentences"]
    assert sentence["text"] == "**REDACTED**"
    assert sentence["samples"] == speech.RATE // 2
