"""How many connections the satellite keeps, and how much a non-owner may send.

Anyone on the network can connect (zeroconf announces the port), so the
connections and what they may make the satellite buffer are bounded:

- at most ``--max-connections`` are open. When a new one arrives at the limit, the
  oldest connection that has not sent a single complete event yet (a probe, a
  port scanner, a flood of idle sockets) is closed to make room, so Home
  Assistant's ``describe`` still gets in; if every connection has spoken, the
  new one is closed at once;
- a connection that does not own the satellite may send events of at most
  ``NON_OWNER_MAX_PAYLOAD`` bytes of data and as much payload (or
  ``--max-payload`` if that is smaller; ``describe``,
  ``ping``, ``voicestack-hello`` and ``run-satellite`` need a few bytes); only the
  owner gets ``--max-payload``. The worst case held for unfinished events is
  thus one owner's ``2 x --max-payload`` plus ``2 x NON_OWNER_MAX_PAYLOAD`` per
  other connection (plus each connection's header line and read buffer).

The idle timeout for non-owners is a bound on each read (``Peer.read``).
"""

from __future__ import annotations

import logging
import time

from .peer import Peer

_LOGGER = logging.getLogger(__name__)

NON_OWNER_MAX_PAYLOAD = 16 * 1024


class ConnectionLimit:
    """The open connections, never more than ``limit``."""

    def __init__(self, limit: int) -> None:
        """``limit`` counts every connection, the owner's too."""
        self._limit = limit
        self._open: dict[Peer, None] = {}  # in the order they came
        # Refused or closed since the count was last below the limit: the first
        # is a warning, the rest of a flood only debug lines and one summary.
        self._turned_away = 0

    def admit(self, peer: Peer) -> bool:
        """Count ``peer`` in, making room if it can; False: ``peer`` was closed."""
        if len(self._open) >= self._limit:
            silent = next((p for p in self._open if not p.heard), None)
            if silent is None:
                self._turn_away(f"refusing {peer.name}: every connection is in use")
                peer.abort()
                return False
            waited = time.monotonic() - silent.connected_at
            self._turn_away(
                f"closing {silent.name}, which has sent nothing in {waited:.1f} s, "
                f"to admit {peer.name}"
            )
            silent.abort()
            del self._open[silent]
        self._open[peer] = None
        return True

    def remove(self, peer: Peer) -> None:
        """``peer`` is closed (idempotent)."""
        self._open.pop(peer, None)
        if self._turned_away and len(self._open) < self._limit:
            _LOGGER.info(
                "Below the connection limit again; %d connection(s) were refused "
                "or closed to stay within %d",
                self._turned_away,
                self._limit,
            )
            self._turned_away = 0

    def abort_all(self) -> None:
        """Cut every connection at once (shutdown)."""
        for peer in list(self._open):
            peer.abort()

    def _turn_away(self, what: str) -> None:
        self._turned_away += 1
        level = logging.WARNING if self._turned_away == 1 else logging.DEBUG
        _LOGGER.log(level, "Connection limit (%d) reached: %s", self._limit, what)
