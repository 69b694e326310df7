"""The satellite's barge-in, replayed through a room faster than real time.

``devstack.room.Room`` runs a real satellite in real time: ten minutes of
answers per room would take ten minutes per room. This replays the same chain
without the clock: the room's air (``devstack.room_air``, the preset's impulse
responses, drift, clipping speaker and noise, seeded) makes each 20 ms mic
read from what the speaker played and what people said; the satellite's own
``EchoPath`` (AEC3) and ``BargeIn`` judge it, as ``SatelliteCoordinator``
does, one read at a time. What stands in for the satellite's player and
speaker is ``ReplaySpeaker``: it plays the answer a read at a time, and a
pause silences it ``PAUSE_LAG_S`` into the next read (the player's one
10 ms block written ahead and the one in the device), as the real one does.

A real speaker starts each run of playback (an answer after silence, a
resume) a little later than the player's clock says, by an amount that
differs from start to start: ``start_lag_s`` draws it (seeded) for each run,
so the echo's delay against the satellite's reference moves between answers
as it does on a real satellite (0 by default: the delay never moves).

What a replay cannot show, the real satellite in ``Room`` checks:
``bench/barge_in_live.py`` and ``bench/barge_in.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
import time

import numpy as np

from devstack.room_air import Air, ShoeboxAir, SimpleAir
from devstack.room_presets import RATE, Preset, preset
from voicestack_protocol import BargeInConfig, BargeInRequest
from voicestack_satellite.barge_in import BargeIn
from voicestack_satellite.echo_path import EchoPath
from voicestack_satellite.mic_format import READ_SAMPLES
from voicestack_satellite.voice_gate import VoiceGate

PAUSE_LAG_S = 0.02  # the player's block written ahead and the one in the device
STREAM = "answer"
OWNER = "owner"
LOUD = 500  # a voice's first sample this loud (int16) is its onset


@dataclass
class ReplaySpeaker:
    """The player and its speaker: one answer at a time, paused and resumed."""

    answer: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int16))
    position: int = 0  # samples of the answer played
    paused: bool = False
    pauses: list[float] = field(default_factory=list)  # mic sample it went quiet
    now: float = 0.0  # mic sample the satellite is at (the chunk's end, and late)
    resumes: int = 0
    _stop_at: int | None = None  # speaker position where a pause silences it

    def start(self, answer: np.ndarray) -> None:
        """Play ``answer`` from its start."""
        self.answer, self.position, self.paused = answer, 0, False

    @property
    def busy(self) -> bool:
        """An answer is left to play."""
        return self.position < len(self.answer)

    def playing(self) -> tuple[str, int] | None:
        """As ``Player.playing``: None while paused or idle."""
        if self.paused or not self.busy:
            return None
        return STREAM, self.position

    def pause(self) -> None:
        """Stop after what is already written."""
        self.paused = True
        self.pauses.append(self.now + PAUSE_LAG_S * RATE)
        self._stop_at = self.position + round(PAUSE_LAG_S * RATE)

    def resume(self, offset: int | None = None) -> None:
        """Play on."""
        self.paused, self._stop_at = False, None
        self.resumes += 1

    def flush(self, only: Callable[[str], bool] | None = None) -> None:
        """Drop the answer."""
        self.answer, self.position, self.paused, self._stop_at = (
            np.zeros(0, np.int16),
            0,
            False,
            None,
        )

    def block(self, count: int) -> np.ndarray:
        """The next ``count`` samples the speaker plays (fewer when it stops)."""
        end = self.position + count
        if self._stop_at is not None:
            end = min(end, self._stop_at)
        piece = self.answer[self.position : max(self.position, end)]
        self.position += len(piece)
        return piece


@dataclass
class Voice:
    """A voice said into the room: where the mic hears it start, and where it ends."""

    onset: int
    end: int


class Replay:
    """One room, one satellite (echo path and barge-in), chunk by chunk."""

    def __init__(
        self,
        room: str | Preset,
        seed: int | None = None,
        *,
        make_barge_in: Callable[..., BargeIn] = BargeIn,
        min_speech_s: float = 0.3,
        echo_backend: str | None = None,
        chunk: int = READ_SAMPLES,
        start_lag_s: tuple[float, float] = (0.0, 0.0),
    ) -> None:
        """The ``room`` preset (reseeded with ``seed``), barge-in on, nobody enrolled.

        ``echo_backend``: the echo canceller's (``echo_cancel.BACKENDS``; None:
        the satellite's default). ``chunk``: mic samples per step (the
        satellite's mic read; 80 ms before 2026-11-28). ``start_lag_s``: the
        range each run of playback starts late in, drawn per run.
        """
        self.chunk = chunk
        self.preset = preset(room, seed)
        self.start_lag_s = start_lag_s
        self._lags = np.random.default_rng([self.preset.seed, 2])
        self.lag_s = 0.0  # how late the speaker plays the run it plays now
        self._idle = True  # the speaker played nothing in the last read
        self.air: Air = (
            SimpleAir(self.preset.echo_db, self.preset.delay_s)
            if self.preset.simple
            else ShoeboxAir(self.preset)
        )
        self.speaker = ReplaySpeaker()
        self.echo = EchoPath("aec", RATE, echo_backend)
        self.requests: list[tuple[np.ndarray, int, int]] = []  # (audio, start, onset)
        self.barge_in = make_barge_in(
            self.speaker,
            VoiceGate(),
            preroll_s=1.0,
            stream_of=lambda stream: OWNER,
            send=self._sent,
            start_request=self._start_request,
        )
        self.barge_in.configure(BargeInConfig(enabled=True, min_speech_s=min_speech_s))
        self.reports: list[int] = []  # mic sample of each barge-in report
        # True: the owner answers a report by waiting (the bench resumes it, as
        # for another voice); False: it takes the speech as the user's request.
        self.owner_waits = False
        self.mic_end = 0  # mic samples heard
        self.streaming: list[np.ndarray] | None = None  # a request's live mic
        self.recording: list[np.ndarray] | None = None  # the mic, while set
        self.cpu_s = 0.0  # the satellite's share: echo path and barge-in
        # While a list: per 10 ms window judged, (mic sample, loud, VAD, over the
        # residual bar, over the floor): the onset rule's tests, for their delays.
        self.trace: list[tuple[int, bool, bool, bool, bool]] | None = None

    def _sent(self, event: object) -> None:
        self.reports.append(self.mic_end)

    async def _start_request(self, audio: np.ndarray, start: int, onset: int) -> bool:
        self.requests.append((audio, start, onset))
        self.streaming = [audio]
        return True

    def say(self, pcm: bytes, source: str = "user") -> Voice:
        """Someone says ``pcm`` from the next chunk on."""
        samples = np.frombuffer(pcm, dtype=np.int16).astype(np.float32)
        start = self.air.written
        delay = self.air.voice(start, samples, source)
        loud = np.flatnonzero(np.abs(samples) > LOUD)
        onset = start + delay + (int(loud[0]) if len(loud) else 0)
        return Voice(onset, start + delay + len(samples))

    async def step(self) -> None:
        """One mic read: the speaker plays, the mic hears, the satellite judges."""
        speaker_at = self.air.written / self.air.rate * RATE  # the loop's clock
        played = self.speaker.block(self.chunk)
        if len(played) and self._idle:
            self.lag_s = float(self._lags.uniform(*self.start_lag_s))
        self._idle = not len(played)
        if len(played):
            self.air.play(speaker_at + self.lag_s * RATE, played)
        mic = self.air.take(self.chunk)
        started = time.process_time()
        at, self.mic_end = self.mic_end, self.mic_end + len(mic)
        now = self.mic_end / self.air.rate
        self.speaker.now = self.mic_end + self.air.jitter() * RATE
        self.echo.clock.heard(self.mic_end, now)
        if len(played):
            self.echo.on_written(played, speaker_at / RATE)
        cleaned = self.echo.process(mic, at)
        reported = len(self.reports)
        self.barge_in.process(
            mic,
            cleaned,
            self.mic_end,
            self.echo.echo_levels(),
            armed=self.streaming is None,
        )
        self.cpu_s += time.process_time() - started
        if self.trace is not None:
            tests = self.barge_in.over.tests
            self.trace.extend(
                (at + index * 160, *map(bool, row)) for index, row in enumerate(tests)
            )
        if self.recording is not None:
            self.recording.append(mic)
        if self.streaming is not None:
            self.streaming.append(mic)
        elif len(self.reports) > reported and not self.owner_waits:  # the user's
            await self.barge_in.request(BargeInRequest(OWNER))

    async def run(self, seconds: float) -> None:
        """``seconds`` of chunks."""
        for _ in range(round(seconds * RATE / self.chunk)):
            await self.step()

    async def play_out(self, limit_s: float = 60.0) -> None:
        """Chunks until the speaker has nothing left (or ``limit_s``)."""
        for _ in range(round(limit_s * RATE / self.chunk)):
            if not self.speaker.busy:
                return
            await self.step()

    async def drop_answer(self, quiet_s: float) -> None:
        """End a trial: its barge-in and request dropped, the answer flushed, quiet."""
        self.barge_in.abandon(resume=False)
        self.end_request()
        self.speaker.flush()
        await self.run(quiet_s)

    def end_request(self) -> np.ndarray | None:
        """The request streaming (its capture and the mic since), ended; None: none."""
        if self.streaming is None:
            return None
        audio = np.concatenate(self.streaming)
        self.streaming = None
        return audio
