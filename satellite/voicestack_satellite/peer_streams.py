"""The owner's audio in the player, and what each stream's peer is told of it.

The player knows streams by ids of its own ("1", "2", ...); a peer gives its
own in ``audio-start`` (docs/protocol.md) and gets it back in ``played`` and
``voicestack-progress``, so it can tell its streams apart.
"""

from __future__ import annotations

import itertools
import logging

from wyoming.audio import AudioStart
from wyoming.error import Error
from wyoming.event import Event

import voicestack_protocol as protocol

from .feedback import Feedback, FeedbackState
from .peer import Peer
from .player import Player

_LOGGER = logging.getLogger(__name__)


class PeerStreams:
    """Streams from peers, by the player's id: who sent each, under which id."""

    def __init__(self, player: Player, feedback: Feedback) -> None:
        """No stream yet."""
        self._player = player
        self._feedback = feedback
        self._ids = itertools.count(1)
        self._senders: dict[str, tuple[Peer, str]] = {}
        self._receiving: str | None = None  # the owner's stream taking audio-chunks
        self._may_pause: set[str] = set()  # streams speech may pause (barge-in)

    async def begin(self, owner: Peer, event: Event) -> None:
        """``audio-start``: a new stream of the owner's, under the owner's id.

        A stream still open (no ``audio-stop``) ends here, so it cannot hold up
        everything queued behind it.
        """
        self.end()
        start = AudioStart.from_event(event)
        stream_id = str(next(self._ids))
        try:
            self._player.begin(stream_id, start.rate, start.width, start.channels)
        except ValueError as err:
            _LOGGER.warning("Cannot play audio: %s", err)
            error = Error(text=f"cannot play audio: {err}", code="audio-format")
            owner.send(error.event())
            return
        try:
            peer_id = protocol.parse_stream_id(event) or stream_id
        except ValueError as err:
            _LOGGER.warning("Ignoring %s; reporting the stream as %s", err, stream_id)
            peer_id = stream_id
        self._senders[stream_id] = (owner, peer_id)
        if protocol.stream_may_pause(event):
            self._may_pause.add(stream_id)
        self._receiving = stream_id
        await self._feedback.set_state(FeedbackState.SPEAKING)

    async def receive(self, audio: bytes) -> None:
        """``audio-chunk``: waits while the player is full (docs/satellite.md).

        The owner's connection is not read meanwhile, so TCP holds the owner
        back; the wait ends as the player plays, or at once when the stream is
        flushed (a wake word, a new owner).
        """
        if self._receiving is None:
            _LOGGER.warning("Audio chunk without audio-start: dropped")
            return
        await self._player.receive(self._receiving, audio)

    def may_pause(self, stream_id: str) -> str | None:
        """The peer's id of player stream ``stream_id`` if speech may pause it."""
        if stream_id not in self._may_pause or stream_id not in self._senders:
            return None
        return self._senders[stream_id][1]

    def end(self) -> None:
        """``audio-stop`` (or its owner went): the stream plays to its end."""
        if self._receiving is not None:
            self._player.end(self._receiving)
            self._receiving = None

    def drop_all_but(self, peer: Peer, owner: Peer | None) -> None:
        """``peer`` takes over from ``owner``: what others queued and was not played goes.

        Whoever sent it is gone and is never told it was played (its
        connection is closed); the new owner must not get its ``played``
        either. Our own sounds (a timer ringing) keep playing.
        """
        others = {
            sid for sid, (sender, _) in self._senders.items() if sender is not peer
        }
        if self._receiving in others:
            self._receiving = None
        if self._player.paused and owner is not peer:
            self._player.resume()  # the pause was the previous owner's
        if others:
            _LOGGER.info(
                "Dropping %d stream(s) queued by the previous owner", len(others)
            )
            self._player.flush(only=others.__contains__)

    def on_progress(
        self, stream_id: str, played: int, total: int | None, state: str
    ) -> None:
        """Report playback progress (VoiceStack extension) to the stream's peer.

        Our own sounds have no peer; a stream of a previous owner reports to
        nobody (that connection is closed).
        """
        if (sender := self._senders.get(stream_id)) is None:
            return
        peer, peer_id = sender
        if peer.extensions:
            peer.send(protocol.progress_event(peer_id, played, total, state))

    def on_played(self, stream_id: str, state: str) -> None:
        """A stream ended (``played`` to its end, or ``flushed``): tell its peer.

        ``played`` carries the peer's stream id and how the stream ended, so the
        peer counts it for the right stream and knows whether it was heard whole.
        """
        self._may_pause.discard(stream_id)
        if (sender := self._senders.pop(stream_id, None)) is not None:
            peer, peer_id = sender
            peer.send(protocol.played_event(peer_id, state))
