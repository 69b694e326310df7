"""The satellite's parts, wired: mic -> request to the owner; owner's audio -> player.

- ``session.Session``: peers, ownership, each event to the part it is for, ``info``;
- ``listener.Listener``: mic -> wake word, listen windows, the request's audio;
- ``peer_streams.PeerStreams``: the owner's audio in the player, ``played``;
- ``feedback.Feedback``: state for ``--event-command``, our sounds, timers;
- ``barge_in.BargeIn`` and ``enroller.Enroller``: speech over an answer, and
  enrollment phrases, on the mic with the answer's echo removed
  (``echo_path.EchoPath``, fed every block the player writes).

The coordinator subscribes to the player: its ``on_progress`` and ``on_played``
tell each part what it needs to know. Each mic read (20 ms) goes to the echo
path, barge-in and enrollment at once; the listener gets 80 ms chunks (the wake
word's step), through ``--noise-suppression``/``--auto-gain`` if set.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import numpy as np
from wyoming.event import Event

from .barge_in import BargeIn
from .echo_path import EchoPath
from .enhance import MicEnhancer
from .enroller import Enroller
from .feedback import Feedback, FeedbackState
from .hooks import EventCommand
from .listener import Listener
from .mic_format import Rechunk
from .peer import Peer
from .peer_streams import PeerStreams
from .player import Player
from .session import Session
from .settings_model import Settings
from .sounds import Sounds
from .voice_gate import VoiceGate
from .wake import Wake


class SatelliteCoordinator:
    """Builds the parts around one player and one wake word detector."""

    def __init__(
        self,
        settings: Settings,
        wake: Wake,
        player: Player,
        *,
        sounds: Sounds,
        echo: EchoPath,
        hooks: EventCommand | None = None,
        enhancer: MicEnhancer | None = None,
        on_run: Callable[[], None] = lambda: None,
    ) -> None:
        """``on_run`` is called at each ``run-satellite`` (it starts a mic file).

        From here on the coordinator hears everything ``player`` reports, and
        ``echo`` every block it writes.
        """
        self._player = player
        self._echo = echo
        self._enhancer = enhancer
        self._mic_end = 0  # absolute mic samples so far
        self._to_listener = Rechunk()
        self.feedback = Feedback(
            player, sounds, hooks, timer_repeat=settings.timer_repeat
        )
        self.listener = Listener(settings, wake, player, self.feedback)
        self._streams = PeerStreams(player, self.feedback)
        self.gate = VoiceGate()
        self.barge_in = BargeIn(
            player,
            self.gate,
            preroll_s=settings.preroll_s,
            stream_of=self._streams.may_pause,
            send=self._send,
            start_request=self.listener.start_captured,
        )
        self.enroller = Enroller(self.gate, self._send)
        self.session = Session(
            settings,
            wake,
            player,
            (self.listener, self._streams, self.feedback),
            barge_in=(self.barge_in, self.enroller, echo),
            on_run=on_run,
        )
        player.subscribe(self)
        player.subscribe_writes(echo)

    async def handle_peer(self, peer: Peer) -> None:
        """Serve one connection until it closes, is dropped or stays silent."""
        await self.session.handle_peer(peer)

    async def process_mic(self, samples: np.ndarray) -> None:
        """One mic read: echo path, barge-in, enrollment; whole chunks: the listener."""
        at, self._mic_end = self._mic_end, self._mic_end + len(samples)
        self._echo.clock.heard(self._mic_end, asyncio.get_running_loop().time())
        cleaned = self._echo.process(samples, at)
        self.barge_in.process(
            samples,
            cleaned,
            self._mic_end,
            self._echo.echo_levels(),
            armed=not self.listener.streaming,
        )
        self.enroller.process(cleaned)
        if (chunk := self._to_listener.add(samples)) is None:
            return
        heard = chunk if self._enhancer is None else self._enhancer.process(chunk)
        await self.listener.process(heard)
        if self.listener.streaming and self.enroller.active:
            self.enroller.cancel()  # a wake word started a request meanwhile

    def _send(self, event: Event) -> None:
        """Our own event to the owner, if it asked for them (``voicestack-hello``)."""
        owner = self.session.owner
        if owner is not None and owner.extensions and not owner.closed:
            owner.send(event)

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
        self.barge_in.stream_ended(stream_id)
        if self.feedback.sound_ended(stream_id):
            self.listener.sound_ended(stream_id)
            return
        self._streams.on_played(stream_id, state)
        if not self._player.busy and not self.listener.streaming:
            self.feedback.set_state_soon(FeedbackState.IDLE)

    async def close(self) -> None:
        """Cut the owner connection; stop the inference threads."""
        self.listener.close()
        self.gate.close()
        if self.session.owner is not None:
            self.session.owner.abort()
