"""The config flow against real peers on loopback.

Satellites are real ``voicestack-satellite`` subprocesses and the non-satellite
is a real wyoming-piper. Only the stock-satellite tests serve a standard Wyoming
``info`` from the test itself (wyoming's own server, real socket): the stock
``wyoming-satellite`` is not installable here, and what matters is that its
``info`` has no ``voicestack`` block.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from ipaddress import ip_address
import json
from pathlib import Path
from unittest.mock import AsyncMock, patch

from homeassistant import config_entries
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers.service_info.zeroconf import ZeroconfServiceInfo
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, Satellite
from wyoming.server import AsyncEventHandler, AsyncServer

from custom_components.voicestack.const import DOMAIN
from devstack import servers, speech
from devstack.satellite import RunningSatellite, satellite

INTEGRATION = Path(__file__).parents[2] / "custom_components" / "voicestack"
HOST = "127.0.0.1"


@pytest.fixture
def mock_setup_entry() -> Iterator[AsyncMock]:
    """Flow-only tests: entries do not set up (as in Home Assistant core's tests).

    The flow does not depend on setup; ``test_a_running_satellite_creates_an_entry``
    sets up for real.
    """
    with patch(
        "custom_components.voicestack.async_setup_entry", return_value=True
    ) as mock:
        yield mock


@asynccontextmanager
async def _satellite(
    tmp_path: Path, satellite_id: str, name: str = "test-satellite"
) -> AsyncIterator[RunningSatellite]:
    folder = tmp_path / satellite_id
    folder.mkdir()
    wav = speech.write_wav(folder / "mic.wav", speech.silence(0.5))
    async with satellite(
        folder, "--mic-file", str(wav), "--id", satellite_id, "--name", name
    ) as sat:
        yield sat


class _StockSatelliteHandler(AsyncEventHandler):
    """Answers ``describe`` like a stock wyoming-satellite: no ``voicestack`` key."""

    name = "stock-satellite"

    async def handle_event(self, event: Event) -> bool:
        if Describe.is_type(event.type):
            await self.write_event(
                Info(
                    satellite=Satellite(
                        name=self.name,
                        attribution=Attribution(name="", url=""),
                        installed=True,
                        description="wyoming-satellite",
                        version="1.4.1",
                    )
                ).event()
            )
        return True


class _UnnamedSatelliteHandler(_StockSatelliteHandler):
    """A stock satellite whose ``info`` gives no name."""

    name = ""


@asynccontextmanager
async def _stock_satellite(
    handler: type[_StockSatelliteHandler] = _StockSatelliteHandler,
) -> AsyncIterator[int]:
    port = servers.free_port()
    server = AsyncServer.from_uri(f"tcp://{HOST}:{port}")
    await server.start(handler)
    try:
        yield port
    finally:
        await server.stop()


def _entry(
    hass: HomeAssistant,
    unique_id: str | None,
    port: int,
    title: str = "test-satellite",
) -> MockConfigEntry:
    entry = MockConfigEntry(
        domain=DOMAIN,
        title=title,
        unique_id=unique_id,
        data={CONF_HOST: HOST, CONF_PORT: port},
    )
    entry.add_to_hass(hass)
    return entry


def _wyoming_entry(hass: HomeAssistant, port: int) -> MockConfigEntry:
    entry = MockConfigEntry(
        domain="wyoming",
        title="Kitchen satellite",
        data={CONF_HOST: HOST, CONF_PORT: port},
    )
    entry.add_to_hass(hass)
    return entry


def _zeroconf(port: int, name: str = "test-satellite") -> ZeroconfServiceInfo:
    return ZeroconfServiceInfo(
        ip_address=ip_address(HOST),
        ip_addresses=[ip_address(HOST)],
        port=port,
        hostname="satellite.local.",
        type="_wyoming._tcp.local.",
        name=f"{name}._wyoming._tcp.local.",
        properties={},
    )


async def _submit(hass: HomeAssistant, host: str, port: int) -> dict:
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_USER}
    )
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "user"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"next_step_id": "satellite"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "satellite"
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOST: host, CONF_PORT: port}
    )


async def _discover(hass: HomeAssistant, port: int) -> dict:
    return await hass.config_entries.flow.async_init(
        DOMAIN,
        context={"source": config_entries.SOURCE_ZEROCONF},
        data=_zeroconf(port),
    )


async def _reconfigure(hass: HomeAssistant, entry: MockConfigEntry, port: int) -> dict:
    result = await entry.start_reconfigure_flow(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reconfigure"
    return await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOST: HOST, CONF_PORT: port}
    )


# -- user step -------------------------------------------------------------------


async def test_nothing_listening_is_cannot_connect(hass: HomeAssistant) -> None:
    result = await _submit(hass, HOST, servers.free_port())

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "cannot_connect"}


async def test_a_tts_server_is_not_a_satellite(
    hass: HomeAssistant, piper: servers.Server
) -> None:
    result = await _submit(hass, piper.host, piper.port)

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "not_a_satellite"}


# JSON that is not a Wyoming event, as a neighbour's device on the LAN might answer.
NOT_WYOMING = {
    "asr that is text": b'{"type": "info", "data": {"asr": "x"}}\n',
    "satellite that is a number": b'{"type": "info", "data": {"satellite": 5}}\n',
    "no type": b'{"data": {}}\n',
    "a list": b"[1, 2, 3]\n",
    "a type that is a number": b'{"type": 7}\n',
    "a length that is text": b'{"type": "info", "data_length": "x"}\n',
    # wyoming's reader would wait for (and buffer) the 2 GB it announces.
    "a payload of 2 GB": b'{"type": "info", "payload_length": 2000000000}\n',
    # Python 3.13's parser gives up (RecursionError); 3.14's parses it.
    "nesting 30,000 deep": b'{"type": "info", "data": '
    + b"[" * 30_000
    + b"]" * 30_000
    + b"}\n",
}


@asynccontextmanager
async def _answering(answer: bytes) -> AsyncIterator[int]:
    """A TCP peer that answers ``describe`` with ``answer`` and stays open."""

    async def handle(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        await reader.readline()
        writer.write(answer)
        await writer.drain()
        await reader.read()  # until the other side closes
        writer.close()

    server = await asyncio.start_server(handle, HOST, 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("answer", NOT_WYOMING.values(), ids=NOT_WYOMING.keys())
async def test_json_that_is_not_wyoming_is_not_a_satellite(
    hass: HomeAssistant, answer: bytes
) -> None:
    async with _answering(answer) as port:
        result = await _submit(hass, HOST, port)
        discovered = await _discover(hass, port)
        entry = _entry(hass, None, port)
        await hass.config_entries.async_setup(entry.entry_id)
        state = entry.state
        await hass.config_entries.async_unload(entry.entry_id)

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "not_a_satellite"}
    assert discovered["type"] is FlowResultType.ABORT
    assert discovered["reason"] == "not_a_satellite"
    assert state is ConfigEntryState.SETUP_RETRY  # retried, not a setup error


async def test_a_running_satellite_creates_an_entry(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    async with _satellite(tmp_path, "kitchen-1") as sat:
        result = await _submit(hass, HOST, sat.port)
        again = await _submit(hass, HOST, sat.port)
        entry = result["result"]
        state = entry.state
        assert await hass.config_entries.async_unload(entry.entry_id)

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "test-satellite"
    assert result["data"] == {CONF_HOST: HOST, CONF_PORT: sat.port}
    assert entry.unique_id == "kitchen-1"
    assert state is ConfigEntryState.LOADED
    assert again["type"] is FlowResultType.ABORT
    assert again["reason"] == "already_configured"


async def test_a_flow_started_with_an_address_goes_to_the_satellite(
    hass: HomeAssistant,
) -> None:
    """Not the menu: data given at the start is a satellite's address."""
    result = await hass.config_entries.flow.async_init(
        DOMAIN,
        context={"source": config_entries.SOURCE_USER},
        data={CONF_HOST: HOST, CONF_PORT: servers.free_port()},
    )

    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "satellite"
    assert result["errors"] == {"base": "cannot_connect"}


async def test_a_form_error_can_be_corrected(
    hass: HomeAssistant, tmp_path: Path, mock_setup_entry: AsyncMock
) -> None:
    result = await _submit(hass, HOST, servers.free_port())
    assert result["errors"] == {"base": "cannot_connect"}
    async with _satellite(tmp_path, "kitchen-1") as sat:
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {CONF_HOST: HOST, CONF_PORT: sat.port}
        )

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["result"].unique_id == "kitchen-1"


