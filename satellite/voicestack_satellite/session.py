"""Peers: who owns the satellite, what each event does, and ``info``.

One Home Assistant connection owns the satellite at a time (the first to send
``run-satellite``); any connection may ``describe`` and ``ping``. Losing the owner
stops streaming and keeps wake detection ready for the next one.
"""

from __future__ import annotations

from collections.abc import Callable
import logging
import time
import uuid

from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, Satellite, WakeModel, WakeProgram
from wyoming.ping import Ping, Pong
from wyoming.satellite import PauseSatellite, RunSatellite
from wyoming.tts import Synthesize
from wyoming.vad import VoiceStopped
from wyoming.wake import Detect

import voicestack_protocol as protocol

from . import __version__
from .barge_in import BargeIn
from .connections import NON_OWNER_MAX_PAYLOAD
from .echo_path import EchoPath
from .enroller import Enroller
from .feedback import Feedback, FeedbackState
from .listener import Listener
from .peer import Peer
from .peer_streams import PeerStreams
from .player import Player
from .settings_model import Settings
from .wake import Wake

_LOGGER = logging.getLogger(__name__)

ATTRIBUTION = Attribution(
    name="VoiceStack", url="https://github.com/voicestack/voicestack"
)
WAKE_ENGINE = "openwakeword"


