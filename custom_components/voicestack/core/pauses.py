"""Pauses in a request's audio, heard on Home Assistant's side of the link.

The satellite ends a request once the room has been quiet for its
``end_of_speech_s`` (0.7 s by default; people pause 0.3 to 1.2 s between phrases,
so it cannot be shorter). Speech-to-text then starts from nothing. Speculation
(``request/speculation.py``) starts it earlier, at a shorter pause, on the audio so far;
this module says when such a pause began and whether speech came back after it.

The rule is the satellite's endpointer's (``voicestack_satellite/endpoint.py``),
on the same 30 ms windows of the same samples: speech is a window louder than
the floor by +10 dB, quiet one below the floor +6 dB. The floor is the quietest
window of the request so far (the satellite measures it just before the
request; this side sees only the request, whose quietest window is at least as
quiet). A pause counts once speech was heard for ``MIN_SPEECH_S`` and every
window since the last loud one was quiet for ``pause_s``; after it, any window
that is not quiet (+6 dB, stricter than the endpointer's +10 dB) means the
speaker went on, so audio that speech-to-text did not get was never taken for
silence. Counted in samples, the audio is the clock: no timer, no wall time.
"""

from __future__ import annotations

from array import array
from enum import Enum
import math

WINDOW = 480  # samples: 30 ms at 16 kHz, the endpointer's window
MIN_FLOOR = 30.0  # RMS of int16 samples: about -60 dBFS (the endpointer's)
SPEECH_OVER_FLOOR = 3.2  # +10 dB: speech
QUIET_OVER_FLOOR = 2.0  # +6 dB: back to the floor
MIN_SPEECH_S = 0.25  # a cough is not a request
RATE = 16000
SAMPLE_BYTES = 2


class Heard(Enum):
    """What a chunk of audio changed."""

    NOTHING = "nothing"
    PAUSED = "paused"  # quiet for ``pause_s`` after speech: the audio so far may be all
    RESUMED = "resumed"  # not quiet again after a pause: it was not all


class PauseWatch:
    """Feed a request's audio in order; each ``feed`` says what it changed."""

    def __init__(self, pause_s: float) -> None:
        """A pause is ``pause_s`` of quiet after speech."""
        self._pause_windows = max(1, round(pause_s * RATE / WINDOW))
        self._speech_windows_needed = max(1, round(MIN_SPEECH_S * RATE / WINDOW))
        self._pending = b""
        self._floor = math.inf
        self._levels: list[float] = []  # every window's, in order
        self.paused = False  # a pause was reported and nothing loud came since
        self.pauses = 0  # how many pauses were reported

    def feed(self, audio: bytes) -> Heard:
        """The next chunk of 16 kHz 16-bit mono audio."""
        data = self._pending + audio
        whole = len(data) // (WINDOW * SAMPLE_BYTES) * WINDOW * SAMPLE_BYTES
        self._pending = data[whole:]
        heard = Heard.NOTHING
        for start in range(0, whole, WINDOW * SAMPLE_BYTES):
            window = array("h", data[start : start + WINDOW * SAMPLE_BYTES])
            level = math.sqrt(math.sumprod(window, window) / WINDOW)
            if (step := self._window(level)) is not Heard.NOTHING:
                heard = step  # the last change is what holds at the chunk's end
        return heard

    def _window(self, level: float) -> Heard:
        self._levels.append(level)
        self._floor = min(self._floor, max(MIN_FLOOR, level))
        quiet = self._floor * QUIET_OVER_FLOOR
        if level >= quiet:
            if self.paused:
                self.paused = False
                return Heard.RESUMED
            return Heard.NOTHING
        # Against the floor as it is now: a request that starts with speech
        # has no floor until its first quiet window.
        tail = self._levels[-self._pause_windows :]
        if (
            not self.paused
            and len(tail) == self._pause_windows
            and max(tail) < quiet
            and self._speech_heard()
        ):
            self.paused = True
            self.pauses += 1
            return Heard.PAUSED
        return Heard.NOTHING

    def _speech_heard(self) -> bool:
        """Enough windows were speech, against the floor as it is now."""
        loud = self._floor * SPEECH_OVER_FLOOR
        speech = sum(level > loud for level in self._levels)
        return speech >= self._speech_windows_needed
