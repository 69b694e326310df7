"""The config flow against real peers on loopback."""

from __future__ import annotations

from pathlib import Path

from homeassistant import config_entries
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from custom_components.voicestack.const import DOMAIN
from tests import servers, speech
from tests.satellite.harness import satellite


async def _submit(hass: HomeAssistant, host: str, port: int) -> dict:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOST: host, CONF_PORT: port}
    )


async def test_nothing_listening_is_cannot_connect(hass: HomeAssistant) -> None:
    result = await _submit(hass, "127.0.0.1", servers.free_port())

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "cannot_connect"}


async def test_a_tts_server_is_not_a_satellite(
    hass: HomeAssistant, piper: servers.Server
) -> None:
    result = await _submit(hass, piper.host, piper.port)

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "not_a_satellite"}


async def test_a_running_satellite_creates_an_entry(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(0.5))
    async with satellite(tmp_path, "--mic-file", str(wav)) as sat:
        result = await _submit(hass, "127.0.0.1", sat.port)
        again = await _submit(hass, "127.0.0.1", sat.port)

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "test-satellite"
    assert result["data"] == {CONF_HOST: "127.0.0.1", CONF_PORT: sat.port}
    assert again["type"] is FlowResultType.ABORT
    assert again["reason"] == "already_configured"
