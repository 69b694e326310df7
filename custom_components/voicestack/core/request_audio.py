"""The audio of one voice request, from the satellite to Home Assistant's pipeline.

The satellite pushes chunks as fast as it likes; the pipeline pulls them as fast
as speech-to-text takes them. Whatever sits in between must be bounded, because
the peer is not trusted (anything at the satellite's address can stream): an
unbounded queue took Home Assistant from 189 to 504 MB when a peer streamed
without end (issue 12, item 8). Two limits, and one fate at either:

- at most ``max_bytes`` of audio wait to be read (default 320,000 bytes: 10 s of
  16 kHz 16-bit mono, the pipeline's format);
- the request may stream for at most ``max_s`` seconds (default 30 s: twice the
  satellite's own ``--max-request`` default of 15 s, and above Home Assistant's
  VAD timeout of 15 s of audio), counted from the start of speech-to-text on a
  timer, so a peer that stops sending is caught as well.

At either limit the audio ends as if the satellite had sent ``audio-stop``: what
is queued is still transcribed, later chunks are dropped (and counted), and
``on_limit`` is told why, once. Dropping the oldest audio instead would hand
speech-to-text a command with a hole in it; ending is what a user can make
sense of.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from .clock import Cancellable, Clock

BYTES_PER_SECOND = 16000 * 2  # 16 kHz, 16-bit, mono: the pipeline's audio
MAX_QUEUED_AUDIO_BYTES = 10 * BYTES_PER_SECOND
MAX_REQUEST_S = 30.0


class RequestAudio:
    """A bounded queue of one request's audio chunks; see the module."""

    def __init__(
        self,
        clock: Clock,
        on_limit: Callable[[str], None],
        *,
        max_bytes: int = MAX_QUEUED_AUDIO_BYTES,
        max_s: float = MAX_REQUEST_S,
    ) -> None:
        """Open for audio; the length limit runs once ``start_deadline`` is called."""
        self._clock = clock
        self._on_limit = on_limit
        self.max_bytes = max_bytes
        self.max_s = max_s
        self._queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._deadline: Cancellable | None = None
        self.ended = False
        self.queued_bytes = 0
        self.peak_bytes = 0  # the most that ever waited: never over max_bytes
        self.received_bytes = 0  # everything the satellite sent
        self.dropped_bytes = 0  # ... of which nobody will read

    def start_deadline(self) -> None:
        """Speech-to-text starts now: from here the request may last ``max_s``.

        A request that starts at the wake word stage (Home Assistant's wake word
        engine listens to a stock satellite) may stream for as long as nobody
        says it; its deadline starts at the detection.
        """
        if self._deadline is None and not self.ended:
            self._deadline = self._clock.call_later(self.max_s, self._too_long)

    def put(self, chunk: bytes) -> None:
        """A chunk from the satellite: queued, or dropped once the audio ended."""
        self.received_bytes += len(chunk)
        if not self.ended and self.queued_bytes + len(chunk) > self.max_bytes:
            self._limit(
                f"speech-to-text fell behind: more than {self.max_bytes} bytes "
                f"({self.max_bytes / BYTES_PER_SECOND:g} s) of audio waiting"
            )
        if self.ended:
            self.dropped_bytes += len(chunk)
            return
        self._queue.put_nowait(chunk)
        self.queued_bytes += len(chunk)
        self.peak_bytes = max(self.peak_bytes, self.queued_bytes)

    def end(self) -> None:
        """No more audio: ``audio-stop``, the pipeline stopped reading, or a cancel."""
        if self.ended:
            return
        self.ended = True
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._queue.put_nowait(None)

    def close(self) -> None:
        """Nobody reads any more (the pipeline's VAD ended, the run is over).

        Ends the audio and frees what still waits: it is dropped, not kept
        until the next request.
        """
        self.end()
        while not self._queue.empty():
            if chunk := self._queue.get_nowait():
                self.queued_bytes -= len(chunk)
                self.dropped_bytes += len(chunk)
        self._queue.put_nowait(None)  # a reader that comes back still ends

    async def chunks(self) -> AsyncIterator[bytes]:
        """The queued chunks in order, until the end."""
        while (chunk := await self._queue.get()) is not None:
            self.queued_bytes -= len(chunk)
            yield chunk

    def _too_long(self) -> None:
        self._deadline = None
        self._limit(f"still streaming after {self.max_s:g} s")

    def _limit(self, reason: str) -> None:
        self.end()
        self._on_limit(reason)
