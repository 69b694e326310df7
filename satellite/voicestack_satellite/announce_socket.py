"""The local announce socket (``--announce-socket PATH``): announcements from the Pi.

Scripts on the satellite (a doorbell button, a cron job) write JSON lines to a
Unix socket (``announce_lines.py``); each line goes to Home Assistant's announcer
as ``voicestack-announce`` over the connection that runs the satellite, so the
scripts need no Home Assistant token. Every line gets exactly one answer line,
``{"ok": true, "id": ...}`` once handed to that connection, or ``{"ok": false,
"error": ...}``; nothing is kept for later while Home Assistant is away. A
connection closed for being idle or to make room gets an error line too.

The socket file is mode 0600 (only the satellite's user may connect). It is
set between ``bind`` and ``listen``: a connect before ``listen`` is refused, so
no one ever connects under the umask's mode. Bounded: ``MAX_LINE_BYTES`` per
line (a longer one is answered, then the connection is closed, since the rest
of it cannot be told from the next line), ``MAX_CONNECTIONS`` at once, each
idle for at most ``IDLE_TIMEOUT_S``, a new one taking the place of an old one
(``announce_slots.py``), and ``RATE_LINES`` lines per ``RATE_PERIOD_S`` for the
whole socket (a token bucket).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import contextlib
import itertools
import json
import logging
from pathlib import Path
import secrets
import socket
import stat

from wyoming.event import Event

import voicestack_protocol as protocol

from .announce_lines import LineError, TokenBucket, parse_line
from .announce_slots import IDLE_TIMEOUT_S, MAX_CONNECTIONS, Slot, Slots

_LOGGER = logging.getLogger(__name__)

MAX_LINE_BYTES = 4096  # without the newline
RATE_LINES = 10  # lines the socket takes per RATE_PERIOD_S, every connection's
RATE_PERIOD_S = 10.0
SOCKET_MODE = 0o600
QUIET_LOG_S = 10.0  # repeated refusals (rate, size, idle): one warning per
IDLE = f"no complete line for {IDLE_TIMEOUT_S:g} s; closing the connection"
EVICTED = (
    f"closed to make room for a new connection ({MAX_CONNECTIONS} at most); "
    "connect again to send a line"
)

# Send a voicestack-announce to Home Assistant: None once sent, else why not.
Forward = Callable[[Event], str | None]


class AnnounceSocketError(Exception):
    """The socket cannot be set up; the message names the path and why."""


class AnnounceSocket:
    """Serves the socket from ``start`` until ``close``."""

    def __init__(
        self,
        path: Path,
        forward: Forward,
        *,
        clock: Callable[[], float],
        write_timeout_s: float,
    ) -> None:
        """``forward`` sends each good line on; ``clock`` paces the rate limit.

        The idle timeout runs on the event loop's clock.
        """
        self.path = path
        self._forward = forward
        self._clock = clock
        self._write_timeout_s = write_timeout_s
        self._bucket = TokenBucket(RATE_LINES, RATE_PERIOD_S, clock)
        self._ids = (f"{secrets.token_hex(3)}-{n}" for n in itertools.count(1))
        self._open: set[asyncio.StreamWriter] = set()  # evicted ones too, until shut
        self._slots = Slots()
        self._server: asyncio.AbstractServer | None = None
        self._inode: int | None = None
        self._quiet_until = float("-inf")  # repeated refusals log at debug until
        self._hidden = 0  # refusals logged at debug since the last warning

    async def start(self) -> None:
        """Replace a stale socket file, bind with mode 0600, listen."""
        sock = _bind(self.path)
        self._inode = self.path.lstat().st_ino
        self._server = await asyncio.start_unix_server(
            self._serve, sock=sock, limit=MAX_LINE_BYTES
        )
        _LOGGER.info("Announce socket listening on %s (mode 0600)", self.path)

    async def close(self) -> None:
        """Stop listening, cut every client, remove the socket file if still ours."""
        if self._server is not None:
            self._server.close()
        for writer in list(self._open):
            writer.transport.abort()
        with contextlib.suppress(OSError):
            if self.path.lstat().st_ino == self._inode:
                self.path.unlink()
        if self._server is not None:
            await self._server.wait_closed()

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        slot = Slot(writer)
        self._open.add(writer)
        try:
            if victim := self._slots.admit(slot):
                waited = asyncio.get_running_loop().time() - victim.since
                self._quietly(
                    f"connection of {victim.name}, which waited {waited:.1f} s "
                    "for a line",
                    f"closed to make room for {slot.name} ({MAX_CONNECTIONS} at most)",
                )
            while await self._serve_line(reader, writer, slot):
                pass
        except (ConnectionError, OSError, TimeoutError) as err:
            _LOGGER.debug("Announce socket: %s gone: %s", slot.name, err)
        except Exception:
            # A bug here must cost this connection, never the satellite.
            _LOGGER.exception("Announce socket: serving %s failed", slot.name)
        finally:
            self._slots.remove(slot)
            self._open.discard(writer)
            await self._close(writer)

    async def _serve_line(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, slot: Slot
    ) -> bool:
        """Read and answer one line; False ends the connection."""
        try:
            async with slot.waiting_for_line():
                line = await reader.readline()
        except ValueError:  # over the limit, separator found or not
            error = f"line longer than {MAX_LINE_BYTES} bytes; closing the connection"
            self._quietly(f"refused a line from {slot.name}", error)
            await self._send(writer, {"ok": False, "error": error})
            return False
        except TimeoutError:
            if not slot.evicted:
                self._quietly(f"connection of {slot.name}", IDLE)
            self._slots.remove(slot)  # a new connection need not wait for this one
            await self._send(
                writer, {"ok": False, "error": EVICTED if slot.evicted else IDLE}
            )
            return False
        if not line:
            return False
        await self._send(writer, self._answer(line, slot.name))
        slot.answered()
        return line.endswith(b"\n")

    def _answer(self, line: bytes, client: str) -> dict[str, object]:
        """The answer to one line: rate, then shape, then whether it could be sent."""
        if wait_s := self._bucket.take():
            error = (
                f"over the rate limit of {RATE_LINES} lines per {RATE_PERIOD_S:g} s;"
                f" try again in {wait_s:.1f} s"
            )
            self._quietly(f"refused a line from {client}", error)
            return {"ok": False, "error": error}
        try:
            fields = parse_line(line)
        except LineError as err:
            return self._refused(client, str(err))
        announce_id = next(self._ids)
        event = protocol.announce_event(announce_id, fields)
        if (why_not := self._forward(event)) is not None:
            return self._refused(client, why_not)
        _LOGGER.info(
            "Announce socket: sent %s from %s to Home Assistant (%d characters)",
            announce_id,
            client,
            len(str(fields["message"])),
        )
        return {"ok": True, "id": announce_id}

    def _refused(self, client: str, error: str) -> dict[str, object]:
        """A line refused for what it is: one warning each (the rate bounds them)."""
        _LOGGER.warning("Announce socket: refused a line from %s: %s", client, error)
        return {"ok": False, "error": error}

    def _quietly(self, what: str, error: str) -> None:
        """A refusal or close that may come in floods: one warning per ``QUIET_LOG_S``."""
        now = self._clock()
        if now < self._quiet_until:
            self._hidden += 1
            _LOGGER.debug("Announce socket: %s: %s", what, error)
            return
        more = f" ({self._hidden} more refused since, logged at debug level)"
        _LOGGER.warning(
            "Announce socket: %s: %s%s",
            what,
            error,
            more if self._hidden else "",
        )
        self._quiet_until = now + QUIET_LOG_S
        self._hidden = 0

    async def _send(
        self, writer: asyncio.StreamWriter, answer: dict[str, object]
    ) -> None:
        """Write one answer line; a client that does not read is cut after the timeout."""
        writer.write(json.dumps(answer).encode() + b"\n")
        async with asyncio.timeout(self._write_timeout_s):
            await writer.drain()

    async def _close(self, writer: asyncio.StreamWriter) -> None:
        """Close after the answers went out, within the write timeout."""
        writer.close()
        try:
            async with asyncio.timeout(self._write_timeout_s):
                await writer.wait_closed()
        except (ConnectionError, OSError, TimeoutError):
            writer.transport.abort()


def _bind(path: Path) -> socket.socket:
    """A Unix socket bound at ``path`` with mode 0600, not yet listening."""
    _remove_stale(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(path))
        path.chmod(SOCKET_MODE)
    except OSError as err:
        sock.close()
        raise AnnounceSocketError(
            f"cannot create the announce socket {path}: {err.strerror}"
        ) from err
    return sock


def _remove_stale(path: Path) -> None:
    """Remove a socket file nobody listens on (left by a crash or a kill -9)."""
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise AnnounceSocketError(f"{path} exists and is not a socket")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(str(path))
        except ConnectionRefusedError:
            _LOGGER.info("Replacing the stale announce socket %s", path)
            path.unlink(missing_ok=True)
            return
        except OSError as err:
            raise AnnounceSocketError(f"cannot check {path}: {err}") from err
    raise AnnounceSocketError(f"{path} is in use by another process")
