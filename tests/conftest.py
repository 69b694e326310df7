"""Fixtures shared by every test folder: real speech in and out.

Home Assistant fixtures live in tests/integration, so that
tests/satellite also runs on a Python without Home Assistant (the Pi's 3.11).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import importlib.util
from pathlib import Path

import pytest

from devstack import speech


@pytest.fixture(scope="session")
def speak() -> Callable[..., bytes]:
    """Synthesize text as 16 kHz mono int16 PCM with Piper (cached on disk)."""
    return speech.speak


@pytest.fixture(scope="session")
def transcribe() -> Callable[[bytes], str]:
    """Transcribe 16 kHz mono int16 PCM with faster-whisper (model loaded once)."""
    return speech.transcribe


@pytest.fixture
def wav_file(tmp_path: Path) -> Callable[[bytes, str], Path]:
    """Write PCM to a WAV file in the test's temporary folder."""

    def _write(pcm: bytes, name: str = "speech.wav") -> Path:
        return speech.write_wav(tmp_path / name, pcm)

    return _write


if importlib.util.find_spec("homeassistant") is not None:

    @pytest.fixture(autouse=True)
    async def enable_event_loop_debug() -> None:
        """The test plugin's own fixture, as its releases for 2026.10+ define it.

        The release for Home Assistant 2026.3 (0.13.320) calls
        ``asyncio.get_event_loop()``, which on Python 3.14 fails in every test
        that is not a coroutine; this async version runs in the test's loop.
        """
        asyncio.get_running_loop().set_debug(True)
