"""End of speech from the sound level: the request ends when the room is quiet again.

A VAD model keeps its speech probability up for more than half a second after the
last word, and Home Assistant then waits its silence time on top: about 1.4 s
between the last word and the end of the request. The level of the room is a
quicker cue: once speech was heard, the request ends when the level stays near the
room's noise floor (measured just before the request) for ``silence_s``. Constant
noise (a fan) raises the floor with it; speech over a TV never ends this way and
falls back to the peer's VAD.

After a wake word, the same levels tell whether anyone spoke at all: a false
wake (the TV said something like it) is followed by the room's usual sound. If
no speech starts within ``no_speech_s`` of the wake word, the request is dropped
(``unheard``) instead of waiting for the peer's VAD to give up (Home
Assistant's does after 15 s) and sending the silence to speech-to-text, which
makes words up from it ("Thanks."). Speech has started once ``MIN_SPEECH_S`` of
it was louder than the room by +10 dB, the room being the floor or, if louder,
the median level since the wake word: a TV's babble is the room, a voice near
the satellite stands out of it. Counted in samples: the mic is the clock.
"""

from __future__ import annotations

import numpy as np

WINDOW = 480  # samples: 30 ms at 16 kHz, the span each level is measured over
MIN_FLOOR = 30.0  # RMS of int16 samples: about -60 dBFS; a digital-silence room
SPEECH_OVER_FLOOR = 3.2  # +10 dB: speech
QUIET_OVER_FLOOR = 2.0  # +6 dB: back to the floor
MIN_SPEECH_S = 0.25  # a cough is not a request
# After a wake word, a word this recent may be the start of a request: the
# no-speech timeout waits for it (a gap between words is shorter).
WORD_GAP_S = 0.3


def window_levels(samples: np.ndarray) -> np.ndarray:
    """RMS of each whole 30 ms window."""
    whole = len(samples) // WINDOW * WINDOW
    windows = samples[:whole].astype(np.float64).reshape(-1, WINDOW)
    levels: np.ndarray = np.sqrt(np.mean(windows * windows, axis=1))
    return levels


class Endpointer:
    """Feed the request's live audio; ``process`` says when speech has ended."""

    def __init__(
        self, silence_s: float, rate: int = 16000, no_speech_s: float = 0.0
    ) -> None:
        """``silence_s`` of quiet after speech ends the request.

        ``no_speech_s`` (0: never): with no speech started by then, ``unheard``.
        """
        self._quiet_windows_needed = max(1, round(silence_s * rate / WINDOW))
        self._speech_windows_needed = max(1, round(MIN_SPEECH_S * rate / WINDOW))
        self._no_speech_windows = round(no_speech_s * rate / WINDOW)
        self._word_gap_windows = round(WORD_GAP_S * rate / WINDOW)
        self.start(np.zeros(0, dtype=np.int16))

    def start(self, before: np.ndarray) -> None:
        """A new request; ``before`` is audio from just before it (the floor)."""
        levels = window_levels(before)
        self._floor = max(MIN_FLOOR, float(np.min(levels)) if len(levels) else 0.0)
        self._pending = np.zeros(0, dtype=np.int16)
        self._speech_windows = 0
        self._quiet_windows = 0
        self._levels: list[float] = []  # each window's, since ``start``
        self._started = False  # speech stood out of the room (see the module)
        self._stood_out = 0  # windows that did
        self._since_loud = 0  # windows since the last one that stood out

    @property
    def heard_speech(self) -> bool:
        """Enough loud audio for a request was heard since ``start``."""
        return self._speech_windows >= self._speech_windows_needed

    @property
    def unheard(self) -> bool:
        """``no_speech_s`` passed and no speech started (none is starting now)."""
        return (
            0 < self._no_speech_windows <= len(self._levels)
            and not self._started
            and self._since_loud >= self._word_gap_windows
        )

    def process(self, samples: np.ndarray) -> bool:
        """True once speech was heard and the level has been quiet long enough."""
        audio = np.concatenate([self._pending, samples])
        whole = len(audio) // WINDOW * WINDOW
        self._pending = audio[whole:]
        for level in window_levels(audio[:whole]):
            self._speech_started(level)
            if level > self._floor * SPEECH_OVER_FLOOR:
                self._speech_windows += 1
                self._quiet_windows = 0
            elif level < self._floor * QUIET_OVER_FLOOR:
                self._quiet_windows += 1
            if (
                self._speech_windows >= self._speech_windows_needed
                and self._quiet_windows >= self._quiet_windows_needed
            ):
                return True
        return False

    def _speech_started(self, level: float) -> None:
        """Count ``level`` toward speech standing out of the room (``unheard``)."""
        self._levels.append(level)
        if self._started or not self._no_speech_windows:
            return
        room = max(self._floor, float(np.median(self._levels)))
        if level > room * SPEECH_OVER_FLOOR:
            self._stood_out += 1
            self._since_loud = 0
        else:
            self._since_loud += 1
        self._started = self._stood_out >= self._speech_windows_needed
