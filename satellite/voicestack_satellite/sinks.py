"""Where the player's samples go: a sound command (a device) or WAV files (tests).

A sink takes small blocks as the player's clock releases them; it never paces
itself, so the player alone decides what was played when.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import Protocol

import numpy as np

from .audio import from_mono_int16, write_wav

_LOGGER = logging.getLogger(__name__)


class Sink(Protocol):
    """Where samples go. ``write`` must not block for long."""

    # The sink wants what was played when a stream ends (a file does; a device
    # does not, and the player then keeps no copy of it).
    keeps_played: bool

    async def write(self, samples: np.ndarray) -> None:
        """Hand samples to the device."""

    def stream_ended(self, stream_id: str, samples: np.ndarray) -> None:
        """A stream finished or was flushed; ``samples`` is what was played, in order."""

    async def close(self) -> None:
        """Release the device."""


class FileSink:
    """Each stream becomes a WAV next to ``path`` when it ends.

    Streams from the peer are ``<stem>.<n>.wav``, numbered from 1 in the order they
    end; the satellite's own sounds (non-numeric ids such as ``awake-3``) are
    ``<stem>-sounds.<id>.wav``, so they never shift the peer's numbering.
    """

    keeps_played = True

    def __init__(self, path: Path, rate: int) -> None:
        """Nothing is written until a stream ends."""
        self._path = path
        self._rate = rate
        self._count = 0
        self.written: list[Path] = []

    async def write(self, samples: np.ndarray) -> None:
        """A file takes everything at once; the player's clock does the pacing."""

    def stream_ended(self, stream_id: str, samples: np.ndarray) -> None:
        """Write the WAV of what was played."""
        stem, suffix = self._path.stem, self._path.suffix
        if stream_id.isdigit():
            self._count += 1
            out = self._path.with_name(f"{stem}.{self._count}{suffix}")
        else:
            out = self._path.with_name(f"{stem}-sounds.{stream_id}{suffix}")
        write_wav(out, samples.tobytes(), self._rate)
        self.written.append(out)
        _LOGGER.debug("Wrote stream %s to %s", stream_id, out)

    async def close(self) -> None:
        """Nothing stays open."""


class CommandSink:
    """A long-running player process (``aplay ...``) fed raw PCM on stdin."""

    keeps_played = False

    def __init__(self, argv: list[str], width: int = 2, channels: int = 1) -> None:
        """``argv`` is run directly (no shell), once, and restarted if it dies.

        It reads ``width``-byte samples on ``channels`` channels
        (``--snd-command-width/-channels``); the player's mono 16-bit is copied
        to each channel.
        """
        self._argv = argv
        self._format = (width, channels)
        self._process: asyncio.subprocess.Process | None = None

    async def write(self, samples: np.ndarray) -> None:
        """Write to the process, starting it if needed; errors are logged once."""
        process = self._process
        if process is None or process.returncode is not None:
            try:
                process = self._process = await asyncio.create_subprocess_exec(
                    *self._argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                )
            except OSError as err:
                _LOGGER.error("Sound command %r cannot start: %s", self._argv[0], err)
                self._process = None
                return
        assert process.stdin is not None
        try:
            process.stdin.write(
                samples.tobytes()
                if self._format == (2, 1)
                else from_mono_int16(samples, *self._format)
            )
            await process.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            _LOGGER.error("Sound command exited (code %s)", process.returncode)
            self._process = None

    def stream_ended(self, stream_id: str, samples: np.ndarray) -> None:
        """The device keeps running between streams."""

    async def close(self) -> None:
        """Stop the player process."""
        if (process := self._process) is not None and process.returncode is None:
            if process.stdin is not None:
                process.stdin.close()
            with contextlib.suppress(ProcessLookupError):
                process.terminate()
            await process.wait()
        self._process = None
