"""Microphone sources, all yielding 16 kHz mono int16 chunks of READ_SAMPLES.

``chunks(on_error)`` is the audio; ``on_error`` hears why it stopped coming (the
recorder cannot start or exited), for the state hook.

- ``FileMic``: a WAV converted once, played in real time from the first
  ``run-satellite``, then silence: deterministic tests and demos.
- ``CommandMic``: a long-running recorder (``arecord ...``) started without a shell,
  restarted with backoff if it dies or does not exist.
- ``StdinMic``: raw PCM on stdin.

A command or stdin in another format (``--mic-command-rate`` ...) is converted
as it arrives (mic_format.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
import contextlib
import logging
from pathlib import Path
import sys

import numpy as np

from .audio import RATE, read_wav
from .backoff import Backoff
from .mic_format import CHUNK_SAMPLES, NATIVE, READ_SAMPLES, MicConverter, MicFormat

_LOGGER = logging.getLogger(__name__)

__all__ = ["CHUNK_SAMPLES", "CommandMic", "FileMic", "StdinMic"]

READ_BYTES = READ_SAMPLES * 2  # VAD splits a read into 10 ms windows


def _scaled(samples: np.ndarray, volume: float) -> np.ndarray:
    if volume == 1.0:
        return samples
    scaled: np.ndarray = np.clip(samples.astype(np.float32) * volume, -32768, 32767)
    return scaled.astype(np.int16)


class FileMic:
    """A WAV file as the mic, paced like a real one."""

    def __init__(self, path: Path, volume: float = 1.0) -> None:
        """Read and convert the file now, so a bad file fails at start-up."""
        self._samples = _scaled(read_wav(path), volume)
        self._started = asyncio.Event()

    def start(self) -> None:
        """Begin playing the file (called on the first run-satellite)."""
        self._started.set()

    async def chunks(
        self, on_error: Callable[[str], None]
    ) -> AsyncIterator[np.ndarray]:
        """The file's audio in real time, then silence forever (no ``on_error``)."""
        loop = asyncio.get_running_loop()
        silence = np.zeros(READ_SAMPLES, dtype=np.int16)
        # Before start: silence, so wake detection sees a steady stream.
        next_time = loop.time()
        position = 0
        while True:
            if self._started.is_set() and position < len(self._samples):
                chunk = self._samples[position : position + READ_SAMPLES]
                position += len(chunk)
                if len(chunk) < READ_SAMPLES:
                    chunk = np.concatenate([chunk, silence[len(chunk) :]])
            else:
                chunk = silence
            next_time += READ_SAMPLES / RATE
            await asyncio.sleep(max(0.0, next_time - loop.time()))
            yield chunk


class CommandMic:
    """A recorder process printing raw PCM (16 kHz 16-bit mono unless told)."""

    def __init__(
        self, argv: list[str], volume: float = 1.0, fmt: MicFormat = NATIVE
    ) -> None:
        """``argv`` is run directly (no shell)."""
        self._argv = argv
        self._volume = volume
        self._format = fmt

    def start(self) -> None:
        """The recorder runs from the beginning; nothing to start."""

    async def chunks(
        self, on_error: Callable[[str], None]
    ) -> AsyncIterator[np.ndarray]:
        """Chunks from the recorder; restarts it with backoff when it ends.

        Each time it cannot start or exits, ``on_error`` is told why.
        """
        backoff = Backoff()
        while True:
            try:
                process = await asyncio.create_subprocess_exec(
                    *self._argv,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.DEVNULL,
                    stdin=asyncio.subprocess.DEVNULL,
                )
            except OSError as err:
                failure = f"mic command {self._argv[0]!r} cannot start: {err.strerror}"
            else:
                try:
                    assert process.stdout is not None
                    async for chunk in _chunks(process.stdout, self._format):
                        backoff.reset()
                        yield _scaled(chunk, self._volume)
                finally:
                    await _stop(process)
                failure = f"mic command exited with code {process.returncode}"
            _LOGGER.error("%s; restarting", failure)
            on_error(failure)
            await backoff.wait()


class StdinMic:
    """Raw PCM on standard input (16 kHz 16-bit mono unless told)."""

    def __init__(self, volume: float = 1.0, fmt: MicFormat = NATIVE) -> None:
        """Read from this process's stdin."""
        self._volume = volume
        self._format = fmt

    def start(self) -> None:
        """Stdin flows from the beginning; nothing to start."""

    async def chunks(
        self, on_error: Callable[[str], None]
    ) -> AsyncIterator[np.ndarray]:
        """Chunks from stdin until it closes (no ``on_error``: the end is logged)."""
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer
        )
        async for chunk in _chunks(reader, self._format):
            yield _scaled(chunk, self._volume)
        _LOGGER.warning("stdin closed: no more mic audio")


async def _chunks(
    stream: asyncio.StreamReader, fmt: MicFormat
) -> AsyncIterator[np.ndarray]:
    """16 kHz mono chunks from ``stream`` until it ends."""
    if fmt.native:
        while data := await _read_exactly(stream, READ_BYTES):
            yield np.frombuffer(data, dtype=np.int16)
        return
    converter = MicConverter(fmt)
    while data := await _read_exactly(stream, fmt.read_bytes):
        for chunk in converter.convert(data):
            yield chunk


async def _read_exactly(stream: asyncio.StreamReader, size: int) -> bytes:
    try:
        return await stream.readexactly(size)
    except asyncio.IncompleteReadError:
        return b""


async def _stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        try:
            await asyncio.wait_for(process.wait(), 2.0)
        except TimeoutError:
            process.kill()
            await process.wait()
