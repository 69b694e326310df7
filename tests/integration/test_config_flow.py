"""The config flow against real peers on loopback."""

from __future__ import annotations

from homeassistant import config_entries
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType

from custom_components.voicestack.const import DOMAIN
from tests import servers


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
