"""Fixtures for tests that run the integration inside a real Home Assistant."""

from __future__ import annotations

from collections.abc import Iterator

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from tests import servers


@pytest.fixture(autouse=True)
async def ha_core(hass: HomeAssistant, enable_custom_integrations: None) -> None:
    """Set up HA's core component (conversation needs it) and allow custom ones."""
    assert await async_setup_component(hass, "homeassistant", {})


@pytest.fixture(scope="session")
def piper() -> Iterator[servers.Server]:
    """A real wyoming-piper server on loopback, shared by the session."""
    with servers.piper_server() as server:
        yield server


@pytest.fixture(scope="session")
def whisper() -> Iterator[servers.Server]:
    """A real wyoming-faster-whisper server on loopback, shared by the session."""
    with servers.whisper_server() as server:
        yield server
