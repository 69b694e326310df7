"""Playback you can interrupt: one player, one device clock, streams in order.

The player writes small blocks to its sink only as fast as the sound card plays
them: the device holds one to two 10 ms blocks, so pause and flush take effect
within 20 ms, and ``played`` is reported when the last sample has really been
played: the player's clock plus ``latency_s``, the time the sound command itself
holds audio before the speaker (aplay's start delay). What the sink is told
was played is what was written to it, in order (a resume that jumps back plays
audio twice).

Memory is bounded whatever the owner sends: at most ``MAX_AHEAD_S`` of audio
waits to be played (``receive`` waits for room, so the owner's connection is no
longer read and TCP holds the owner back), and of what was played only the last
``HISTORY_S`` is kept, for a resume that goes back to a sentence's start.
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
from .memory import release_freed_memory

_LOGGER = logging.getLogger(__name__)

BLOCK_S = 0.01
PROGRESS_EVERY_S = 0.1
# Audio waiting to be played before the owner must wait. Longer than any spoken
# answer: a stock Home Assistant sends a whole response at once and reconnects
# when a ping goes unanswered for 5 s, which it would behind a full buffer.
MAX_AHEAD_S = 300.0
HISTORY_S = 30.0  # audio kept behind the play position, for a resume
# Audio converted in one go: a 4 MiB chunk (the payload limit) is converted and
# admitted piece by piece, so neither the bound nor the conversion's temporary
# arrays grow with the size of one event.
FEED_SLICE_S = 0.5
RELEASE_AFTER_S = 10.0  # a flush dropping this much gives the memory back


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
    """One stream's audio, from ``start`` (older samples are let go) to ``end``.

    Positions are absolute samples at the player's rate since the stream began.
    The audio is kept as the chunks it was fed in (no copying as it grows), and
    a cursor remembers the chunk holding ``position``.
    """

    stream_id: str
    in_rate: int
    frame_bytes: int
    converter: StreamConverter
    chunks: list[np.ndarray] = field(default_factory=list)
    start: int = 0  # the first sample still kept (chunks[0][0])
    end: int = 0  # after the last sample fed
    position: int = 0
    ended: bool = False
    received: int = 0  # samples fed, in the stream's own rate
    reported: int = 0  # position of the last progress report (this stream's own)
    cursor: int = 0  # index of the chunk holding ``position`` ...
    cursor_at: int = 0  # ... and that chunk's first sample
    # What went to the device, in order (only when the sink keeps it): a pause
    # and a resume at another offset play audio twice, and it is heard twice.
    heard: list[np.ndarray] | None = None

    @property
    def unplayed(self) -> int:
        """Samples fed and not yet written."""
        return max(0, self.end - self.position)

    def add(self, samples: np.ndarray) -> None:
        """Samples fed after the others."""
        if len(samples):
            self.chunks.append(samples)
            self.end += len(samples)

    def block(self, count: int) -> np.ndarray:
        """Up to ``count`` samples from ``position`` (fewer at the end of what came)."""
        if self.position < self.cursor_at:  # a resume went back
            self.cursor, self.cursor_at = 0, self.start
        chunks = self.chunks
        while (
            self.cursor < len(chunks)
            and self.cursor_at + len(chunks[self.cursor]) <= self.position
        ):
            self.cursor_at += len(chunks[self.cursor])
            self.cursor += 1
        pieces: list[np.ndarray] = []
        index, at, position = self.cursor, self.cursor_at, self.position
        while count > 0 and index < len(chunks):
            piece = chunks[index][position - at : position - at + count]
            pieces.append(piece)
            count -= len(piece)
            position += len(piece)
            at += len(chunks[index])
            index += 1
        if len(pieces) == 1:
            return pieces[0]
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)

    def wrote(self, samples: np.ndarray, history: int) -> None:
        """``samples`` from ``position`` went to the device; keep ``history`` behind."""
        if self.heard is not None:
            self.heard.append(samples.copy())
        self.position += len(samples)
        # Let go of whole chunks more than ``history`` behind (never the cursor's).
        drop = 0
        while (
            drop < self.cursor
            and self.start + len(self.chunks[drop]) <= self.position - history
        ):
            self.start += len(self.chunks[drop])
            drop += 1
        if drop:
            del self.chunks[:drop]
            self.cursor -= drop

    def seek(self, position: int) -> None:
        """Play from ``position`` next (never before the oldest sample kept)."""
        if position < self.start:
            _LOGGER.warning(
                "Cannot resume at sample %d: only the last %.0f s are kept; "
                "resuming at sample %d",
                position,
                HISTORY_S,
                self.start,
            )
        # Progress is reported from here on, also when this went back.
        self.position = self.reported = max(self.start, position)

    def release(self) -> int:
        """Let go of the audio (the stream is dropped); how many samples it held."""
        held = self.end - self.start
        self.chunks.clear()
        self.heard = None
        self.start = self.cursor_at = self.end
        self.cursor = 0
        return held

    def played(self) -> np.ndarray:
        """What came out of the speaker, in the order it did (if kept)."""
        if not self.heard:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(self.heard)


ProgressCallback = Callable[[str, int, int | None, str], None]


class Player:
    """Plays streams in order through a sink, paced by its own device clock."""

    def __init__(
        self,
        sink: Sink,
        rate: int,
        volume: float = 1.0,
        on_progress: ProgressCallback | None = None,
        on_played: Callable[[str, str], None] | None = None,
        *,
        latency_s: float = 0.0,
    ) -> None:
        """Progress reports are in the stream's own sample rate.

        ``on_played(stream_id, state)`` reports the end of each stream: ``state``
        is ``played`` (to its end) or ``flushed`` (dropped before it).

        ``latency_s`` is how long the sink holds audio before the speaker plays
        it: ``played`` waits that long after the player's own clock says done.
        """
        self._sink = sink
        self._rate = rate
        self._volume = volume
        self._latency_s = latency_s
        self._on_progress = on_progress or (lambda *_args: None)
        self._on_played = on_played or (lambda _stream_id, _state: None)
        self._max_ahead = round(MAX_AHEAD_S * rate)
        self._history = round(HISTORY_S * rate)
        self._room = asyncio.Event()  # set when audio was written or dropped
        self._streams: deque[_Stream] = deque()
        # Fully written, still in the device: their ``played`` is due in order.
        self._draining: deque[tuple[asyncio.TimerHandle, _Stream]] = deque()
        self._paused = False
        self._wake = asyncio.Event()  # new data or a control change
        self._control = asyncio.Event()  # pause, resume or flush only
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        """Something is playing or waiting to play (paused counts)."""
        return bool(self._streams or self._draining)

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
        for handle, _stream in self._draining:
            handle.cancel()
        self._draining.clear()
        await self._sink.close()

    def begin(self, stream_id: str, rate: int, width: int, channels: int) -> None:
        """A new stream (``audio-start``); it plays after the ones before it."""
        converter = StreamConverter(rate, width, channels, self._rate)
        heard: list[np.ndarray] | None = [] if self._sink.keeps_played else None
        self._streams.append(
            _Stream(stream_id, rate, width * channels, converter, heard=heard)
        )

    def feed(self, stream_id: str, audio: bytes) -> None:
        """Audio of stream ``stream_id``, at once (the satellite's own sounds)."""
        if (stream := self._find(stream_id)) is not None:
            self._feed(stream, audio)

    async def receive(self, stream_id: str, audio: bytes) -> None:
        """Audio of stream ``stream_id`` from the network, once there is room.

        Waits while more than ``MAX_AHEAD_S`` waits to be played, slice by slice;
        returns early when the stream was flushed meanwhile (its audio is dropped).
        """
        stream = self._find(stream_id)
        if stream is None:
            _LOGGER.debug("Audio for stream %s, which is no longer queued", stream_id)
            return
        step = max(1, round(FEED_SLICE_S * stream.in_rate)) * stream.frame_bytes
        for offset in range(0, len(audio), step):
            while self._unplayed() >= self._max_ahead:
                self._room.clear()
                await self._room.wait()
                if self._find(stream_id) is not stream:
                    return
            self._feed(stream, audio[offset : offset + step])

    def end(self, stream_id: str) -> None:
        """Stream ``stream_id`` is complete (``audio-stop``)."""
        if (stream := self._find(stream_id)) is not None:
            stream.ended = True
            self._wake.set()

    def _find(self, stream_id: str) -> _Stream | None:
        return next((s for s in self._streams if s.stream_id == stream_id), None)

    def _feed(self, stream: _Stream, audio: bytes) -> None:
        samples = stream.converter.convert(audio)
        stream.received += stream.converter.frames_in(audio)
        if self._volume != 1.0:
            samples = np.clip(samples * self._volume, -32768, 32767).astype(np.int16)
        stream.add(samples)
        self._wake.set()

    def _unplayed(self) -> int:
        return sum(stream.unplayed for stream in self._streams)

    def pause(self) -> None:
        """Stop writing after the current block; keep everything."""
        self._paused = True
        self._signal_control()

    def resume(self, offset: int | None = None) -> None:
        """Continue, optionally from ``offset`` samples (stream rate) into the stream."""
        if offset is not None and self._streams:
            stream = self._streams[0]
            stream.seek(round(offset * self._rate / stream.in_rate))
        self._paused = False
        self._signal_control()

    def flush(self, only: Callable[[str], bool] | None = None) -> None:
        """Drop every stream now, or those whose id ``only`` accepts.

        Each dropped stream still reports ``played``: the peer waits for it. Its
        audio is let go at once, and a large flush gives the memory back to the
        system (``memory.release_freed_memory``).
        """
        dropped: list[_Stream] = []
        kept: deque[_Stream] = deque()
        for stream in self._streams:
            (dropped if only is None or only(stream.stream_id) else kept).append(stream)
        self._streams = kept
        for stream in dropped:
            self._sink.stream_ended(stream.stream_id, stream.played())
            self._on_progress(
                stream.stream_id,
                self._in_rate(stream, stream.position),
                None,
                "flushed",
            )
            self._on_played(stream.stream_id, "flushed")
        held = sum(stream.release() for stream in dropped)
        if held >= RELEASE_AFTER_S * self._rate:
            release_freed_memory()
        if only is None:
            self._paused = False
        self._room.set()
        self._signal_control()

    def _report_played(self) -> None:
        """The oldest draining stream's last sample has been played."""
        _handle, stream = self._draining.popleft()
        self._sink.stream_ended(stream.stream_id, stream.played())
        total = stream.received
        self._on_progress(stream.stream_id, total, total, "played")
        self._on_played(stream.stream_id, "played")

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
            pending = stream.block(block) if stream else None
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
            if not len(pending):  # ended and fully written: the device plays it out
                self._streams.popleft()
                # The next stream is written right behind it (no gap); this one
                # reports when its last sample has left the speaker.
                handle = loop.call_at(
                    device_free_at + self._latency_s, self._report_played
                )
                self._draining.append((handle, stream))
                continue
            await self._sink.write(pending)
            stream.wrote(pending, self._history)
            self._room.set()
            device_free_at = (
                max(device_free_at, loop.time()) + len(pending) / self._rate
            )
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
