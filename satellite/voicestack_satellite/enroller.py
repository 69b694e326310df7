"""Enrollment on the satellite: record one phrase, answer with its voiceprint.

``voicestack-enroll {id, max_s}`` comes right after Home Assistant said which
phrase to read. The next speech (VAD) is recorded, from a short preroll before
its onset to ``END_QUIET_S`` of quiet after it (or ``max_s``), embedded off the
event loop, and answered with ``voicestack-voiceprint``: the 256-float unit
vector and the seconds of speech, or why there is none. Only the embedding
and how the phrase was heard leave the satellite, never the audio: the
speech's level, how far it stood over the room's noise (the VAD's quiet
windows, the preroll among them), and the phrase's statistics against the
gate's cohort, so Home Assistant can say how good an enrollment is (issue 28).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import logging
import math
from typing import Final

import numpy as np
from wyoming.event import Event

from voicestack_protocol import Enroll

from .audio import RATE
from .gate_reports import PhraseQuality, phrase_event
from .vad import WINDOW_SAMPLES, SpeechDetector
from .voice_gate import VoiceGate
from .voiceprint import NoSpeechError

_LOGGER = logging.getLogger(__name__)

PREROLL_S: Final = 0.3
END_QUIET_S: Final = 0.7  # quiet after speech that ends the phrase
MIN_VOICED_S: Final = 0.8  # less speech than this is "too_short"
NOISE_PERCENTILE: Final = 10  # of the windows' power: the room's noise


class Enroller:
    """One phrase at a time; a new one, a wake word or the owner leaving cancels it."""

    def __init__(self, gate: VoiceGate, send: Callable[[Event], None]) -> None:
        """``send`` goes to the owner."""
        self._gate = gate
        self._send = send
        self._vad = SpeechDetector()
        self._current: Enroll | None = None
        self._left = 0  # mic samples the phrase may still take
        self._audio: list[np.ndarray] = []
        self._heard = False  # speech began
        self._voiced = 0  # speech windows
        self._quiet = 0  # windows without speech since the last speech
        self._powers: list[tuple[float, bool]] = []  # each window's power, speech
        self._tail = np.zeros(0, np.int16)  # samples not yet in a whole window
        self._task: asyncio.Task[None] | None = None

    @property
    def gate_available(self) -> bool:
        """Voiceprints can be made here (the voice gate is installed)."""
        return self._gate.available

    @property
    def active(self) -> bool:
        """A phrase is being recorded (speech then starts no request)."""
        return self._current is not None

    def start(self, enroll: Enroll) -> None:
        """Record the next phrase for ``enroll``."""
        self.cancel()
        if not self._gate.available:
            self._send(phrase_event(enroll.id, error="unavailable"))
            return
        self._current = enroll
        self._left = round(enroll.max_s * RATE)
        self._audio, self._heard, self._voiced, self._quiet = [], False, 0, 0
        self._powers, self._tail = [], np.zeros(0, np.int16)
        self._vad.reset()

    def cancel(self) -> None:
        """The phrase is not wanted any more (a wake word, a new one, no owner)."""
        if self._current is not None:
            self._answer(error="cancelled")

    def process(self, mic: np.ndarray) -> None:
        """One mic chunk (echo handled) while a phrase is recorded."""
        if self._current is None:
            return
        self._audio.append(mic)
        samples = np.concatenate([self._tail, mic])
        audio = samples.astype(np.float64)
        for at, speech in enumerate(self._vad.windows(mic)):
            window = audio[at * WINDOW_SAMPLES : (at + 1) * WINDOW_SAMPLES]
            self._powers.append((float(np.mean(window**2)), speech))
            self._heard = self._heard or speech
            self._voiced += speech
            self._quiet = 0 if speech else self._quiet + 1
        self._tail = samples[len(samples) - len(samples) % WINDOW_SAMPLES :]
        if not self._heard:  # keep the preroll only
            del self._audio[: -(-round(PREROLL_S * RATE) // len(mic)) - 1]
        self._left -= len(mic)
        ended = self._quiet * WINDOW_SAMPLES >= END_QUIET_S * RATE
        if self._heard and (ended or self._left <= 0):
            self._finish()
        elif self._left <= 0:
            self._answer(error="no_speech")

    def _finish(self) -> None:
        if self._voiced * WINDOW_SAMPLES < MIN_VOICED_S * RATE:
            self._answer(error="too_short")
            return
        enroll, audio = self._current, np.concatenate(self._audio)
        assert enroll is not None
        self._current = None
        seconds = self._voiced * WINDOW_SAMPLES / RATE
        self._task = asyncio.get_running_loop().create_task(
            self._embed(enroll, audio, seconds, self._levels())
        )

    def _levels(self) -> tuple[float, float]:
        """The speech's level (dBFS) and how far it stands over the room (dB).

        The room: the ``NOISE_PERCENTILE`` of every window's power (the preroll,
        the gaps, the quiet that ended the phrase): the VAD's quiet windows
        between words still hold the voice's tail.
        """
        powers = np.array([power for power, _ in self._powers])
        voiced = np.array([speech for _, speech in self._powers])
        speech_power = max(float(np.mean(powers[voiced])), 1e-3)
        floor = max(float(np.percentile(powers, NOISE_PERCENTILE)), 1e-3)
        level = 10 * math.log10(speech_power / 32768**2)
        return level, 10 * math.log10(speech_power / floor)

    async def _embed(
        self,
        enroll: Enroll,
        audio: np.ndarray,
        seconds: float,
        levels: tuple[float, float],
    ) -> None:
        try:
            embedding = await self._gate.embed(audio)
        except NoSpeechError:
            self._send(phrase_event(enroll.id, error="too_short"))
            return
        quality = PhraseQuality(*levels, self._gate.cohort_stats(embedding))
        _LOGGER.info(
            "Enrollment phrase %s: %.1f s of speech, %s", enroll.id, seconds, quality
        )
        self._send(phrase_event(enroll.id, embedding, seconds, quality=quality))

    def _answer(self, *, error: str) -> None:
        assert self._current is not None
        _LOGGER.info("Enrollment phrase %s: %s", self._current.id, error)
        self._send(phrase_event(self._current.id, error=error))
        self._current = None
        self._audio = []
