"""Who holds the announce socket's connections, and who makes room for a new one.

Scripts on the Pi come and go; one that forgets to close its connection (or a
``socat`` left waiting on a terminal) must not keep the others out. So a
connection holds its place only while it uses it:

- a connection that has not finished a line ``IDLE_TIMEOUT_S`` after it
  connected or was last answered is closed (``announce_socket.py`` sends the
  error line): the deadline is for the whole line, so bytes trickled one by one
  do not keep it open;
- a new connection is always taken. At ``MAX_CONNECTIONS`` it takes the place of
  a connection of the process (Linux's SO_PEERCRED pid) that would hold the most
  places, the new one counted, and of those the one that has waited longest for
  its next line. One process never keeps another out, and a process that opens
  connections and forgets them pushes out its own before anyone else's. (The uid
  tells nothing here: the socket is 0600, so every client is the satellite's
  user or root.)
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator
import contextlib
import socket
import struct

MAX_CONNECTIONS = 4
IDLE_TIMEOUT_S = 5.0  # to finish a line, from the connect or the last answer


class Slot:
    """One connection's place: whose it is and since when it waits for a line."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        """Waiting since now; the peer's pid read from the socket."""
        self.pid = _peer_pid(writer)
        self.name = "a client" if self.pid is None else f"pid {self.pid}"
        self.since = asyncio.get_running_loop().time()
        self.evicted = False
        self._wait: asyncio.Timeout | None = None

    def answered(self) -> None:
        """The connection's line is answered: its idle time starts again."""
        self.since = asyncio.get_running_loop().time()

    @contextlib.asynccontextmanager
    async def waiting_for_line(self) -> AsyncIterator[None]:
        """Bounds a wait for the next line: ``TimeoutError`` when idle or evicted."""
        if self.evicted:
            raise TimeoutError
        async with asyncio.timeout_at(self.since + IDLE_TIMEOUT_S) as wait:
            self._wait = wait
            try:
                yield
            finally:
                self._wait = None

    def evict(self) -> None:
        """Give the place up: the wait for a line ends now, or as it starts.

        A connection not waiting is stuck writing answers its client does not
        read; the write timeout ends that.
        """
        self.evicted = True
        if self._wait is not None and not self._wait.expired():
            self._wait.reschedule(asyncio.get_running_loop().time())


class Slots:
    """The connections that hold a place, never more than ``MAX_CONNECTIONS``."""

    def __init__(self) -> None:
        """No connection yet."""
        self._held: dict[Slot, None] = {}  # in the order they came

    def admit(self, slot: Slot) -> Slot | None:
        """Count ``slot`` in; the connection evicted to make room for it, if any."""
        victim = None
        if len(self._held) >= MAX_CONNECTIONS:
            places = Counter([*(held.pid for held in self._held), slot.pid])
            victim = min(self._held, key=lambda held: (-places[held.pid], held.since))
            victim.evict()
            del self._held[victim]
        self._held[slot] = None
        return victim

    def remove(self, slot: Slot) -> None:
        """``slot``'s connection is closing (idempotent)."""
        self._held.pop(slot, None)


def _peer_pid(writer: asyncio.StreamWriter) -> int | None:
    """Who connected (Linux's SO_PEERCRED); None where the system does not say."""
    sock = writer.get_extra_info("socket")
    peercred = getattr(socket, "SO_PEERCRED", None)
    if sock is None or peercred is None:
        return None
    try:
        credentials: tuple[int, int, int] = struct.unpack(
            "3i", sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
        )
    except OSError:
        return None
    return credentials[0]  # pid, uid, gid
