"""Fixtures shared by every test folder: real speech in and out.

Home Assistant fixtures live in tests/integration, so that
tests/satellite also runs on a Python without Home Assistant (the Pi's 3.11).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests import speech


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