class Session:
    """Serves every connection; hands the owner's events to the parts."""

    def __init__(
        self,
        settings: Settings,
        wake: Wake,
        player: Player,
        parts: tuple[Listener, PeerStreams, Feedback],
        *,
        barge_in: tuple[BargeIn, Enroller, EchoPath],
        on_run: Callable[[], None],
    ) -> None:
        """``on_run`` is called at each ``run-satellite`` (it starts a mic file)."""
        self._settings = settings
        self._wake = wake
        self._player = player
        self._listener, self._streams, self._feedback = parts
        self._barge_in, self._enroller, self._echo = barge_in
        self._on_run = on_run
        self.owner: Peer | None = None

    async def handle_peer(self, peer: Peer) -> None:
        """Serve one connection until it closes, is dropped or stays silent."""
        _LOGGER.debug("Connection from %s", peer.name)
        try:
            while (event := await self._read(peer)) is not None:
                if not await self._handle_event(peer, event):
                    break
        finally:
            if self.owner is peer:
                _LOGGER.info("Owner %s disconnected; waiting for the next", peer.name)
                self._streams.end()  # what came plays; nothing queues behind it
                self._forget_owner()
                await self._feedback.set_state(FeedbackState.IDLE)
            peer.close()

    async def _read(self, peer: Peer) -> Event | None:
        """The next event within the limits for what ``peer`` is.

        The owner sends audio and may stay silent between pings (a silent owner
        only loses the satellite to a new claimant, ``_claim``); any other
        connection needs small events only and is closed when it stays silent
        (docs/satellite.md, "Limits").
        """
        limit = self._settings.max_payload_bytes
        if peer is self.owner:
            return await peer.read(limit)
        return await peer.read(
            min(limit, NON_OWNER_MAX_PAYLOAD), self._settings.idle_timeout_s
        )

    def _forget_owner(self) -> None:
        """No owner any more: the request and listening end, wake words still count."""
        self.owner = None
        self._listener.release()
        self._enroller.cancel()
        # Only an owner that configured barge-in can answer a pause.
        self._barge_in.configure(protocol.BargeInConfig())

    async def _handle_event(self, peer: Peer, event: Event) -> bool:
        """Handle one event; False closes the connection."""
        kind = event.type
        if Describe.is_type(kind):
            peer.send(self.info_event())
        elif Ping.is_type(kind):
            peer.send(Pong(text=Ping.from_event(event).text).event())
        elif kind == protocol.HELLO:
            peer.extensions = True  # whatever else it says
            try:
                hello = protocol.parse_hello(event)
            except ValueError as err:
                _LOGGER.warning("Ignoring %s", err)
            else:
                peer.end_of_speech_s = hello.end_of_speech_s
                peer.accepts = hello.accepts
                _LOGGER.debug("Hello from %s, accepts %s", peer.name, hello.accepts)
        elif RunSatellite.is_type(kind):
            return await self._claim(peer)
        elif peer is not self.owner:
            _LOGGER.debug("Ignoring %s from non-owner %s", kind, peer.name)
        elif kind in protocol.PEER_EVENTS:
            await self._handle_extension(event)
        else:
            await self._handle_owner_event(peer, event)
        return True

    async def _claim(self, peer: Peer) -> bool:
        owner = self.owner
        if owner is not None and owner is not peer:
            silent_s = time.monotonic() - owner.last_seen
            if not owner.closed and silent_s <= self._settings.owner_timeout_s:
                _LOGGER.warning(
                    "Refusing %s: the satellite is already run by %s",
                    peer.name,
                    owner.name,
                )
                peer.send(
                    Error(
                        text=f"satellite already run by {owner.name}", code="busy"
                    ).event()
                )
                return False
            if not owner.closed:
                # Its network went away without a close (Wi-Fi drop, power cut):
                # a live owner pings far more often than this. It may not read
                # either, so it is cut, never waited for.
                _LOGGER.warning(
                    "Owner %s silent for %.0f s: handing the satellite to %s",
                    owner.name,
                    silent_s,
                    peer.name,
                )
                owner.abort()
            self._forget_owner()
        self._streams.drop_all_but(peer, self.owner)
        self.owner = peer
        self._listener.serve(peer)
        _LOGGER.info("Run by %s", peer.name)
        self._on_run()
        await self._feedback.set_state(FeedbackState.IDLE)
        return True

    async def _handle_owner_event(self, owner: Peer, event: Event) -> None:
        kind = event.type
        if PauseSatellite.is_type(kind):
            await self._listener.pause()
            await self._feedback.set_state(FeedbackState.MUTED)
        elif Detect.is_type(kind):
            names = Detect.from_event(event).names or []
            _LOGGER.info("Active wake words: %s", self._wake.set_active(names))
        elif VoiceStopped.is_type(kind) or Transcript.is_type(kind):
            await self._listener.peer_ended_request()
        elif Synthesize.is_type(kind):
            await self._feedback.set_state(FeedbackState.THINKING)
        elif Error.is_type(kind):
            _LOGGER.warning("Peer reported an error: %s", event.data.get("text"))
            await self._listener.stop()
            await self._feedback.set_state(FeedbackState.ERROR)
        elif AudioStart.is_type(kind):
            await self._streams.begin(owner, event)
        elif AudioChunk.is_type(kind):
            await self._streams.receive(event.payload or b"")
        elif AudioStop.is_type(kind):
            self._streams.end()
        elif kind.startswith("timer-"):
            await self._feedback.on_timer_event(event)
        else:
            _LOGGER.debug("Ignoring unknown event %s", kind)

    async def _handle_extension(self, event: Event) -> None:
        """The owner's ``voicestack-*`` events; bad data is logged and ignored."""
        kind = event.type
        try:
            if kind == protocol.PAUSE:
                self._player.pause()
            elif kind == protocol.RESUME:
                self._barge_in.resumed()
                self._player.resume(protocol.parse_resume(event).offset)
            elif kind == protocol.FLUSH:
                self._player.flush()
            elif kind == protocol.LISTEN:
                listen = protocol.parse_listen(event)
                if listen.continuous is not None:
                    self._listener.set_continuous(listen.continuous)
                elif listen.timeout is not None:
                    await self._listener.listen(listen.timeout)
            else:
                await self._handle_barge_in(event)
        except ValueError as err:
            _LOGGER.warning("Ignoring %s", err)
            if kind == protocol.RESUME:  # a pause must not last for a bad offset
                self._player.resume()

    async def _handle_barge_in(self, event: Event) -> None:
        """Barge-in's settings, the user's request, an enrollment phrase."""
        kind = event.type
        if kind == protocol.BARGE_IN_CONFIG:
            config = protocol.parse_barge_in_config(event)
            self._barge_in.configure(config)
            self._echo.cancel = config.echo_cancel
            on, aec, voices = config.enabled, self._echo.active, len(config.voiceprints)
            _LOGGER.info("Barge-in on: %s (echo: %s, voices: %d)", on, aec, voices)
        elif kind == protocol.BARGE_IN_REQUEST:
            await self._barge_in.request(protocol.parse_barge_in_request(event))
        elif kind == protocol.ENROLL:
            self._enroller.start(protocol.parse_enroll(event))

    def forward_announcement(self, announce: Event) -> str | None:
        """Send a ``voicestack-announce`` to the owner; ``None`` once sent, else why not.

        Nothing is kept for later: without an owner that asked for
        announcements the caller hears why at once and may try again.
        """
        owner = self.owner
        if owner is None or owner.closed:
            return (
                "no Home Assistant is connected (nothing is queued on the "
                "satellite; send the line again once it is)"
            )
        if protocol.ANNOUNCE not in owner.accepts:
            return "Home Assistant does not accept announcements from this satellite"
        owner.send(announce)
        return None

    def info_event(self) -> Event:
        """``info`` with the satellite block, wake models and our extensions."""
        s = self._settings
        models = [
            WakeModel(
                name=spec.name,
                attribution=ATTRIBUTION,
                installed=True,
                description=spec.phrase,
                version=None,
                languages=["en"],
                phrase=spec.phrase,
            )
            for spec in self._wake.specs
        ]
        info = Info(
            wake=[
                WakeProgram(
                    name=WAKE_ENGINE,
                    attribution=ATTRIBUTION,
                    installed=True,
                    description=self._wake.description,
                    version=None,
                    models=models,
                )
            ],
            satellite=Satellite(
                name=s.name,
                attribution=ATTRIBUTION,
                installed=True,
                description=f"VoiceStack satellite {s.name}",
                version=__version__,
                area=s.area,
                has_vad=True,
                active_wake_words=self._wake.active,
                max_active_wake_words=len(self._wake.specs),
                supports_trigger=True,
            ),
        )
        event = info.event()
        satellite_id = s.satellite_id or f"{uuid.getnode():012x}-{s.port}"
        event.data[protocol.INFO_KEY] = protocol.info_block(
            satellite_id, voiceprint=self._enroller.gate_available, hold=True
        )
        return event
