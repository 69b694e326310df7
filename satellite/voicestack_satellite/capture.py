"""What barge-in keeps of the mic: the recent past, and a barge-in's speech.

Two views of the same mic: echo handled (what the voice gate compares: the
answer's own voice, which may be the enrolled user's voice too, must not count)
and as it came (what a request sends: speech-to-text copes with a faint echo
better than with the artefacts of cancelling it while someone talks). Both are
bounded: the recent past by the preroll and the longest confirmation, a capture
by ``CAPTURE_MAX_S``.

A request does not take the whole preroll: before the onset, the answer was
playing, and what cancellation leaves of it is words to speech-to-text (tiny.en
made "long. Turn on the fan." of 1 s of it). It starts ``LEAD_S`` before the
voice began (``VoiceStart``): measured on 37 requests over an answer, 34 came
back word for word, against 29 with the whole second.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from .audio import RATE
from .preroll import PrerollBuffer

CAPTURE_MAX_S: Final = 15.0
RECENT_S: Final = 3.0  # beyond the preroll: the longest min_speech_s (2 s) and more
LEAD_S: Final = 0.1  # kept before the voice began: its first consonant is soft


class VoiceStart:
    """Where the stretch of mic windows loud enough to be a voice began.

    A window is loud when it is louder than cancellation leaves of the echo
    (a margin under the speech floor, so the voice's soft start counts); a
    stretch ends after ``gap`` quiet windows (a speech run's end). The VAD's
    onset comes tens of milliseconds, at times half a second, after the voice
    began; the level does not lag.
    """

    def __init__(self, gap: int) -> None:
        """A stretch survives up to ``gap`` quiet windows."""
        self._gap = gap
        self._quiet = 0
        self._since: int | None = None  # mic sample where the stretch began

    def window(self, loud: bool, at: int) -> None:
        """One 10 ms window starting at mic sample ``at``."""
        if loud:
            self._quiet = 0
            if self._since is None:
                self._since = at
        elif self._since is not None:
            self._quiet += 1
            if self._quiet >= self._gap:
                self._since = None

    def reset(self) -> None:
        """The windows to come do not follow the last ones (no answer was watched)."""
        self._since, self._quiet = None, 0

    def began(self, at: int) -> int:
        """Where the voice heard at mic sample ``at`` began (``at`` if not loud)."""
        return at if self._since is None else min(self._since, at)


class Capture:
    """The mic's recent past, and the capture of one barge-in."""

    def __init__(self, preroll_s: float) -> None:
        """Keep ``preroll_s`` before an onset."""
        self._preroll = round(preroll_s * RATE)
        size = self._preroll + round(RECENT_S * RATE)
        self._recent = PrerollBuffer(size)  # echo handled
        self._recent_raw = PrerollBuffer(size)
        self._cleaned: list[np.ndarray] = []
        self._raw: list[np.ndarray] = []
        self.start = 0  # mic sample of the capture's first sample
        self._onset = 0

    def heard(self, raw: np.ndarray, cleaned: np.ndarray) -> None:
        """One mic chunk, both ways; captured too while a capture runs."""
        self._recent.append(cleaned)
        self._recent_raw.append(raw)
        if self._cleaned and sum(map(len, self._cleaned)) < CAPTURE_MAX_S * RATE:
            self._cleaned.append(cleaned)
            self._raw.append(raw)

    def begin(self, onset: int, voice: int) -> None:
        """Capture from ``LEAD_S`` before the ``voice`` began, what is held included.

        At most the preroll before the speech ``onset``.
        """
        lead = round(LEAD_S * RATE)
        self._onset = onset
        self.start = max(0, onset - self._preroll, min(voice, onset) - lead)
        self._cleaned = [self._recent.since(self.start)]
        self._raw = [self._recent_raw.since(self.start)]

    def drop(self) -> None:
        """No capture any more."""
        self._cleaned, self._raw = [], []

    def for_gate(self, seconds: float) -> np.ndarray:
        """``seconds`` from the onset, echo handled."""
        skip = self._onset - self.start
        cleaned: np.ndarray = np.concatenate(self._cleaned)
        return cleaned[skip : skip + round(seconds * RATE)]

    def for_request(self) -> np.ndarray:
        """Everything captured: echo handled before the onset, as said from it."""
        before = np.concatenate(self._cleaned)[: self._onset - self.start]
        return np.concatenate([before, np.concatenate(self._raw)[len(before) :]])