async def test_a_stock_satellite_is_known_by_its_address(
    hass: HomeAssistant, mock_setup_entry: AsyncMock
) -> None:
    async with _stock_satellite() as port:
        result = await _submit(hass, HOST, port)
        again = await _submit(hass, HOST, port)

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "stock-satellite"
    assert result["result"].unique_id == f"{HOST}:{port}"
    assert again["type"] is FlowResultType.ABORT
    assert again["reason"] == "already_configured"


async def test_a_satellite_without_a_name_is_titled_by_its_address(
    hass: HomeAssistant, mock_setup_entry: AsyncMock
) -> None:
    async with _stock_satellite(_UnnamedSatelliteHandler) as port:
        result = await _submit(hass, HOST, port)

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == f"{HOST}:{port}"


# -- a known satellite at a new address --------------------------------------------


@pytest.mark.parametrize("source", ["user", "zeroconf"])
async def test_a_known_satellite_at_a_new_port_updates_its_entry(
    hass: HomeAssistant, tmp_path: Path, mock_setup_entry: AsyncMock, source: str
) -> None:
    entry = _entry(hass, "kitchen-1", servers.free_port())
    async with _satellite(tmp_path, "kitchen-1") as sat:
        if source == "user":
            result = await _submit(hass, HOST, sat.port)
        else:
            result = await _discover(hass, sat.port)

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert entry.data == {CONF_HOST: HOST, CONF_PORT: sat.port}
    assert len(hass.config_entries.async_entries(DOMAIN)) == 1


