"""Home Assistant's end of one satellite: a Wyoming TCP client that stays connected.

A satellite is a Wyoming *server*; Home Assistant connects to it and drives it.
``SatelliteLink`` owns that one connection for as long as the integration runs:

1. connect, send ``describe``, wait for ``info`` (events before it are skipped);
2. send ``run-satellite`` and then a ``ping``. The satellite handles events in
   order, so the ``pong`` confirms that it accepted us as its owner, while a
   refusal (``error`` with code ``busy``: another Home Assistant or integration
   runs it) arrives before any ``pong``. Only then is the link *connected*, so a
   refused link never flaps connected/lost on every retry;
3. read events and hand them to the listener, answer the satellite's ``ping``
   and ``ping`` it every ``ping_interval_s``: no ``pong`` within
   ``pong_timeout_s`` means the connection is dead (a half-open TCP connection
   after a Wi-Fi drop or power loss is otherwise never noticed);
4. after any failure: close, wait ``Backoff.next_delay()``, start again, forever,
   until ``stop()``.

``connect_timeout_s`` bounds the whole of steps 1-2, so a peer that accepts but
never answers cannot hold the link. Closing always *aborts* the transport: a
polite close waits for unsent data, so a peer that stopped reading could block
``stop()`` (or a pending ``send``) forever.

Every event is read through ``wire.read_event``: a header line over
``MAX_HEADER_BYTES`` (64 KiB), a data or payload segment over
``MAX_PAYLOAD_BYTES`` (256 KiB) or malformed framing drops the connection with
the reason, before the body is read. Whatever answers at the satellite's
address cannot make Home Assistant buffer what it announces.

Logging follows Home Assistant's advice for unavailable devices: one WARNING when
a connection is lost, one INFO when it is back, and retries only at DEBUG.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
import contextlib
from dataclasses import dataclass, replace
import itertools
import logging
import time
from typing import Protocol, TypeVar, cast

from wyoming.error import Error
from wyoming.event import Event, async_write_event
from wyoming.info import Describe, Info
from wyoming.ping import Ping, Pong
from wyoming.satellite import RunSatellite

from voicestack_protocol import MAX_HEADER_BYTES, ProtocolError, parse_info, read_event

from .backoff import Backoff
from .wyoming_info import MALFORMED

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")  # not PEP 695 syntax: keeps core/ importable on Python 3.11

BUSY_CODE = "busy"  # error code of a satellite that already has an owner
# The largest data or payload segment of one event from the satellite: it sends
# mic audio (a voicestack-satellite 2,560 bytes per 80 ms chunk, a stock one
# 2,048), its ``info`` (a few KB) and small events. 256 KiB is 8 s of 16 kHz
# audio in one chunk; a larger length is refused before anything is read.
MAX_PAYLOAD_BYTES = 256 * 1024


class LinkListener(Protocol):
    """What the owner of a link (the Home Assistant side) is told."""

    def link_connected(self, info: Event) -> None:
        """The satellite accepted ``run-satellite``; ``info`` is its raw event."""

    def link_lost(self, reason: str) -> None:
        """A connection that was connected is gone (once per connection)."""

    def link_event(self, event: Event) -> None:
        """An event from the satellite (anything but ``info`` and ``pong``)."""

    def link_refused(self, reason: str) -> None:
        """The satellite is run by another connection (once until connected)."""


@dataclass(slots=True)
class LinkStats:
    """Counters for diagnostics (plain data; ``SatelliteLink.stats`` is a copy)."""

    connects: int = 0
    disconnects: int = 0
    last_error: str | None = None
    connected_since: float | None = None  # time.time() of the current connection
    pings_sent: int = 0
    last_rtt_ms: float | None = None


class _LinkDownError(Exception):
    """This connection (attempt) is over; ``reason`` is said in logs and to HA."""

    def __init__(self, reason: str, *, busy: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.busy = busy


class _Connection:
    """One TCP connection: framed reads and writes, and an abort that never waits."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader = reader
        self._writer = writer
        self.reason: str | None = None  # why we dropped it, once we did

    async def read(self) -> Event:
        """The next event; raises ``_LinkDownError`` when there is none.

        Bounded (``wire.read_event``): an event over ``MAX_PAYLOAD_BYTES`` or
        malformed drops the connection before its body is read.
        """
        try:
            event = await read_event(self._reader, MAX_PAYLOAD_BYTES)
        except OSError as err:
            raise _LinkDownError(self.reason or f"connection error: {err!r}") from err
        except ProtocolError as err:
            raise _LinkDownError(
                self.reason or f"invalid data from the satellite: {err}"
            ) from err
        if self.reason is not None:
            raise _LinkDownError(self.reason)
        if event is None:
            raise _LinkDownError("connection closed by the satellite")
        return event

    async def write(self, *events: Event) -> None:
        """Write events in one piece; raises ``OSError`` once the connection is gone.

        One ``transport.write`` keeps events that belong together in one TCP
        segment (see ``_run_satellite``) and never interleaves concurrent writers.
        """
        if self.reason is not None or self._writer.transport.is_closing():
            # Writing to a closed transport only logs asyncio warnings; fail clearly.
            raise ConnectionResetError(f"connection closed ({self.reason})")
        self._writer.write(await _encode(events))
        await self._writer.drain()

    def abort(self, reason: str) -> None:
        """Drop the connection now, discarding unsent data; wakes blocked calls."""
        if self.reason is None:
            self.reason = reason
        self._writer.transport.abort()

    async def close(self, reason: str) -> None:
        """Abort and wait until the socket is really closed (prompt after abort)."""
        self.abort(reason)
        with contextlib.suppress(OSError):
            await self._writer.wait_closed()


