"""One TCP connection from a peer (Home Assistant): bounded reads, writes that never wait.

The mic loop sends the owner its audio, so a send must never wait on the network:
``send`` encodes the event and queues it, and a writer task per connection hands
the queue to the socket. A peer that stops reading is dropped (its transport
aborted, one warning with the reason) when more than ``MAX_QUEUED_BYTES`` wait
to be written or when one write does not drain within the write timeout. Closing
never waits either: what is queued gets the write timeout to go out, then the
connection is aborted.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
import io
import logging
import socket
import time

from wyoming.event import Event, write_event

from voicestack_protocol import MAX_HEADER_BYTES, ProtocolError, read_event

_LOGGER = logging.getLogger(__name__)

# Unsent bytes per connection before it counts as not reading: 8 s of the mic
# audio streamed during a request (32 kB/s), on top of what the kernel buffers.
MAX_QUEUED_BYTES = 256 * 1024
# What the kernel holds of a peer's unread data: fixed, not grown by Linux's
# autotuning (up to megabytes). While the full player holds the owner back
# (player.py), what it sends next (a ping, a flush) is read seconds later, not
# after minutes of audio queued in the socket.
RECEIVE_BUFFER_BYTES = 64 * 1024


class Peer:
    """A connected peer; sends never wait or raise, a stuck peer is dropped."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        write_timeout_s: float,
        observer: Callable[[Peer, str, Event | None], None] | None = None,
    ) -> None:
        """Wrap an accepted connection; nothing runs until the first send.

        ``observer`` hears each event read ("in") or sent ("out"), and
        "closed" (event_hooks.py).
        """
        self._reader = reader
        self._writer = writer
        self._write_timeout_s = write_timeout_s
        # A connection reset before it was served has no peer address any more.
        host, port = (writer.get_extra_info("peername") or ("?", 0))[:2]
        self.name = f"{host}:{port}"
        self._queue: deque[bytes] = deque()
        self._queued_bytes = 0
        self._queued = asyncio.Event()  # wakes the writer task
        self._writer_task: asyncio.Task[None] | None = None
        self._closing = False  # close(): write what is queued, then close
        self._aborted = False
        self.extensions = False  # sent voicestack-hello: wants our extra events
        self.end_of_speech_s: float | None = None  # asked us to end requests
        self.accepts: tuple[str, ...] = ()  # our events it asked for by name
        self.connected_at = time.monotonic()
        self.last_seen = self.connected_at  # when the peer last sent an event
        self.heard = False  # it has sent at least one complete event
        self.observer = observer
        # StreamReader has no setter for its limit.
        reader._limit = MAX_HEADER_BYTES  # type: ignore[attr-defined]  # noqa: SLF001
        if (sock := writer.get_extra_info("socket")) is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER_BYTES)

    @property
    def closed(self) -> bool:
        """Closing or closed: nothing more is sent."""
        return self._closing or self._aborted

    async def read(
        self, max_payload: int, idle_timeout_s: float | None = None
    ) -> Event | None:
        """Next event, or ``None`` when the peer is gone, sent garbage or stayed silent.

        ``idle_timeout_s`` bounds the wait for the next complete event (``None``:
        no bound), so a connection trickling an event byte by byte counts as silent.
        """
        try:
            async with asyncio.timeout(idle_timeout_s):
                event = await read_event(self._reader, max_payload)
        except TimeoutError:  # before OSError: it is one
            _LOGGER.info(
                "Closing %s: no event for %g s (only the owner may stay silent)",
                self.name,
                idle_timeout_s,
            )
        except ProtocolError as err:
            _LOGGER.warning("Dropping connection from %s: %s", self.name, err)
        except (ConnectionError, OSError) as err:
            _LOGGER.info("Connection from %s lost: %s", self.name, err)
        else:
            if event is not None:
                self.last_seen = time.monotonic()
                self.heard = True
                if self.observer is not None:
                    self.observer(self, "in", event)
            return event
        return None

    def send(self, event: Event) -> None:
        """Queue ``event`` for the writer task; never waits.

        A peer with more than ``MAX_QUEUED_BYTES`` unsent is dropped instead (one
        event of any size is queued when nothing waits, so a large reply the
        limits allowed can still go out).
        """
        if self.closed:
            return
        if self.observer is not None:
            self.observer(self, "out", event)
        data = _encode(event)
        if self._queue and self._queued_bytes + len(data) > MAX_QUEUED_BYTES:
            self.abort(
                f"more than {MAX_QUEUED_BYTES // 1024} KiB waiting to be sent "
                "(it does not read)"
            )
            return
        self._queue.append(data)
        self._queued_bytes += len(data)
        self._queued.set()
        if self._writer_task is None:
            self._writer_task = asyncio.get_running_loop().create_task(
                self._write_queue(), name=f"voicestack-satellite write {self.name}"
            )

    def close(self) -> None:
        """Close after writing what is queued (idempotent, never waits).

        The writer task gives the queue ``write_timeout_s`` per write and the close
        as long again, then aborts.
        """
        if self.closed:
            return
        self._closing = True
        if self.observer is not None:
            self.observer(self, "closed", None)
        if self._writer_task is None:
            self._writer.close()  # nothing was ever written: nothing to flush
        else:
            self._queued.set()

    def abort(self, reason: str | None = None) -> None:
        """Drop the connection at once, discarding what is unsent (idempotent).

        ``reason`` is logged as one warning; ``None`` when the caller logged it.
        """
        if self._aborted:
            return
        self._aborted = True
        if self.observer is not None:
            self.observer(self, "closed", None)
        if reason is not None:
            _LOGGER.warning("Dropping %s: %s", self.name, reason)
        self._queue.clear()
        self._queued_bytes = 0
        self._writer.transport.abort()
        task = self._writer_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    async def wait_closed(self) -> None:
        """Until the connection is closed; bounded once ``close``/``abort`` was called."""
        if self._writer_task is not None:
            await asyncio.wait([self._writer_task])  # never raises its exception
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError) as err:
            _LOGGER.debug("Connection from %s ended with %s", self.name, err)

    async def _write_queue(self) -> None:
        """Hand queued events to the socket, each write bounded by the timeout."""
        try:
            while not self._aborted:
                while self._queue:
                    data = self._queue.popleft()
                    self._queued_bytes -= len(data)
                    self._writer.write(data)
                    if not await self._drained():
                        return
                if self._closing:
                    self._writer.close()
                    await self._drained(closed=True)
                    return
                self._queued.clear()
                await self._queued.wait()
        except (ConnectionError, OSError) as err:
            _LOGGER.info("Cannot write to %s: %s", self.name, err)
            self.abort()
        except Exception:
            # A bug or an interpreter quirk in the write path (Python 3.13 raised
            # TypeError on a reset) must cost this connection, never the satellite.
            _LOGGER.exception("Writing to %s failed", self.name)
            self.abort()

    async def _drained(self, *, closed: bool = False) -> bool:
        """Wait for the socket to take the data; False (and dropped) after the timeout."""
        try:
            async with asyncio.timeout(self._write_timeout_s):
                if closed:
                    await self._writer.wait_closed()
                else:
                    await self._writer.drain()
        except TimeoutError:
            self.abort(
                f"could not write for {self._write_timeout_s:g} s (it does not read)"
            )
            return False
        return True


def _encode(event: Event) -> bytes:
    """The event's bytes on the wire, exactly as wyoming writes them."""
    buffer = io.BytesIO()
    write_event(event, buffer)  # any binary stream does
    return buffer.getvalue()
