"""Fixtures for tests that run the integration inside a real Home Assistant."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from devstack import servers
from tests.integration.assist import set_up_assist


@pytest.fixture
def config_dir(hass: HomeAssistant, tmp_path: Path) -> Path:
    """A fresh config directory (recordings, notes, TTS cache go there).

    Tests that need a user's files in it override this fixture.
    """
    path = tmp_path / "ha-config"
    path.mkdir()
    hass.config.config_dir = str(path)
    return path


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


@pytest.fixture
async def stack() -> AsyncIterator[AsyncExitStack]:
    """Everything a test starts, stopped in reverse order."""
    async with AsyncExitStack() as exit_stack:
        yield exit_stack


@pytest.fixture
async def pipeline(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    piper: servers.Server,
    whisper: servers.Server,
) -> Pipeline:
    """Whisper, Piper, the kitchen light, the front door and a preferred pipeline."""
    return await set_up_assist(hass, stack, tmp_path, piper, whisper, front_door=True)