# -- zeroconf ----------------------------------------------------------------------


async def test_zeroconf_discovers_a_satellite(
    hass: HomeAssistant, tmp_path: Path, mock_setup_entry: AsyncMock
) -> None:
    async with _satellite(tmp_path, "kitchen-1", name="Kitchen") as sat:
        result = await _discover(hass, sat.port)
        assert result["type"] is FlowResultType.FORM
        assert result["step_id"] == "zeroconf_confirm"
        assert result["description_placeholders"] == {
            "name": "Kitchen",
            "host": HOST,
            "port": str(sat.port),
        }
        [flow] = hass.config_entries.flow.async_progress_by_handler(DOMAIN)
        assert flow["context"]["title_placeholders"] == {"name": "Kitchen"}

        result = await hass.config_entries.flow.async_configure(result["flow_id"], {})

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Kitchen"
    assert result["data"] == {CONF_HOST: HOST, CONF_PORT: sat.port}
    assert result["result"].unique_id == "kitchen-1"
    assert mock_setup_entry.await_count == 1


async def test_zeroconf_of_a_tts_server_is_not_a_satellite(
    hass: HomeAssistant, piper: servers.Server
) -> None:
    result = await _discover(hass, piper.port)

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "not_a_satellite"


async def test_zeroconf_without_a_port_is_refused_unasked(hass: HomeAssistant) -> None:
    discovery = _zeroconf(1)
    discovery.port = None
    result = await hass.config_entries.flow.async_init(
        DOMAIN, context={"source": config_entries.SOURCE_ZEROCONF}, data=discovery
    )

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "no_port"


async def test_zeroconf_of_nothing_listening_is_cannot_connect(
    hass: HomeAssistant,
) -> None:
    result = await _discover(hass, servers.free_port())

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "cannot_connect"


async def test_zeroconf_of_a_configured_address_does_not_connect(
    hass: HomeAssistant,
) -> None:
    port = servers.free_port()  # nothing listens: a describe would fail
    _entry(hass, "kitchen-1", port)

    result = await _discover(hass, port)

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


# -- reconfigure -------------------------------------------------------------------


async def test_reconfigure_to_the_new_port_of_the_same_satellite(
    hass: HomeAssistant, tmp_path: Path, mock_setup_entry: AsyncMock
) -> None:
    entry = _entry(hass, "kitchen-1", servers.free_port())
    async with _satellite(tmp_path, "kitchen-1") as sat:
        result = await _reconfigure(hass, entry, sat.port)
        await hass.async_block_till_done()

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data == {CONF_HOST: HOST, CONF_PORT: sat.port}
    assert entry.unique_id == "kitchen-1"
    assert mock_setup_entry.await_count == 1  # reloaded


async def test_reconfigure_to_a_different_satellite_is_refused(
    hass: HomeAssistant, tmp_path: Path, mock_setup_entry: AsyncMock
) -> None:
    async with (
        _satellite(tmp_path, "kitchen-1", name="Kitchen") as kitchen,
        _satellite(tmp_path, "hall-1", name="Hall") as hall,
    ):
        entry = _entry(hass, "kitchen-1", kitchen.port, title="Kitchen")
        result = await _reconfigure(hass, entry, hall.port)

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "unique_id_mismatch"
    assert result["description_placeholders"] == {"name": "Kitchen", "found": "Hall"}
    assert entry.data == {CONF_HOST: HOST, CONF_PORT: kitchen.port}
    assert entry.unique_id == "kitchen-1"
    mock_setup_entry.assert_not_awaited()


async def test_reconfigure_shows_errors_on_the_form(
    hass: HomeAssistant, piper: servers.Server
) -> None:
    entry = _entry(hass, "kitchen-1", servers.free_port())
    result = await _reconfigure(hass, entry, servers.free_port())
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "cannot_connect"}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {CONF_HOST: piper.host, CONF_PORT: piper.port}
    )

    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reconfigure"
    assert result["errors"] == {"base": "not_a_satellite"}


