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
import logging
from typing import Protocol

import numpy as np

from .audio import StreamConverter
from .memory import release_freed_memory
from .player_stream import HISTORY_S, PlayerStream
from .sinks import Sink

_LOGGER = logging.getLogger(__name__)

BLOCK_S = 0.01
PROGRESS_EVERY_S = 0.1
# Audio waiting to be played before the owner must wait. Longer than any spoken
# answer: a stock Home Assistant sends a whole response at once and reconnects
# when a ping goes unanswered for 5 s, which it would behind a full buffer.
MAX_AHEAD_S = 300.0
# Audio converted in one go: a 4 MiB chunk (the payload limit) is converted and
# admitted piece by piece, so neither the bound nor the conversion's temporary
# arrays grow with the size of one event.
FEED_SLICE_S = 0.5
RELEASE_AFTER_S = 10.0  # a flush dropping this much gives the memory back


class PlaybackListener(Protocol):
    """What the player reports to (``Player.subscribe``)."""

    def on_progress(
        self, stream_id: str, played: int, total: int | None, state: str
    ) -> None:
        """Samples of the stream played so far, in the stream's own rate.

        ``state`` is ``playing`` (every 0.1 s), ``played`` (``total`` is set)
        or ``flushed``.
        """

    def on_played(self, stream_id: str, state: str) -> None:
        """The stream ended: ``played`` (to its end) or ``flushed`` (dropped)."""


class WriteListener(Protocol):
    """What hears every block the player writes (``Player.subscribe_writes``)."""

    def on_written(self, samples: np.ndarray, heard_at: float) -> None:
        """``samples`` (player rate) reach the speaker at loop time ``heard_at``."""


class Player:
    """Plays streams in order through a sink, paced by its own device clock."""

    def __init__(
        self, sink: Sink, rate: int, volume: float = 1.0, *, latency_s: float = 0.0
    ) -> None:
        """``latency_s``: how long the sink holds audio before the speaker plays it.

        ``played`` waits that long after the player's own clock says done.
        """
        self._sink = sink
        self._rate = rate
        self._volume = volume
        self._latency_s = latency_s
        self._listeners: list[PlaybackListener] = []
        self._writes: list[WriteListener] = []
        self._max_ahead = round(MAX_AHEAD_S * rate)
        self._history = round(HISTORY_S * rate)
        self._room = asyncio.Event()  # set when audio was written or dropped
        self._streams: deque[PlayerStream] = deque()
        # Fully written, still in the device: their ``played`` is due in order.
        self._draining: deque[tuple[asyncio.TimerHandle, PlayerStream]] = deque()
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

    def subscribe(self, listener: PlaybackListener) -> None:
        """Report every stream's progress and end to ``listener`` from now on."""
        self._listeners.append(listener)

    def subscribe_writes(self, listener: WriteListener) -> None:
        """Tell ``listener`` every block written from now on (the echo's reference)."""
        self._writes.append(listener)

    def playing(self) -> tuple[str, int] | None:
        """The stream being played and its position (its own rate); None: none.

        None while paused too: nothing is coming out of the speaker.
        """
        if self._paused or not self._streams:
            return None
        stream = self._streams[0]
        return stream.stream_id, self._in_rate(stream, stream.position)

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
            PlayerStream(stream_id, rate, width * channels, converter, heard=heard)
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
        step = max(1, round(FEED_SLICE_S * stream.in_rate)) * stream.sample_bytes
        for offset in range(0, len(audio), step):
            while self._unplayed() >= self._max_ahead:
                self._room.clear()
                await self._room.wait()
                if self._find(stream_id) is not stream:
                    return
            self._feed(stream, audio[offset : offset + step])

    def end(self, stream_id: str) -> None:
        """Stream ``stream_id`` is complete (``audio-stop``)."""
        if (stream := self._find(stream_id)) is not None and not stream.ended:
            self._feed(stream, b"", last=True)  # what the resampler held back
            stream.ended = True

    def _find(self, stream_id: str) -> PlayerStream | None:
        return next((s for s in self._streams if s.stream_id == stream_id), None)

    def _feed(self, stream: PlayerStream, audio: bytes, *, last: bool = False) -> None:
        samples = stream.converter.convert(audio, last=last)
        stream.received += stream.converter.samples_in(audio)
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
        system (``memory.release_freed_memory``). A pause holds the stream it
        paused: when that one goes, the pause ends with it, so what comes next
        (the reply to a barge-in) plays. Dropping only streams queued behind it
        keeps the pause.
        """
        head = self._streams[0] if self._streams else None
        dropped: list[PlayerStream] = []
        kept: deque[PlayerStream] = deque()
        for stream in self._streams:
            (dropped if only is None or only(stream.stream_id) else kept).append(stream)
        self._streams = kept
        for stream in dropped:
            self._sink.stream_ended(stream.stream_id, stream.played())
            position = self._in_rate(stream, stream.position)
            self._report(stream.stream_id, position, None, "flushed")
        held = sum(stream.release() for stream in dropped)
        if held >= RELEASE_AFTER_S * self._rate:
            release_freed_memory()
        if only is None or any(stream is head for stream in dropped):
            self._paused = False
        self._room.set()
        self._signal_control()

    def _report_played(self) -> None:
        """The oldest draining stream's last sample has been played."""
        _handle, stream = self._draining.popleft()
        self._sink.stream_ended(stream.stream_id, stream.played())
        self._report(stream.stream_id, stream.received, stream.received, "played")

    def _report(
        self, stream_id: str, played: int, total: int | None, state: str
    ) -> None:
        """To every listener: progress, and the end of the stream unless playing."""
        for listener in self._listeners:
            listener.on_progress(stream_id, played, total, state)
            if state != "playing":
                listener.on_played(stream_id, state)

    def _signal_control(self) -> None:
        self._control.set()
        self._wake.set()

    def _in_rate(self, stream: PlayerStream, position: int) -> int:
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
            starts_at = max(device_free_at, loop.time())
            for listener in self._writes:
                listener.on_written(pending, starts_at + self._latency_s)
            device_free_at = starts_at + len(pending) / self._rate
            if stream.position - stream.reported >= PROGRESS_EVERY_S * self._rate:
                stream.reported = stream.position
                position = self._in_rate(stream, stream.position)
                self._report(stream.stream_id, position, None, "playing")
            # Write the next block when one is left in the device; wake at once on pause,
            # resume or flush so they take effect within a block.
            self._control.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    self._control.wait(),
                    max(0.0, device_free_at - loop.time() - BLOCK_S),
                )
