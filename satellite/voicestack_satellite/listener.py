"""Mic -> request: wake word, listen windows, always listening, the echo tail.

"When does the mic stream?" has one answer: in ``ListenerState.STREAMING``,
which only ``_start`` enters and only ``stop`` and ``release`` leave. Every
other state says what may start a request (docs/satellite.md).
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
import logging
import time

import numpy as np
from wyoming.wake import Detection

from .audio import RATE
from .echo import EchoTail
from .feedback import Feedback, FeedbackState
from .listen_state import HEARS_SPEECH, ListenerState
from .peer import Peer
from .player import Player
from .preroll import PrerollBuffer
from .request import Ending, Request
from .settings_model import Settings
from .vad import SpeechDetector
from .wake import Wake

_LOGGER = logging.getLogger(__name__)


class Listener:
    """Turns mic chunks into requests to the owner."""

    def __init__(
        self,
        settings: Settings,
        wake: Wake,
        player: Player,
        feedback: Feedback,
    ) -> None:
        """Unowned until the session hands it an owner (``serve``)."""
        self._settings = settings
        self._wake = wake
        self._player = player
        self._feedback = feedback
        self._vad = SpeechDetector(settings.vad_threshold)
        self._mic = PrerollBuffer(round(settings.preroll_s * RATE))
        self._echo = EchoTail(round(settings.echo_tail_s * RATE))
        self._inference = ThreadPoolExecutor(1, thread_name_prefix="voicestack-wake")
        self.state = ListenerState.UNOWNED
        # Where a request or window returns to: the owner's listen mode.
        self._rest = ListenerState.WAKE_WORD
        self._owner: Peer | None = None
        self._window_ends: float | None = None  # monotonic; opened while streaming too
        self._request: Request | None = None  # exactly while STREAMING
        # Ends a request the peer never ends, even when no mic chunk comes.
        self._deadline: asyncio.Task[None] | None = None

    @property
    def streaming(self) -> bool:
        """A request's audio is going to the owner."""
        return self.state is ListenerState.STREAMING

    # -- the session's transitions ----------------------------------------------

    def serve(self, owner: Peer) -> None:
        """``run-satellite`` from ``owner``: requests may start (again)."""
        self._owner = owner
        if self.state in (ListenerState.UNOWNED, ListenerState.PAUSED):
            self.state = self._rest

    def release(self) -> None:
        """The owner is gone: its request ends unsent, listening ends.

        Synchronous, so no other claim can slip in before the session is done.
        """
        self._cancel_deadline()
        self._owner = self._request = self._window_ends = None
        self._rest = ListenerState.WAKE_WORD
        self.state = ListenerState.UNOWNED

    async def pause(self) -> None:
        """``pause-satellite``: the request ends, nothing starts another."""
        await self.stop()
        self._window_ends = None
        self.state = ListenerState.PAUSED

    async def listen(self, seconds: float) -> None:
        """``voicestack-listen {timeout}``: open a window; 0 closes an open one."""
        if self.state is ListenerState.PAUSED:
            _LOGGER.debug("Muted: no listen window")
        elif seconds == 0:  # the peer no longer expects speech
            if self._window_ends is not None:
                self._window_ends = None
                if self.state is ListenerState.WINDOW:
                    self.state = self._rest
                await self._feedback.set_state(FeedbackState.IDLE)
        else:
            self._window_ends = time.monotonic() + seconds
            if not self.streaming:
                self.state = ListenerState.WINDOW
            await self._feedback.set_state(FeedbackState.LISTENING)

    def set_continuous(self, on: bool) -> None:
        """``voicestack-listen {continuous}``: every speech segment, or wake words."""
        _LOGGER.info("Always listening: %s", on)
        self._rest = ListenerState.CONTINUOUS if on else ListenerState.WAKE_WORD
        if self.state in (ListenerState.WAKE_WORD, ListenerState.CONTINUOUS):
            self.state = self._rest

    async def peer_ended_request(self) -> None:
        """The owner heard the end of speech (voice-stopped, transcript)."""
        if await self.stop():
            self._done()
        await self._feedback.set_state(FeedbackState.THINKING)

    def _done(self) -> None:
        """The done chime, when the mic really stopped listening.

        Not always listening (every segment, the TV too, ends a request: a chime
        each time would be noise), and not while a listen window stays open:
        more speech is expected there (fragments of one thought), and the chime
        and its echo tail would hide the first half second of it.
        """
        if self.state not in (ListenerState.CONTINUOUS, ListenerState.WINDOW):
            self._feedback.play_sound("done")

    async def stop(self) -> bool:
        """End the request's audio (audio-stop); False if none was streaming."""
        if (request := self._request) is None:
            return False
        self._request = None
        self._cancel_deadline()
        self._vad.reset()
        request.stop()
        self.state = (
            ListenerState.WINDOW if self._window_ends is not None else self._rest
        )
        return True

    # -- the player's news -------------------------------------------------------

    def playback_ended(self) -> None:
        """The speaker went quiet: the VAD that heard the reply starts afresh."""
        if not self._player.busy:
            self._vad.reset()
            self._echo.playback_ended(self._mic.end)

    def sound_ended(self, stream_id: str) -> None:
        """One of our sounds ended (the awake chime unmutes the request)."""
        if self._request is not None:
            self._request.sound_ended(stream_id)

    # -- the mic -----------------------------------------------------------------

    async def process(self, samples: np.ndarray) -> None:
        """Handle one mic chunk: preroll, then whatever the state asks for."""
        self._mic.append(samples)
        end = self._mic.end
        if self._request is not None:
            await self._stream_live(self._request, samples, end)
        elif self.state is ListenerState.UNOWNED:
            await self._hear_wake_word_unowned(samples, end)
        elif self.state is not ListenerState.PAUSED:
            await self._wait_for_request(samples, end)

    async def _stream_live(
        self, request: Request, samples: np.ndarray, end: int
    ) -> None:
        ending = request.live(samples, end)
        if ending is Ending.NO_SPEECH:
            _LOGGER.info("No speech after the wake word: dropped at sample %s", end)
            await self._drop_unheard(request)
        elif ending is Ending.SPEECH_ENDED:
            _LOGGER.debug("End of speech at sample %s", end)
            await self.stop()
            self._done()
            await self._feedback.set_state(FeedbackState.THINKING)

    async def _wait_for_request(self, samples: np.ndarray, end: int) -> None:
        """Speech (in a window, or always listening) or a wake word starts one."""
        # VAD only matters for those and for the echo; idle listening skips it
        # (it costs ~15 % of the wake word engine).
        speech, onset = False, 0
        if self.state in HEARS_SPEECH or self._player.busy:
            speech, onset = self._vad.process(samples)
        onset += end - len(samples)  # absolute mic sample
        # (Never while playing: on a real device the mic hears the reply.)
        heard = self._echo.heard(speech, onset) and not self._player.busy
        if self.state is ListenerState.WINDOW and time.monotonic() > (
            self._window_ends or 0.0
        ):
            self._window_ends = None
            self.state = self._rest
            await self._feedback.set_state(FeedbackState.IDLE)
        elif heard and self.state in HEARS_SPEECH:
            await self._start(None, onset)
            return
        if (name := await self._detect(samples, end)) is not None:
            await self._on_wake(name, end)

    async def _detect(self, samples: np.ndarray, end: int) -> str | None:
        """Inference runs off the event loop so playback blocks keep flowing."""
        return await asyncio.get_running_loop().run_in_executor(
            self._inference, self._wake.process, samples, end
        )

    async def _hear_wake_word_unowned(self, samples: np.ndarray, end: int) -> None:
        """No Home Assistant yet: wake words are logged (docs/satellite.md, "Run it")."""
        if (name := await self._detect(samples, end)) is not None:
            _LOGGER.info(
                "Wake word %s at sample %s (no Home Assistant connected: "
                "nothing is streamed)",
                name,
                end,
            )

    async def _on_wake(self, name: str, end: int) -> None:
        _LOGGER.info("Wake word %s at sample %s", name, end)
        await self._feedback.set_state(FeedbackState.WAKE, name=name)
        if self._player.busy and self._settings.stop_on_wake:
            self._player.flush()
        awake = self._feedback.play_sound("awake")
        self._wake.reset()
        if self._owner is not None:
            detection = Detection(name=name, timestamp=round(end * 1000 / RATE))
            self._owner.send(detection.event())
        await self._start(
            name, end, awake if self._settings.mute_during_awake else None
        )

    async def _start(
        self, wake_word: str | None, cut: int, chime: str | None = None
    ) -> None:
        """Stream a request from shortly before ``cut`` (wake word or speech onset)."""
        if self._owner is None:
            return
        request = Request(self._owner, self._mic, chime)
        s = self._settings
        preroll_s = s.wake_preroll_s if wake_word else s.preroll_s
        preroll = request.start(wake_word, cut, preroll_s, self._echo, s.no_speech_s)
        await self._streaming(request)
        if len(preroll) and self._request is request:
            request.stream(preroll)

    async def start_captured(self, audio: np.ndarray, start: int, onset: int) -> bool:
        """The user's barge-in: a request whose audio so far is ``audio`` (from ``start``).

        False when none can start (no owner, one streaming, muted).
        """
        if self._owner is None or self.streaming or self.state is ListenerState.PAUSED:
            return False
        request = Request(self._owner, self._mic, None)
        request.start_captured(audio, start, onset)
        await self._streaming(request)
        return True

    async def _streaming(self, request: Request) -> None:
        """``request`` has begun: the mic streams to it until it stops."""
        self._window_ends = None  # a new request: any listen window is used up
        self._request = request
        self.state = ListenerState.STREAMING
        self._deadline = asyncio.create_task(self._expire(request))
        await self._feedback.set_state(FeedbackState.LISTENING)

    async def _expire(self, request: Request) -> None:
        """``--max-request`` passed (a timer: a mic that died sends no chunks)."""
        await asyncio.sleep(self._settings.max_request_s)
        self._deadline = None
        if self._request is not request:
            return
        limit = self._settings.max_request_s
        _LOGGER.warning("No end of utterance from the peer after %s s", limit)
        if request.nobody_spoke:
            await self._drop_unheard(request)
        else:
            await self.stop()

    async def _drop_unheard(self, request: Request) -> None:
        """Nobody spoke: the peer drops the request, the satellite is idle again.

        (Speech-to-text would make words up from the silence.)
        """
        request.no_speech()
        await self.stop()
        await self._feedback.set_state(FeedbackState.IDLE)

    def _cancel_deadline(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def close(self) -> None:
        """Stop the inference thread."""
        self._cancel_deadline()
        self._inference.shutdown(wait=True)