async def test_reconfigure_to_the_address_of_another_entry_is_refused(
    hass: HomeAssistant,
) -> None:
    entry = _entry(hass, "kitchen-1", servers.free_port())
    other = _entry(hass, "hall-1", servers.free_port(), title="Hall")

    result = await _reconfigure(hass, entry, other.data[CONF_PORT])

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_reconfigure_of_a_stock_satellite_takes_its_new_address(
    hass: HomeAssistant, mock_setup_entry: AsyncMock
) -> None:
    old_port = servers.free_port()
    entry = _entry(hass, f"{HOST}:{old_port}", old_port, title="stock-satellite")
    async with _stock_satellite() as port:
        result = await _reconfigure(hass, entry, port)
        await hass.async_block_till_done()

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data == {CONF_HOST: HOST, CONF_PORT: port}
    assert entry.unique_id == f"{HOST}:{port}"


async def test_reconfigure_gives_an_entry_without_id_the_satellite_id(
    hass: HomeAssistant, tmp_path: Path, mock_setup_entry: AsyncMock
) -> None:
    entry = _entry(hass, None, servers.free_port())  # made before satellites had ids
    async with _satellite(tmp_path, "kitchen-1") as sat:
        result = await _reconfigure(hass, entry, sat.port)
        await hass.async_block_till_done()

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data == {CONF_HOST: HOST, CONF_PORT: sat.port}
    assert entry.unique_id == "kitchen-1"


async def test_reconfigure_may_keep_the_address(
    hass: HomeAssistant, mock_setup_entry: AsyncMock
) -> None:
    async with _stock_satellite() as port:
        entry = _entry(hass, f"{HOST}:{port}", port, title="stock-satellite")
        result = await _reconfigure(hass, entry, port)
        await hass.async_block_till_done()

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert entry.data == {CONF_HOST: HOST, CONF_PORT: port}
    assert entry.unique_id == f"{HOST}:{port}"


async def test_reconfigure_to_a_satellite_with_another_entry_is_refused(
    hass: HomeAssistant, tmp_path: Path, mock_setup_entry: AsyncMock
) -> None:
    old_port = servers.free_port()
    entry = _entry(hass, f"{HOST}:{old_port}", old_port, title="stock-satellite")
    _entry(hass, "kitchen-1", servers.free_port())
    async with _satellite(tmp_path, "kitchen-1") as sat:
        result = await _reconfigure(hass, entry, sat.port)

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert entry.data == {CONF_HOST: HOST, CONF_PORT: old_port}
    mock_setup_entry.assert_not_awaited()


# -- one owner ---------------------------------------------------------------------


async def test_a_satellite_of_the_wyoming_integration_is_refused_everywhere(
    hass: HomeAssistant, tmp_path: Path, mock_setup_entry: AsyncMock
) -> None:
    entry = _entry(hass, "kitchen-1", servers.free_port())
    async with _satellite(tmp_path, "hall-1") as sat:
        _wyoming_entry(hass, sat.port)
        results = {
            "user": await _submit(hass, HOST, sat.port),
            "zeroconf": await _discover(hass, sat.port),
            "reconfigure": await _reconfigure(hass, entry, sat.port),
        }

    for source, result in results.items():
        assert result["type"] is FlowResultType.ABORT, source
        assert result["reason"] == "owned_by_wyoming", source
        assert result["description_placeholders"] == {
            "title": "Kitchen satellite",
            "host": HOST,
            "port": str(sat.port),
        }
    assert [e.unique_id for e in hass.config_entries.async_entries(DOMAIN)] == [
        "kitchen-1"
    ]
    mock_setup_entry.assert_not_awaited()


# -- translations ------------------------------------------------------------------


def test_every_step_error_and_abort_is_translated() -> None:
    strings = json.loads((INTEGRATION / "strings.json").read_text())["config"]
    english = json.loads((INTEGRATION / "translations" / "en.json").read_text())[
        "config"
    ]

    assert strings == english
    assert set(strings["step"]) == {
        "user",
        "satellite",
        "agent",
        "zeroconf_confirm",
        "reconfigure",
    }
    assert set(strings["step"]["user"]["menu_options"]) == {"satellite", "agent"}
    for step in ("satellite", "reconfigure"):
        assert set(strings["step"][step]["data"]) == {CONF_HOST, CONF_PORT}
        assert set(strings["step"][step]["data_description"]) == {CONF_HOST, CONF_PORT}
    assert set(strings["error"]) == {
        "cannot_connect",
        "not_a_satellite",
        "own_agent",
        "agent_not_found",
    }
    assert set(strings["abort"]) == {
        "already_configured",
        "already_in_progress",
        "cannot_connect",
        "no_port",
        "not_a_satellite",
        "owned_by_wyoming",
        "reconfigure_successful",
        "unique_id_mismatch",
    }
    assert "{title}" in strings["abort"]["owned_by_wyoming"]
    assert "{found}" in strings["abort"]["unique_id_mismatch"]
    assert strings["flow_title"] == "{name}"
