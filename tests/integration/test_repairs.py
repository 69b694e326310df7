"""Repair issues: the satellite is run by someone else, or speaks another version.

Real satellite subprocesses on loopback; the issue registry is Home Assistant's.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from wyoming.event import Event

from custom_components.voicestack.const import DOMAIN
from devstack import speech
from devstack.satellite import RunningSatellite, run_satellite, satellite
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack
from voicestack_protocol import PROTOCOL_VERSION

RECONNECT_S = 45.0  # the link's backoff is capped at 30 s


async def _quiet_satellite(stack: AsyncExitStack, tmp_path: Path) -> RunningSatellite:
    """A satellite subprocess hearing silence, stopped with ``stack``."""
    mic = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    return await stack.enter_async_context(satellite(tmp_path, "--mic-file", str(mic)))


async def test_a_satellite_run_elsewhere_raises_an_issue_until_voicestack_runs_it(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    issues = ir.async_get(hass)
    async with AsyncExitStack() as stack:
        sat = await _quiet_satellite(stack, tmp_path)
        async with sat.connect() as other:
            await run_satellite(other, extensions=False)  # a stock owner holds it
            entry = await add_voicestack(hass, stack, sat)
            issue_id = f"satellite_busy_{entry.entry_id}"
            await wait_for(
                lambda: issues.async_get_issue(DOMAIN, issue_id) is not None,
                15,
                "the busy repair issue",
            )
            issue = issues.async_get_issue(DOMAIN, issue_id)
            assert issue is not None
            assert issue.translation_key == "satellite_busy"
            assert issue.severity is ir.IssueSeverity.WARNING
            assert issue.translation_placeholders["name"] == entry.title
            assert "already run by" in issue.translation_placeholders["reason"]

        # The other owner left: VoiceStack runs the satellite, the issue is gone.
        await wait_for(
            lambda: entry.runtime_data.hub.connected, RECONNECT_S, "VoiceStack runs it"
        )
        assert issues.async_get_issue(DOMAIN, issue_id) is None


async def test_another_protocol_version_raises_an_issue_removed_with_the_entry(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    issues = ir.async_get(hass)
    async with AsyncExitStack() as stack:
        sat = await _quiet_satellite(stack, tmp_path)
        entry = await add_voicestack(hass, stack, sat)
        hub = entry.runtime_data.hub
        await wait_for(lambda: hub.connected, 15, "connected")
        issue_id = f"protocol_mismatch_{entry.entry_id}"
        assert issues.async_get_issue(DOMAIN, issue_id) is None

        # The same satellite, as a newer release would describe itself.
        block = hub.identity.voicestack
        assert block is not None
        info = hub.identity.info.event()
        newer = {
            "id": block.id,
            "protocol": PROTOCOL_VERSION + 1,
            "sends": list(block.sends),
            "accepts": list(block.accepts),
        }
        hub.link_connected(Event(info.type, {**(info.data or {}), "voicestack": newer}))
        issue = issues.async_get_issue(DOMAIN, issue_id)
        assert issue is not None
        assert issue.translation_key == "protocol_mismatch"
        assert issue.translation_placeholders["satellite"] == str(PROTOCOL_VERSION + 1)
        assert issue.translation_placeholders["ours"] == str(PROTOCOL_VERSION)

    assert issues.async_get_issue(DOMAIN, issue_id) is None  # unloaded with the entry
