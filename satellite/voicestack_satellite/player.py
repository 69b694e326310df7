"""Playback you can interrupt: one player, one device clock, streams in order.

The player writes small blocks to its sink only as fast as the sound card plays
them: the device holds one to two 10 ms blocks, so pause and flush take effect
within 20 ms, and ``played`` is reported when the last sample has really been
played. Whole streams are kept, so playback can resume at any sample offset.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
import contextlib
from dataclasses import dataclass, field
import logging
from pathlib import Path
from typing import Protocol

import numpy as np

from .audio import StreamConverter, write_wav

_LOGGER = logging.getLogger(__name__)

BLOCK_S = 0.01
PROGRESS_EVERY_S = 0.1


class Sink(Protocol):
    """Where samples go. ``write`` must not block for long."""

    async def write(self, samples: np.ndarray) -> None:
        """Hand samples to the device."""

    def stream_ended(self, stream_id: str, samples: np.ndarray) -> None:
        """A stream finished or was flushed; ``samples`` is what was played."""

    async def close(self) -> None:
        """Release the device."""


class FileSink:
    """Each stream becomes a WAV next to ``path`` when it ends.

    Streams from the peer are ``<stem>.<n>.wav``, numbered from 1 in the order they
    end; the satellite's own sounds (non-numeric ids such as ``awake-3``) are
    ``<stem>-sounds.<id>.wav``, so they never shift the peer's numbering.
    """

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

    def __init__(self, argv: list[str]) -> None:
        """``argv`` is run directly (no shell), once, and restarted if it dies."""
        self._argv = argv
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
            process.stdin.write(samples.tobytes())
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


@dataclass(slots=True)
class _Stream:
    stream_id: str
    in_rate: int
    converter: StreamConverter
    parts: list[np.ndarray] = field(default_factory=list)
    samples: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int16))
    position: int = 0
    ended: bool = False
    received: int = 0  # samples fed, in the stream's own rate
    reported: int = 0  # position of the last progress report (this stream's own)

    def buffered(self) -> np.ndarray:
        if self.parts:
            self.samples = np.concatenate([self.samples, *self.parts])
            self.parts.clear()
        return self.samples


ProgressCallback = Callable[[str, int, int | None, str], None]


class Player:
    """Plays streams in order through a sink, paced by its own device clock."""

    def __init__(
        self,
        sink: Sink,
        rate: int,
        volume: float = 1.0,
        on_progress: ProgressCallback | None = None,
        on_played: Callable[[str], None] | None = None,
    ) -> None:
        """Progress reports are in the stream's own sample rate."""
        self._sink = sink
        self._rate = rate
        self._volume = volume
        self._on_progress = on_progress or (lambda *_args: None)
        self._on_played = on_played or (lambda _stream_id: None)
        self._streams: deque[_Stream] = deque()
        self._paused = False
        self._wake = asyncio.Event()  # new data or a control change
        self._control = asyncio.Event()  # pause, resume or flush only
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        """Something is playing or waiting to play (paused counts)."""
        return bool(self._streams)

    @property
    def paused(self) -> bool:
        """Playback is paused."""
        return self._paused

    def start(self) -> None:
        """Start the playback task."""
        self._task = asyncio.create_task(self._run(), name="voicestack player")

    async def close(self) -> None:
        """Stop the task and the sink."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self._sink.close()

    def begin(self, stream_id: str, rate: int, width: int, channels: int) -> None:
        """A new stream (``audio-start``); it plays after the ones before it."""
        converter = StreamConverter(rate, width, channels, self._rate)
        self._streams.append(_Stream(stream_id, rate, converter))

    def feed(self, audio: bytes) -> None:
        """Audio of the newest stream (``audio-chunk``)."""
        if not self._streams:
            _LOGGER.warning("Audio chunk without audio-start: dropped")
            return
        stream = self._streams[-1]
        samples = stream.converter.convert(audio)
        stream.received += stream.converter.frames_in(audio)
        if self._volume != 1.0:
            samples = np.clip(samples * self._volume, -32768, 32767).astype(np.int16)
        stream.parts.append(samples)
        self._wake.set()

    def end(self) -> None:
        """The newest stream is complete (``audio-stop``)."""
        if self._streams:
            self._streams[-1].ended = True
            self._wake.set()

    def pause(self) -> None:
        """Stop writing after the current block; keep everything."""
        self._paused = True
        self._signal_control()

    def resume(self, offset: int | None = None) -> None:
        """Continue, optionally from ``offset`` samples (stream rate) into the stream."""
        if offset is not None and self._streams:
            stream = self._streams[0]
            stream.position = max(0, round(offset * self._rate / stream.in_rate))
        self._paused = False
        self._signal_control()

    def flush(self, only: Callable[[str], bool] | None = None) -> None:
        """Drop every stream now, or those whose id ``only`` accepts.

        Each dropped stream still reports ``played``: the peer waits for it.
        """
        dropped: list[_Stream] = []
        kept: deque[_Stream] = deque()
        for stream in self._streams:
            (dropped if only is None or only(stream.stream_id) else kept).append(stream)
        self._streams = kept
        for stream in dropped:
            played = stream.buffered()[: stream.position]
            self._sink.stream_ended(stream.stream_id, played)
            self._on_progress(
                stream.stream_id,
                self._in_rate(stream, stream.position),
                None,
                "flushed",
            )
            self._on_played(stream.stream_id)
        if only is None:
            self._paused = False
        self._signal_control()

    def _signal_control(self) -> None:
        self._control.set()
        self._wake.set()

    def _in_rate(self, stream: _Stream, position: int) -> int:
        return round(position * stream.in_rate / self._rate)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        block = max(1, round(BLOCK_S * self._rate))
        device_free_at = loop.time()  # when the device has played all it was given
        while True:
            stream = self._streams[0] if self._streams else None
            pending = stream.buffered()[stream.position :] if stream else None
            if (
                stream is None
                or self._paused
                or (pending is not None and not len(pending) and not stream.ended)
            ):
                self._wake.clear()
                await self._wake.wait()
                device_free_at = max(device_free_at, loop.time())
                continue
            assert pending is not None
            if not len(pending):  # ended and fully written: wait for the device
                await asyncio.sleep(max(0.0, device_free_at - loop.time()))
                if self._streams and self._streams[0] is stream:
                    self._streams.popleft()
                    self._sink.stream_ended(stream.stream_id, stream.samples)
                    total = stream.received
                    self._on_progress(stream.stream_id, total, total, "played")
                    self._on_played(stream.stream_id)
                continue
            chunk = pending[:block]
            await self._sink.write(chunk)
            stream.position += len(chunk)
            device_free_at = max(device_free_at, loop.time()) + len(chunk) / self._rate
            if stream.position - stream.reported >= PROGRESS_EVERY_S * self._rate:
                stream.reported = stream.position
                self._on_progress(
                    stream.stream_id,
                    self._in_rate(stream, stream.position),
                    None,
                    "playing",
                )
            # Write the next block when one is left in the device; wake at once on pause,
            # resume or flush so they take effect within a block.
            self._control.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._control.wait(),
                    max(0.0, device_free_at - loop.time() - BLOCK_S),
                )
