"""The satellite's parts, wired: mic -> request to the owner; owner's audio -> player.

- ``session.Session``: peers, ownership, each event to the part it is for, ``info``;
- ``listener.Listener``: mic -> wake word, listen windows, the request's audio;
- ``peer_streams.PeerStreams``: the owner's audio in the player, ``played``;
- ``feedback.Feedback``: state for ``--event-command``, our sounds, timers.

The coordinator subscribes to the player: its ``on_progress`` and ``on_played``
tell each part what it needs to know.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .feedback import Feedback, FeedbackState
from .hooks import EventCommand
from .listener import Listener
from .peer import Peer
from .peer_streams import PeerStreams
from .player import Player
from .session import Session
from .settings import Settings
from .sounds import Sounds
from .wake import WakeDetector


class SatelliteCoordinator:
    """Builds the parts around one player and one wake word detector."""

    def __init__(
        self,
        settings: Settings,
        wake: WakeDetector,
        player: Player,
        *,
        sounds: Sounds,
        hooks: EventCommand | None = None,
        on_run: Callable[[], None] = lambda: None,
    ) -> None:
        """``on_run`` is called at each ``run-satellite`` (it starts a mic file).

        From here on the coordinator hears everything ``player`` reports.
        """
        self._player = player
        self.feedback = Feedback(
            player, sounds, hooks, timer_repeat=settings.timer_repeat
        )
        self.listener = Listener(settings, wake, player, self.feedback)
        self._streams = PeerStreams(player, self.feedback)
        self.session = Session(
            settings,
            wake,
            player,
            (self.listener, self._streams, self.feedback),
            on_run,
        )
        player.subscribe(self)

    async def handle_peer(self, peer: Peer) -> None:
        """Serve one connection until it closes, is dropped or stays silent."""
        await self.session.handle_peer(peer)

    async def process_mic(self, samples: np.ndarray) -> None:
        """Handle one mic chunk."""
        await self.listener.process(samples)

    def report_error(self, message: str) -> None:
        """A part of the satellite failed (e.g. the mic command): state ``error``."""
        self.feedback.report_error(message)

    def on_progress(
        self, stream_id: str, played: int, total: int | None, state: str
    ) -> None:
        """The player's progress report: to the stream's peer, if it asked."""
        self._streams.on_progress(stream_id, played, total, state)

    def on_played(self, stream_id: str, state: str) -> None:
        """A stream ended (``played`` or ``flushed``): tell whom it concerns.

        After our own sounds the state stays (the awake chime unmutes the
        request); after the owner's, the satellite is idle once nothing plays
        and nothing streams.
        """
        self.listener.playback_ended()
        if self.feedback.sound_ended(stream_id):
            self.listener.sound_ended(stream_id)
            return
        self._streams.on_played(stream_id, state)
        if not self._player.busy and not self.listener.streaming:
            self.feedback.set_state_soon(FeedbackState.IDLE)

    async def close(self) -> None:
        """Cut the owner connection; stop the inference thread."""
        self.listener.close()
        if self.session.owner is not None:
            self.session.owner.abort()
