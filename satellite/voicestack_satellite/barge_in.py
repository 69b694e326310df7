"""Barge-in on the satellite: speech over an answer pauses it, at once.

Only when the owner's ``voicestack-barge-in-config`` enabled it, and only over
a stream whose ``audio-start`` said ``barge_in`` (a voice response; never an
announcement or our own sounds). Whether a 10 ms window is speech over the
answer, the onset rule says (``speech_over.py``). Per window:

1. **Pause fast.** ``PAUSE_AFTER_S`` of speech pauses the player: an
   interruption is heard within about a tenth of a second.
2. **Confirm slow.** Speech that lasts ``min_speech_s`` (the owner's setting)
   is a barge-in: ``voicestack-barge-in`` {stream, played, onset} goes to the
   owner and the mic is captured from just before the voice began. Speech that
   stops sooner (a cough, a door) was not one: the player resumes by itself
   where it paused, and the owner hears nothing.
3. **Name the voice.** With voiceprints, ``GATE_WINDOW_S`` of speech from the
   onset (or all of it, if it ended sooner) is embedded off the event loop and
   ``voicestack-voice`` says whose it is.
4. **Obey.** ``voicestack-resume`` (someone else): the capture is dropped, the
   rest of that speech ignored until a silence; ``voicestack-flush``: dropped;
   ``voicestack-barge-in-request`` (the user): the answer is flushed, the
   capture becomes a request; with ``hold`` (the gate was not sure) the answer
   stays paused until the owner resumes or flushes it. No answer in
   ``GIVE_UP_S``: flushed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
import logging
from typing import Final

import numpy as np
from wyoming.event import Event

from voicestack_protocol import BargeInConfig, BargeInRequest, barge_in_event

from .audio import RATE
from .barge_in_phase import Phase, Playback, windows
from .capture import Capture, VoiceStart
from .gate_reports import verdict_event, voiceprint_rows
from .player import Player
from .speech_over import SpeechOverAnswer
from .vad import WINDOW_SAMPLES
from .voice_gate import VoiceGate

_LOGGER = logging.getLogger(__name__)

PAUSE_AFTER_S: Final = 0.05  # speech that pauses the answer (tentatively)
END_QUIET_S: Final = 0.15  # no speech this long ends a speech run over the answer
# Paused, the answer is silent: a run ends between phrases, not words (with 0.15 s,
# 1 in 4 "Turn on the fan." over an answer broke into runs too short to report).
PAUSED_QUIET_S: Final = 0.4
HOLD_QUIET_S: Final = 0.5  # after a resume: quiet that ends the voice let go by
GATE_WINDOW_S: Final = 1.3  # speech the gate's verdict rests on
GIVE_UP_S: Final = 15.0  # no answer from the owner this long after the pause


class BargeIn:
    """Speech over the owner's answers: pause, report, capture, obey."""

    def __init__(
        self,
        player: Player,
        gate: VoiceGate,
        *,
        preroll_s: float,
        stream_of: Callable[[str], str | None],
        send: Callable[[Event], None],
        start_request: Callable[[np.ndarray, int, int], Awaitable[bool]],
    ) -> None:
        """``stream_of``: the owner's id of a player stream that may pause, else None.

        ``send`` goes to the owner; ``start_request(audio, start, onset)``
        turns the capture into a request.
        """
        self._player = player
        self._gate = gate
        self._stream_of = stream_of
        self._send = send
        self._start_request = start_request
        self.config = BargeInConfig()
        self._people: tuple[str, ...] = ()
        self._voiceprints: np.ndarray | None = None  # unit rows, one per person
        self.over = SpeechOverAnswer()  # the onset rule (a bench reads its tests)
        self._capture = Capture(preroll_s)
        self._voice = VoiceStart(windows(END_QUIET_S))
        self.phase = Phase.WATCH
        self._playback = Playback()
        # Paused after the run's settling: judged on the paused terms (speech_over.py).
        self._settled = False
        self.reported = 0  # barge-ins reported to the owner
        self._reset_run()
        self._paused: tuple[str, str, int] | None = None  # player id, owner id, played
        self._since = 0  # mic sample of the report (WAITING)
        self._held: tuple[str, int] | None = None  # player id, onset: a held request
        self._verdict: asyncio.Task[None] | None = None

    def _reset_run(self) -> None:
        self._onset: int | None = None  # mic sample where the speech run began
        self._voice_from = 0  # mic sample where its voice began (VoiceStart)
        self._voiced = 0  # speech windows in the run
        self._quiet = 0  # windows without speech since the last speech

    def configure(self, config: BargeInConfig) -> None:
        """The owner's settings; turning barge-in off lets a pause go on playing."""
        self.config = config
        self._people, self._voiceprints = voiceprint_rows(config.voiceprints)
        if not config.enabled and self.phase is not Phase.WATCH:
            self.abandon(resume=True)

    def process(
        self,
        raw: np.ndarray,
        mic: np.ndarray,
        end: int,
        echo: np.ndarray,
        *,
        armed: bool = True,
    ) -> None:
        """One mic chunk ending at mic sample ``end``, as is and echo handled.

        Every chunk comes here. ``echo``: per 10 ms window, how loud the echo
        may be (``EchoPath``); ``armed`` False (a request streams): nothing is
        detected. What the gate and a request hear of them: ``capture.py``.
        """
        self._capture.heard(raw, mic)
        # Every chunk, listening or not (a held answer pauses what is watched).
        if self._held is not None and end - self._held[1] >= GIVE_UP_S * RATE:
            _LOGGER.warning("Held answer not resumed in %s s: flushing", GIVE_UP_S)
            self._player.flush(only=self._held[0].__eq__)
            self._held = None
        listen = self.config.enabled and armed
        if listen and self.phase is Phase.WATCH and self._watched() is None:
            self._reset_run()
            self._voice.reset()
            listen = False
        start = end - len(mic)
        self._playback.heard(self._player.playing() is not None, start)
        paused = self._settled and self.phase in (Phase.PAUSED, Phase.WAITING)
        judged = self.over.judge(raw, mic, echo, listen=listen, paused=paused)
        for index, (loud, speech) in enumerate(judged):
            at = start + index * WINDOW_SAMPLES
            self._voice.window(loud, at)
            self._step(speech, at)

    def _watched(self) -> tuple[str, str, int] | None:
        """(player id, owner id, played) of an answer playing now that may pause."""
        playing = self._player.playing()
        if playing is None or (owner_id := self._stream_of(playing[0])) is None:
            return None
        return playing[0], owner_id, playing[1]

    def _step(self, speech: bool, at: int) -> None:
        """One 10 ms window starting at mic sample ``at``."""
        if speech:
            if self._onset is None:
                self._onset = at
                self._voice_from = self._voice.began(at)
            self._voiced, self._quiet = self._voiced + 1, 0
        else:
            self._quiet += 1
        if self.phase is Phase.WAITING and not self._check_waiting(at):
            return
        if self.phase is Phase.HOLD:
            if self._quiet >= windows(HOLD_QUIET_S):
                self.phase = Phase.WATCH
                self._reset_run()
        elif self._quiet >= windows(
            END_QUIET_S if self.phase is Phase.WATCH else PAUSED_QUIET_S
        ):
            self._run_ended()
        elif self.phase is Phase.WATCH and self._voiced >= windows(PAUSE_AFTER_S):
            self._pause(at)
        elif self.phase is Phase.PAUSED and self._voiced >= windows(
            self.config.min_speech_s
        ):
            self._report(at)

    def _run_ended(self) -> None:
        if self.phase is Phase.PAUSED:  # too short: not a barge-in
            self._player.resume()
            self.phase = Phase.WATCH
            _LOGGER.debug("Resumed by itself: %d ms of speech", 10 * self._voiced)
        elif self.phase is Phase.WAITING:
            self._submit_verdict()
        if self.phase is Phase.WATCH:
            self._reset_run()

    def _pause(self, at: int) -> None:
        watched = self._watched()
        if watched is None:
            return
        self._settled = self._playback.settled(at)
        self._player.pause()
        self._paused = watched
        self.phase = Phase.PAUSED
        _LOGGER.debug("Paused stream %s on speech at sample %s", *watched[1:])

    def _report(self, at: int) -> None:
        assert self._paused is not None
        assert self._onset is not None
        _player_id, owner_id, played = self._paused
        self._send(barge_in_event(owner_id, played, self._onset))
        self.reported += 1
        self._capture.begin(self._onset, self._voice_from)
        self._since = at
        self.phase = Phase.WAITING
        _LOGGER.info("Barge-in: speech over stream %s (played %d)", owner_id, played)

    def _check_waiting(self, at: int) -> bool:
        """Whether the barge-in still waits (a verdict or giving up may end it)."""
        assert self._onset is not None
        if at - self._onset >= GATE_WINDOW_S * RATE:
            self._submit_verdict()
        if at - self._since >= GIVE_UP_S * RATE:
            _LOGGER.warning("No answer to the barge-in in %s s: flushing", GIVE_UP_S)
            self.abandon(resume=False)
        return self.phase is Phase.WAITING

    def _submit_verdict(self) -> None:
        """Embed the speech so far (once per barge-in) if anyone is enrolled."""
        if (
            self._verdict is not None
            or self._voiceprints is None
            or not self._gate.available
            or self._onset is None
            or self._paused is None
        ):
            return
        speech = self._capture.for_gate(GATE_WINDOW_S)
        self._verdict = asyncio.get_running_loop().create_task(
            self._name_voice(self._paused[1], speech)
        )

    async def _name_voice(self, owner_id: str, speech: np.ndarray) -> None:
        config = self.config
        verdict = await self._gate.whose(
            speech, self._people, self._voiceprints, config.threshold
        )
        _LOGGER.info("Voice over stream %s: %s", owner_id, verdict)
        if self.phase is Phase.WAITING and self._paused and self._paused[1] == owner_id:
            self._send(verdict_event(owner_id, verdict, len(speech) / RATE))

    # -- the owner's answers -------------------------------------------------------

    def resumed(self) -> None:
        """``voicestack-resume``: someone else spoke; let their speech go by."""
        self._held = None
        if self.phase in (Phase.PAUSED, Phase.WAITING):
            self._drop(Phase.HOLD)
            self._quiet = 0

    def stream_ended(self, player_id: str) -> None:
        """A stream ended (played, flushed): a barge-in of it is over."""
        if self._held is not None and self._held[0] == player_id:
            self._held = None
        if self._paused is not None and self._paused[0] == player_id:
            self._drop()

    async def request(self, asked: BargeInRequest) -> None:
        """``voicestack-barge-in-request``: the capture is a request (held or not)."""
        paused = self._paused
        if self.phase is not Phase.WAITING or not paused or paused[1] != asked.stream:
            _LOGGER.info("Barge-in request for stream %s: none waits", asked.stream)
            return
        assert self._onset is not None
        audio, start = self._capture.for_request(), self._capture.start
        onset = self._onset
        if asked.hold:  # the owner checks the request, then resumes or flushes
            self._drop()
            self._held = (paused[0], onset)
        else:
            self.abandon(resume=False)
        if not await self._start_request(audio, start, onset):
            _LOGGER.warning("Barge-in request for %s could not start", asked.stream)

    def abandon(self, *, resume: bool) -> None:
        """End whatever barge-in is going on: play on (``resume``) or flush."""
        paused = self._paused[0] if self._paused else self._held and self._held[0]
        self._drop()
        self._held = None
        if paused:
            if resume:
                self._player.resume()
            else:
                self._player.flush(only=paused.__eq__)

    def _drop(self, phase: Phase = Phase.WATCH) -> None:
        """Forget the barge-in going on; go on in ``phase``."""
        self.phase = phase
        if phase is Phase.WATCH:
            self._reset_run()
        self._paused = None
        self._capture.drop()
        if self._verdict is not None:
            self._verdict.cancel()
            self._verdict = None