class _Buffer:
    """Collects what ``async_write_event`` writes (wyoming has no encoder alone)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.parts.append(data)

    def writelines(self, data: Iterable[bytes]) -> None:
        self.parts.extend(data)

    async def drain(self) -> None:
        """Nothing to wait for."""


async def _encode(events: Iterable[Event]) -> bytes:
    """The wire bytes of ``events``, exactly as wyoming writes them."""
    buffer = _Buffer()
    for event in events:
        await async_write_event(event, cast("asyncio.StreamWriter", buffer))
    return b"".join(buffer.parts)


class SatelliteLink:
    """Keeps one connection to a satellite at ``host``:``port``; see the module."""

    def __init__(
        self,
        host: str,
        port: int,
        listener: LinkListener,
        *,
        ping_interval_s: float = 10.0,
        pong_timeout_s: float = 5.0,
        connect_timeout_s: float = 5.0,
        backoff: Backoff | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        name: str | None = None,
    ) -> None:
        """``sleep`` waits out the backoff delays (tests inject a fast one)."""
        self._host = host
        self._port = port
        self._listener = listener
        self._ping_interval_s = ping_interval_s
        self._pong_timeout_s = pong_timeout_s
        self._connect_timeout_s = connect_timeout_s
        self._backoff = backoff or Backoff()
        self._sleep = sleep
        self.name = name or f"{host}:{port}"
        self._task: asyncio.Task[None] | None = None
        self._conn: _Connection | None = None  # only while connected
        self._connected = asyncio.Event()
        self._info: Event | None = None
        self._stats = LinkStats()
        self._ping_texts = (f"voicestack-{n}" for n in itertools.count(1))
        self._pong: tuple[str, asyncio.Future[None]] | None = None
        self._stage = ""  # what the current handshake waits for (for reasons)
        self._busy_warned = False

    # -- public -----------------------------------------------------------------

    def start(self) -> None:
        """Start connecting in the background (needs a running loop)."""
        if self._task is not None and not self._task.done():
            return
        self._task = asyncio.get_running_loop().create_task(
            self._run(), name=f"voicestack link {self.name}"
        )

    async def stop(self) -> None:
        """Stop for good: cancel, close the socket. Idempotent; no ``link_lost``."""
        task = self._task
        if task is None:
            return
        task.cancel()
        # asyncio.wait never raises the task's CancelledError, so a caller's own
        # cancellation still propagates; concurrent stop() calls all wait.
        await asyncio.wait([task])
        if self._task is task:
            self._task = None
        if not task.cancelled() and (err := task.exception()) is not None:
            _LOGGER.error("Link to %s had failed: %r", self.name, err)

    @property
    def connected(self) -> bool:
        """Connected, and the satellite accepted ``run-satellite``."""
        return self._conn is not None

    @property
    def info(self) -> Event | None:
        """The satellite's last raw ``info`` event (keeps the ``voicestack`` block)."""
        return self._info

    @property
    def stats(self) -> LinkStats:
        """A snapshot of the counters."""
        return replace(self._stats)

    def supports(self, event_type: str) -> bool:
        """Whether the satellite's ``voicestack`` block accepts ``event_type``.

        False for stock Wyoming satellites (no block) and before the first ``info``.
        """
        block = parse_info(self._info.data if self._info else None)
        return block is not None and event_type in block.accepts

    async def send(self, event: Event) -> bool:
        """Write ``event`` to the satellite; False if not connected or it failed.

        A failed write drops the connection, so the link reconnects.
        """
        conn = self._conn
        if conn is None:
            _LOGGER.debug("Not sending %s to %s: not connected", event.type, self.name)
            return False
        try:
            await conn.write(event)
        except OSError as err:
            _LOGGER.debug("Cannot send %s to %s: %s", event.type, self.name, err)
            conn.abort(f"cannot write to the satellite: {err}")
            return False
        return True

    async def wait_connected(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` until connected; whether it is."""
        try:
            async with asyncio.timeout(timeout_s):
                await self._connected.wait()
        except TimeoutError:
            return False
        return True

    # -- the loop ---------------------------------------------------------------

    async def _run(self) -> None:
        """Connect, serve, and after any failure wait and retry, until cancelled."""
        failed = 0  # attempts that failed since the link was last connected
        try:
            while True:
                failed = await self._cycle(failed)
                delay = self._backoff.next_delay()
                _LOGGER.debug("Next attempt to reach %s in %.2f s", self.name, delay)
                await self._sleep(delay)
        finally:
            self._set_disconnected()

    async def _cycle(self, failed: int) -> int:
        """One connection attempt, served until it ends; the new failure count."""
        try:
            conn, info, early = await self._handshake()
        except _LinkDownError as err:
            self._attempt_failed(err, failed + 1)
            return failed + 1
        except Exception:
            _LOGGER.exception("Unexpected error connecting to %s", self.name)
            return failed + 1
        self._on_connected(conn, info, attempts=failed + 1)
        reason = await self._serve(conn, early)
        self._on_lost(reason)
        return 0

    async def _handshake(self) -> tuple[_Connection, Event, list[Event]]:
        """Steps 1-2 of the module docstring, within ``connect_timeout_s``."""
        conn: _Connection | None = None
        done = False
        self._stage = "connecting"
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                reader, writer = await asyncio.open_connection(
                    self._host, self._port, limit=MAX_HEADER_BYTES
                )
                conn = _Connection(reader, writer)
                self._stage = "waiting for info"
                await conn.write(Describe().event())
                info = await self._read_info(conn)
                self._stage = "waiting for run-satellite to be accepted"
                early = await self._run_satellite(conn)
                done = True
                return conn, info, early
        except TimeoutError as err:  # before OSError: it is one
            raise _LinkDownError(
                f"timed out {self._stage} ({self._connect_timeout_s:g} s)"
            ) from err
        except OSError as err:
            if conn is None:
                raise _LinkDownError(f"cannot connect: {err}") from err
            raise _LinkDownError(f"connection error {self._stage}: {err}") from err
        finally:
            if conn is not None and not done:
                await conn.close("handshake failed")

    async def _read_info(self, conn: _Connection) -> Event:
        """Skip events until ``info`` (a satellite may be streaming already)."""
        while True:
            event = await conn.read()
            if Info.is_type(event.type):
                try:
                    Info.from_event(event)
                except MALFORMED as err:
                    raise _LinkDownError(
                        f"invalid info from the satellite: {err!r}"
                    ) from err
                return event
            _LOGGER.debug("Skipping %s from %s before info", event.type, self.name)

    async def _run_satellite(self, conn: _Connection) -> list[Event]:
        """Send ``run-satellite`` + ``ping``, wait for the ``pong``; events meanwhile.

        Raises ``_LinkDownError(busy=True)`` when another connection owns it.
        Both events go in one write: a busy satellite answers ``error`` and closes
        right after reading ``run-satellite``, and a ``ping`` still unread in its
        socket then would turn that close into a reset, which makes asyncio drop
        the buffered ``error`` (``StreamReader`` raises before returning data).
        """
        text = next(self._ping_texts)
        sent = time.monotonic()
        self._stats.pings_sent += 1
        await conn.write(RunSatellite().event(), Ping(text=text).event())
        early: list[Event] = []
        while True:
            event = await conn.read()
            kind = event.type
            if Pong.is_type(kind):
                if event.data.get("text") in (text, None):
                    self._stats.last_rtt_ms = (time.monotonic() - sent) * 1000
                    return early
            elif Error.is_type(kind) and event.data.get("code") == BUSY_CODE:
                detail = event.data.get("text") or "busy"
                raise _LinkDownError(f"busy: {detail}", busy=True)
            elif Info.is_type(kind):
                continue
            else:
                if Ping.is_type(kind):
                    await self._answer_ping(conn, event)
                early.append(event)

    async def _serve(self, conn: _Connection, early: list[Event]) -> str:
        """Read and dispatch until the connection ends; why it ended."""
        pinger = asyncio.get_running_loop().create_task(
            self._ping_loop(conn), name=f"voicestack link ping {self.name}"
        )
        try:
            for event in early:
                self._notify_event(event)
            while True:
                await self._handle(conn, await conn.read())
        except _LinkDownError as err:
            return err.reason
        except Exception as err:
            _LOGGER.exception("Unexpected error serving %s", self.name)
            return f"internal error: {err!r}"
        finally:
            self._set_disconnected()
            pinger.cancel()
            await asyncio.wait([pinger])
            await conn.close("link stopped")

    async def _handle(self, conn: _Connection, event: Event) -> None:
        """Dispatch one event of a connected satellite."""
        kind = event.type
        if Pong.is_type(kind):
            self._pong_arrived(event)
            return
        if Info.is_type(kind):
            self._info = event
            return
        if Ping.is_type(kind):
            await self._answer_ping(conn, event)
        self._notify_event(event)

    async def _answer_ping(self, conn: _Connection, event: Event) -> None:
        try:
            await conn.write(Pong(text=event.data.get("text")).event())
        except OSError as err:
            conn.abort(f"cannot write to the satellite: {err}")

    # -- keepalive --------------------------------------------------------------

    async def _ping_loop(self, conn: _Connection) -> None:
        """Ping every ``ping_interval_s``; abort the connection when one goes unanswered."""
        while True:
            await asyncio.sleep(self._ping_interval_s)
            try:
                async with asyncio.timeout(self._pong_timeout_s):
                    await self._ping(conn)
            except (
                TimeoutError
            ):  # also a write stuck behind a peer that stopped reading
                conn.abort(f"no pong within {self._pong_timeout_s:g} s")
                return
            except OSError as err:
                conn.abort(f"cannot write to the satellite: {err}")
                return

    async def _ping(self, conn: _Connection) -> None:
        """Send one ``ping`` and wait for its ``pong`` (the caller bounds the wait)."""
        text = next(self._ping_texts)
        waiter = asyncio.get_running_loop().create_future()
        self._pong = (text, waiter)
        try:
            sent = time.monotonic()
            self._stats.pings_sent += 1
            await conn.write(Ping(text=text).event())
            await waiter
            self._stats.last_rtt_ms = (time.monotonic() - sent) * 1000
        finally:
            self._pong = None

    def _pong_arrived(self, event: Event) -> None:
        """Resolve the outstanding ping (a peer may echo no text at all)."""
        if self._pong is None:
            return
        text, waiter = self._pong
        if event.data.get("text") in (text, None) and not waiter.done():
            waiter.set_result(None)

    # -- state, logs and the listener ------------------------------------------------

    def _on_connected(self, conn: _Connection, info: Event, attempts: int) -> None:
        self._conn = conn
        self._info = info
        self._connected.set()
        self._backoff.reset()
        self._busy_warned = False
        self._stats.connects += 1
        self._stats.connected_since = time.time()
        if self._stats.connects > 1:
            _LOGGER.info(
                "Satellite %s reconnected after %d %s",
                self.name,
                attempts,
                "attempt" if attempts == 1 else "attempts",
            )
        else:
            _LOGGER.info("Connected to satellite %s", self.name)
        self._notify(self._listener.link_connected, info)

    def _on_lost(self, reason: str) -> None:
        self._stats.disconnects += 1
        self._stats.last_error = reason
        _LOGGER.warning(
            "Lost connection to satellite %s: %s; reconnecting in the background",
            self.name,
            reason,
        )
        self._notify(self._listener.link_lost, reason)

    def _attempt_failed(self, err: _LinkDownError, failed: int) -> None:
        self._stats.last_error = err.reason
        if err.busy and not self._busy_warned:
            self._busy_warned = True
            _LOGGER.warning(
                "Satellite %s is run by another connection (%s); remove it from "
                "the other integration (e.g. Wyoming) so VoiceStack can run it",
                self.name,
                err.reason,
            )
            self._notify(self._listener.link_refused, err.reason)
        elif failed == 1 and self._stats.connects == 0 and not err.busy:
            _LOGGER.info(
                "Cannot reach satellite %s yet (%s); retrying in the background",
                self.name,
                err.reason,
            )
        else:
            _LOGGER.debug(
                "Attempt %d to reach %s failed: %s", failed, self.name, err.reason
            )

    def _set_disconnected(self) -> None:
        self._conn = None
        self._connected.clear()
        self._stats.connected_since = None

    def _notify_event(self, event: Event) -> None:
        self._notify(self._listener.link_event, event)

    def _notify(self, callback: Callable[[_T], None], arg: _T) -> None:
        """Call the listener; its bugs are logged, they never kill the link."""
        try:
            callback(arg)
        except Exception:
            _LOGGER.exception("Listener of %s failed: %s", self.name, callback)
