"""The coordinator: mic -> wake word -> stream to the owner; owner's audio -> player.

One Home Assistant connection owns the satellite at a time (the first to send
``run-satellite``); any connection may ``describe`` and ``ping``. Losing the owner
stops streaming and keeps wake detection ready for the next one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
import itertools
import logging
import time
from typing import Any
import uuid

import numpy as np
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, Satellite, WakeModel, WakeProgram
from wyoming.ping import Ping, Pong
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.satellite import PauseSatellite, RunSatellite
from wyoming.snd import Played
from wyoming.timer import TimerCancelled, TimerFinished
from wyoming.tts import Synthesize
from wyoming.vad import VoiceStopped
from wyoming.wake import Detect, Detection

from . import __version__, extensions
from .audio import RATE
from .connections import NON_OWNER_MAX_PAYLOAD
from .endpoint import Endpointer
from .hooks import EventCommand
from .mic import CHUNK_SAMPLES
from .peer import Peer
from .player import Player
from .preroll import PrerollBuffer
from .settings import Settings
from .sounds import Sounds
from .vad import SpeechDetector
from .wake import WakeDetector

_LOGGER = logging.getLogger(__name__)

ATTRIBUTION = Attribution(
    name="VoiceStack", url="https://github.com/voicestack/voicestack"
)
WAKE_ENGINE = "openwakeword"


class SatelliteCoordinator:
    """Wires mic, wake word, VAD, preroll, player and the owning peer."""

    def __init__(
        self,
        settings: Settings,
        wake: WakeDetector,
        player: Player,
        *,
        sounds: Sounds,
        hooks: EventCommand | None = None,
        on_speech_during_playback: Callable[[int], None] | None = None,
    ) -> None:
        """``on_speech_during_playback`` gets the absolute sample of speech onset."""
        self._settings = settings
        self._wake = wake
        self._player = player
        self._sounds = sounds
        self._hooks = hooks
        self._on_speech_during_playback = on_speech_during_playback or (lambda _s: None)
        self._vad = SpeechDetector(settings.vad_threshold)
        self._preroll = PrerollBuffer(round(settings.preroll_s * RATE))
        self._owner: Peer | None = None
        self._running = False  # owner sent run-satellite and no pause since
        self._streaming_since: float | None = None
        # Ends a request the peer never ends, even when no mic chunk comes.
        self._deadline: asyncio.TimerHandle | None = None
        self._streamed = 0  # samples sent in the current request (for timestamps)
        self._listen_until: float | None = None
        # Always-listening mode: every speech segment becomes a request.
        self._always_listening = False
        self._stream_ids = itertools.count(1)
        self._sound_streams: set[str] = set()  # our own sounds: no played, no progress
        # Streams from peers, by the player's id: who sent it, under which id.
        self._peer_streams: dict[str, tuple[Peer, str]] = {}
        self._receiving: str | None = None  # the owner's stream taking audio-chunks
        self._muted_until_played: str | None = None  # the awake sound's stream
        # After the chime: the chunk being recorded when it ended still holds it.
        self._mute_until = -1  # absolute mic sample
        self._inference = ThreadPoolExecutor(1, thread_name_prefix="voicestack-wake")
        self._endpointer: Endpointer | None = None  # when the owner asked for it
        # The reply's echo: the mic still hears it after the last sample (room,
        # device and mic buffers), up to ``_echo_until`` (--echo-tail).
        self._playback_ended_at = 0  # absolute mic sample
        self._echo_until = 0
        self._in_echo = False  # the speech going on began inside the tail
        self._background: set[asyncio.Task[None]] = set()
        self.on_run: Callable[[], None] = lambda: None
        self.state = ""  # nothing reported yet: the first state always is

    # -- peers ------------------------------------------------------------------

    async def handle_peer(self, peer: Peer) -> None:
        """Serve one connection until it closes, is dropped or stays silent."""
        _LOGGER.debug("Connection from %s", peer.name)
        try:
            while (event := await self._read(peer)) is not None:
                if not await self._handle_event(peer, event):
                    break
        finally:
            if self._owner is peer:
                _LOGGER.info("Owner %s disconnected; waiting for the next", peer.name)
                self._end_peer_stream()  # what came plays; nothing queues behind it
                self._forget_owner()
                await self._set_state("idle")
            peer.close()

    async def _read(self, peer: Peer) -> Event | None:
        """The next event within the limits for what ``peer`` is.

        The owner sends audio and may stay silent between pings (a silent owner
        only loses the satellite to a new claimant, ``_claim``); any other
        connection needs small events only and is closed when it stays silent
        (docs/satellite.md, "Limits").
        """
        limit = self._settings.max_payload_bytes
        if peer is self._owner:
            return await peer.read(limit)
        return await peer.read(
            min(limit, NON_OWNER_MAX_PAYLOAD), self._settings.idle_timeout_s
        )

    def _forget_owner(self) -> None:
        """No owner any more: the request and listening end, wake words still count.

        Synchronous, so no other claim can slip in before the caller is done.
        """
        self._owner = None
        self._running = False
        self._streaming_since = None
        self._cancel_deadline()
        self._listen_until = None
        self._always_listening = False

    async def _handle_event(self, peer: Peer, event: Event) -> bool:
        """Handle one event; False closes the connection."""
        kind = event.type
        if Describe.is_type(kind):
            peer.send(self.info_event())
            return True
        if Ping.is_type(kind):
            peer.send(Pong(text=Ping.from_event(event).text).event())
            return True
        if kind == extensions.HELLO:
            peer.extensions = True
            silence = event.data.get("end_of_speech_s")
            if isinstance(silence, int | float) and 0.1 <= silence <= 3.0:
                peer.end_of_speech_s = float(silence)
            elif silence is not None:
                _LOGGER.warning("Ignoring end_of_speech_s %r (0.1 to 3 s)", silence)
            return True
        if RunSatellite.is_type(kind):
            return await self._claim(peer)
        if peer is not self._owner:
            _LOGGER.debug("Ignoring %s from non-owner %s", kind, peer.name)
            return True
        await self._handle_owner_event(event)
        return True

    async def _claim(self, peer: Peer) -> bool:
        owner = self._owner
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
        self._drop_streams_not_of(peer)
        self._owner = peer
        self._running = True
        _LOGGER.info("Run by %s", peer.name)
        self.on_run()
        await self._set_state("idle")
        return True

    async def _handle_owner_event(self, event: Event) -> None:
        kind = event.type
        if PauseSatellite.is_type(kind):
            self._running = False
            await self._stop_streaming()
            await self._set_state("muted")
        elif Detect.is_type(kind):
            names = Detect.from_event(event).names or []
            _LOGGER.info("Active wake words: %s", self._wake.set_active(names))
        elif VoiceStopped.is_type(kind) or Transcript.is_type(kind):
            if await self._stop_streaming() and not self._always_listening:
                self._play_sound("done")
            await self._set_state("thinking")
        elif Synthesize.is_type(kind):
            await self._set_state("thinking")
        elif Error.is_type(kind):
            _LOGGER.warning("Peer reported an error: %s", event.data.get("text"))
            await self._stop_streaming()
            await self._set_state("error")
        elif AudioStart.is_type(kind):
            await self._begin_peer_stream(event)
        elif AudioChunk.is_type(kind):
            await self._receive_audio(event.payload or b"")
        elif AudioStop.is_type(kind):
            self._end_peer_stream()
        elif kind.startswith("timer-"):
            await self._on_timer_event(event)
        elif kind == extensions.PAUSE:
            self._player.pause()
        elif kind == extensions.RESUME:
            offset = event.data.get("offset")
            self._player.resume(
                offset if isinstance(offset, int) and offset >= 0 else None
            )
        elif kind == extensions.FLUSH:
            self._player.flush()
        elif kind == extensions.LISTEN and "continuous" in event.data:
            self._always_listening = event.data["continuous"] is True
            _LOGGER.info("Always listening: %s", self._always_listening)
        elif kind == extensions.LISTEN:
            timeout = event.data.get("timeout", 5.0)
            if timeout == 0:  # the peer no longer expects speech
                if self._listen_until is not None:
                    self._listen_until = None
                    await self._set_state("idle")
            elif isinstance(timeout, int | float) and 0 < timeout <= 60:
                self._listen_until = time.monotonic() + float(timeout)
                await self._set_state("listening")
            else:
                _LOGGER.warning("Ignoring %s with timeout %r", kind, timeout)
        else:
            _LOGGER.debug("Ignoring unknown event %s", kind)

    # -- outgoing ---------------------------------------------------------------

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
                    description="openWakeWord (in the satellite)",
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
        event.data["voicestack"] = extensions.info_block(satellite_id)
        return event

    async def _send(self, event: Event) -> None:
        """To the owner, if any; never waits on the network (``Peer.send`` queues)."""
        if self._owner is not None:
            self._owner.send(event)

    async def _send_extension(self, event: Event) -> None:
        """Only peers that said ``voicestack-hello`` get our own events."""
        if self._owner is not None and self._owner.extensions:
            self._owner.send(event)

    async def _set_state(self, state: str, **details: object) -> None:
        if state != self.state:
            self.state = state
            _LOGGER.debug("State: %s", state)
            await self._hook(state, **details)

    async def _hook(self, state: str, **details: object) -> None:
        if self._hooks is not None:
            await self._hooks.send(state, **details)

    # -- player callbacks -------------------------------------------------------

    def on_progress(
        self, stream_id: str, played: int, total: int | None, state: str
    ) -> None:
        """Report playback progress (VoiceStack extension) to the stream's peer.

        Our own sounds have no peer; a stream of a previous owner reports to
        nobody (that connection is closed).
        """
        if (stream := self._peer_streams.get(stream_id)) is None:
            return
        peer, peer_id = stream
        if peer.extensions:
            data = {
                extensions.STREAM: peer_id,
                "played": played,
                "total": total,
                extensions.STATE: state,
            }
            peer.send(Event(extensions.PROGRESS, data))

    def on_played(self, stream_id: str, state: str) -> None:
        """A stream ended (``played`` to its end, or ``flushed``): tell its peer.

        ``played`` carries the peer's stream id and how the stream ended, so the
        peer counts it for the right stream and knows whether it was heard whole.
        """
        self._after_playback()
        if stream_id in self._sound_streams:
            self._sound_streams.discard(stream_id)
            if stream_id == self._muted_until_played:
                self._muted_until_played = None
                self._mute_until = self._preroll.end + CHUNK_SAMPLES
            return
        if (stream := self._peer_streams.pop(stream_id, None)) is not None:
            peer, peer_id = stream
            played = Played().event()
            played.data.update({extensions.STREAM: peer_id, extensions.STATE: state})
            peer.send(played)
        if not self._player.busy and self._streaming_since is None:
            self._spawn(self._set_state("idle"))

    def _after_playback(self) -> None:
        """The speaker went quiet: what the mic hears next may still be the reply.

        The VAD heard the reply while it played; its state must not carry into
        the listen window the owner opens now, and speech that starts within
        ``--echo-tail`` of this moment is the reply's echo.
        """
        if self._player.busy:
            return
        self._vad.reset()
        self._playback_ended_at = self._preroll.end
        self._echo_until = self._playback_ended_at + round(
            self._settings.echo_tail_s * RATE
        )

    def _not_echo(self, speech: bool, onset: int) -> bool:
        """``speech`` (starting at mic sample ``onset``) unless it is the echo.

        Speech that begins inside the tail is ignored until it ends (a chunk
        without speech): an echo longer than the tail must not pass for new
        speech the moment the tail is over.
        """
        if not speech:
            self._in_echo = False
            return False
        if onset < self._echo_until:
            self._in_echo = True
        return not self._in_echo

    def report_error(self, message: str) -> None:
        """A part of the satellite failed (e.g. the mic command): state ``error``."""
        self._spawn(self._set_state("error", message=message))

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` from a sync callback, keeping a reference until done."""
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def _play_sound(self, kind: str, repeat: int = 1) -> str | None:
        """Queue one of our own sounds; its stream id, or None if switched off."""
        samples = self._sounds.get(kind)
        if samples is None:
            return None
        pcm = samples.tobytes()
        stream_id = None
        for _ in range(repeat):
            stream_id = f"{kind}-{next(self._stream_ids)}"
            self._sound_streams.add(stream_id)
            self._player.begin(stream_id, RATE, 2, 1)
            self._player.feed(stream_id, pcm)
            self._player.end(stream_id)
        return stream_id

    # -- the owner's audio ------------------------------------------------------

    async def _begin_peer_stream(self, event: Event) -> None:
        """``audio-start``: a new stream of the owner's, under the owner's id.

        A stream still open (no ``audio-stop``) ends here, so it cannot hold up
        everything queued behind it.
        """
        assert self._owner is not None
        self._end_peer_stream()
        start = AudioStart.from_event(event)
        stream_id = str(next(self._stream_ids))
        try:
            self._player.begin(stream_id, start.rate, start.width, start.channels)
        except ValueError as err:
            _LOGGER.warning("Cannot play audio: %s", err)
            await self._send(
                Error(text=f"cannot play audio: {err}", code="audio-format").event()
            )
            return
        peer_id = extensions.peer_stream_id(event.data, stream_id)
        self._peer_streams[stream_id] = (self._owner, peer_id)
        self._receiving = stream_id
        await self._set_state("speaking")

    async def _receive_audio(self, audio: bytes) -> None:
        """``audio-chunk``: waits while the player is full (docs/satellite.md).

        The owner's connection is not read meanwhile, so TCP holds the owner
        back; the wait ends as the player plays, or at once when the stream is
        flushed (a wake word, a new owner).
        """
        if self._receiving is None:
            _LOGGER.warning("Audio chunk without audio-start: dropped")
            return
        await self._player.receive(self._receiving, audio)

    def _end_peer_stream(self) -> None:
        """``audio-stop`` (or its owner went): the stream plays to its end."""
        if self._receiving is not None:
            self._player.end(self._receiving)
            self._receiving = None

    def _drop_streams_not_of(self, peer: Peer) -> None:
        """A new owner: what a previous one queued and was not played yet goes.

        Whoever sent it is gone and is never told it was played (its
        connection is closed); the new owner must not get its ``played``
        either. Our own sounds (a timer ringing) keep playing.
        """
        others = {
            sid for sid, (sender, _) in self._peer_streams.items() if sender is not peer
        }
        if self._receiving in others:
            self._receiving = None
        if self._player.paused and self._owner is not peer:
            self._player.resume()  # the pause was the previous owner's
        if others:
            _LOGGER.info(
                "Dropping %d stream(s) queued by the previous owner", len(others)
            )
            self._player.flush(only=others.__contains__)

    async def _on_timer_event(self, event: Event) -> None:
        """Ring on ``timer-finished`` until cancelled (or the repeat limit)."""
        if TimerFinished.is_type(event.type):
            self._play_sound("timer", self._settings.timer_repeat)
        elif TimerCancelled.is_type(event.type):
            self._player.flush(only=lambda stream_id: stream_id.startswith("timer-"))
        await self._hook("timer", event=event.type, **_timer_details(event))

    # -- audio ------------------------------------------------------------------

    async def process_mic(self, samples: np.ndarray) -> None:
        """Handle one mic chunk: preroll, wake word, VAD, streaming."""
        self._preroll.append(samples)
        end = self._preroll.end
        if self._streaming_since is not None:
            muted = self._muted_until_played is not None or end <= self._mute_until
            live = np.zeros_like(samples) if muted else samples
            await self._stream(live, end)
            if self._endpointer is not None and self._endpointer.process(live):
                _LOGGER.debug("End of speech at sample %s", end)
                await self._stop_streaming()
                if not self._always_listening:
                    # Always listening, every segment (the TV too) ends here:
                    # a chime each time would be noise.
                    self._play_sound("done")
                await self._set_state("thinking")
                return
            return
        if not self._running:
            # Paused (muted): nothing may start a request, and a listen window
            # open at the time of the pause is closed.
            self._listen_until = None
            if self._owner is None:
                await self._hear_wake_word_unowned(samples, end)
            return
        # VAD only matters for listen-now and speech during playback; idle
        # listening skips it (it costs ~15 % of the wake word engine).
        speech, onset = False, 0
        if (
            self._listen_until is not None
            or self._always_listening
            or self._player.busy
        ):
            speech, onset = self._vad.process(samples)
        onset += end - len(samples)  # absolute mic sample
        if speech and self._player.busy:
            self._on_speech_during_playback(onset)
        # (Never while playing: on a real device the mic hears the reply.)
        heard = self._not_echo(speech, onset) and not self._player.busy
        if self._listen_until is not None:
            if time.monotonic() > self._listen_until:
                self._listen_until = None
                await self._set_state("idle")
            elif heard:
                self._listen_until = None
                await self._start_streaming(None, onset)
                return
        elif self._always_listening and heard:
            await self._start_streaming(None, onset)
            return
        # Inference runs off the event loop so playback blocks keep flowing.
        name = await asyncio.get_running_loop().run_in_executor(
            self._inference, self._wake.process, samples, end
        )
        if name is not None:
            await self._on_wake(name, end)

    async def _hear_wake_word_unowned(self, samples: np.ndarray, end: int) -> None:
        """No Home Assistant yet: wake words are heard and logged, nothing streams.

        A new install can test its mic and wake word before it is added
        (docs/satellite.md, "Run it").
        """
        name = await asyncio.get_running_loop().run_in_executor(
            self._inference, self._wake.process, samples, end
        )
        if name is not None:
            _LOGGER.info(
                "Wake word %s at sample %s (no Home Assistant connected: "
                "nothing is streamed)",
                name,
                end,
            )

    async def _on_wake(self, name: str, end: int) -> None:
        _LOGGER.info("Wake word %s at sample %s", name, end)
        self._listen_until = None  # a new request: any listen window is used up
        await self._set_state("wake", name=name)
        if self._player.busy and self._settings.stop_on_wake:
            self._player.flush()
        awake = self._play_sound("awake")
        if self._settings.mute_during_awake:
            self._muted_until_played = awake
        self._wake.reset()
        await self._send(
            Detection(name=name, timestamp=round(end * 1000 / RATE)).event()
        )
        await self._start_streaming(name, end)

    async def _start_streaming(self, wake_word: str | None, cut: int) -> None:
        """Send run-pipeline and the audio from shortly before ``cut`` up to now.

        ``cut`` is the wake word detection or the speech onset; the preroll
        before it is ``--wake-preroll`` or ``--preroll`` respectively.
        """
        if self._owner is None:
            return
        start_stage = PipelineStage.ASR
        await self._send(
            RunPipeline(
                start_stage=start_stage,
                end_stage=PipelineStage.TTS,
                wake_word_name=wake_word,
            ).event()
        )
        seconds = (
            self._settings.wake_preroll_s if wake_word else self._settings.preroll_s
        )
        preroll_start = max(0, cut - round(seconds * RATE))
        # Audio since playback, for a request started by speech: none of the
        # reply's echo goes to speech-to-text or into the room's noise floor.
        room_from = 0
        if wake_word is None:
            preroll_start = max(preroll_start, min(cut, self._echo_until))
            room_from = self._playback_ended_at
        preroll = self._preroll.since(preroll_start)
        await self._send_extension(
            Event(
                extensions.PREROLL, {"samples": len(preroll), "rate": RATE, "cut": cut}
            )
        )
        await self._send(
            AudioStart(rate=RATE, width=2, channels=1, timestamp=0).event()
        )
        self._streamed = 0
        self._streaming_since = time.monotonic()
        self._deadline = asyncio.get_running_loop().call_later(
            self._settings.max_request_s,
            lambda: self._spawn(self._request_timed_out()),
        )
        self._endpointer = None
        if (silence := self._owner.end_of_speech_s) is not None:
            self._endpointer = Endpointer(silence)
            self._endpointer.start(self._preroll.since(room_from))
        await self._set_state("listening")
        if len(preroll):
            await self._stream(preroll, self._preroll.end)

    async def _stream(self, samples: np.ndarray, end: int) -> None:
        for start in range(0, len(samples), CHUNK_SAMPLES):
            part = samples[start : start + CHUNK_SAMPLES]
            await self._send(
                AudioChunk(
                    rate=RATE,
                    width=2,
                    channels=1,
                    audio=part.tobytes(),
                    timestamp=round(self._streamed * 1000 / RATE),
                ).event()
            )
            self._streamed += len(part)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    async def _request_timed_out(self) -> None:
        """``--max-request`` passed and the request still streams.

        A timer, not a check per mic chunk: a mic that died sends no chunks.
        """
        self._deadline = None
        if self._streaming_since is None:
            return
        limit = self._settings.max_request_s
        _LOGGER.warning("No end of utterance from the peer after %s s", limit)
        if self._endpointer is not None and not self._endpointer.heard_speech:
            # Speech-to-text would only make words up from the silence.
            await self._send_extension(Event(extensions.NO_SPEECH, {}))
        await self._stop_streaming()

    async def _stop_streaming(self) -> bool:
        """End the request's audio; False if none was streaming."""
        if self._streaming_since is None:
            return False
        self._streaming_since = None
        self._cancel_deadline()
        self._muted_until_played = None
        self._vad.reset()
        await self._send(
            AudioStop(timestamp=round(self._streamed * 1000 / RATE)).event()
        )
        return True

    async def close(self) -> None:
        """Cut the owner connection; stop the inference thread."""
        self._inference.shutdown(wait=True)
        if self._owner is not None:
            self._owner.abort()


# The fields of Wyoming's timer events, and the types they must have.
_TIMER_FIELDS: dict[str, type] = {
    "id": str,
    "total_seconds": int,
    "name": str,
    "start_hours": int,
    "start_minutes": int,
    "start_seconds": int,
    "is_active": bool,
}


def _timer_details(event: Event) -> dict[str, object]:
    """The timer fields of ``event`` for ``--event-command``, checked.

    The owner's data is not trusted to be well formed: unknown keys (an
    ``event`` or ``state`` key would collide with the line's own) and fields
    of the wrong type are left out, with a debug line, instead of ending the
    connection.
    """
    data = event.data if isinstance(event.data, dict) else {}
    details: dict[str, object] = {}
    for key, value in data.items():
        expected = _TIMER_FIELDS.get(key)
        if (
            expected is not None
            and isinstance(value, expected)
            and (expected is bool or not isinstance(value, bool))
        ):
            details[key] = value
        elif value is not None:
            _LOGGER.debug("Ignoring %s field %r=%r", event.type, key, value)
    return details
