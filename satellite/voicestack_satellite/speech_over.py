"""Barge-in's onset rule: whether a 10 ms window over an answer may be a voice.

A window is speech when three things hold:

- the VAD hears speech in the mic as it came (AEC3 mangles a voice over the
  echo: pymicro-vad gave a clear one 0.1 for half a second in the cancelled
  mic; the raw mic always holds the answer's speech, so this alone says little);
- the mic with the answer's voice removed (``echo_path.py``) is at most
  ``RESIDUAL_DB`` under how loud the echo may be there: what cancellation
  leaves of the echo never is that loud, a voice as loud as the answer is
  (the echo's level holds for the room's delay and then dies away at the
  slowest reverberation, ``echo_path.TAIL_DECAY``, so a reverberant room's
  tail is not taken for a voice);
- and it is ``FLOOR_DB`` over the room's noise floor (the cancelled mic's
  slowly rising minimum): with the answer quiet (its first syllable, a gap)
  the echo's level is near nothing, and a fan or the room's hiss that the VAD
  takes for speech must not pause it (measured: 4 of 10 pauses in 2 minutes of
  answers in the ``hard`` room, bench/barge_in_rooms.py). The floor is only
  measured where the echo could not reach it: AEC3's suppressor takes the
  room's noise down with the echo (20 dB and more while it converges), and a
  floor that followed it there sat under the fan for the first 50 s of answers,
  so the fan paused them (all 6 self-pauses per 10 minutes in ``hard``).

Once the answer is paused on a voice, the residual test is dropped: what is
left of "Stop." after its vowel (the closure, the "p") is 15-35 dB under an
echo level that holds the room's delay and then dies at the slowest
reverberation, so with it only 0.12-0.22 s of "Stop." counted and the answer
resumed by itself (flite and joe voices, bench/barge_in_stop.py). Paused,
the speaker adds nothing new, the VAD on the raw mic hears the room, and a
window still has to be ``FLOOR_DB`` over its floor: a cough or a door stays
too short to count as ``min_speech_s``.

A window is *loud* (``VoiceStart``: where a voice began) on softer terms:
``VOICE_DB`` under the echo's level, 3 dB over the floor.
"""

from __future__ import annotations

from typing import Final

import numpy as np

from .vad import WINDOW_SAMPLES, SpeechDetector

# A window louder than this under what the speaker played may be a voice: the
# echo (-10 dB in a living room) with 2 dB or more cancelled never is (AEC3
# takes 20-30 dB off once converged; less in its first seconds).
RESIDUAL_DB: Final = -12.0
VOICE_DB: Final = RESIDUAL_DB - 6.0  # louder: may be a voice's soft start
FLOOR_DB: Final = 6.0  # a voice is this much over the room's noise floor
LOUD_FLOOR_DB: Final = 3.0  # a voice's soft start, this much
FLOOR_RISE_DB_PER_S: Final = 1.0  # the floor follows a louder room this fast
_OVER_RESIDUAL: Final = 10 ** (RESIDUAL_DB / 20)
_OVER_VOICE: Final = 10 ** (VOICE_DB / 20)
_OVER_FLOOR: Final = 10 ** (FLOOR_DB / 20)
_LOUD_FLOOR: Final = 10 ** (LOUD_FLOOR_DB / 20)
_RISE: Final = 10 ** (FLOOR_RISE_DB_PER_S / 20 / 100)  # per 10 ms window
_SILENT: Final = 1.0  # the floor of a digitally silent mic (int16 RMS)


class SpeechOverAnswer:
    """Judges the mic window by window while an answer plays."""

    def __init__(self) -> None:
        """No floor yet: the first window sets it."""
        self._vad = SpeechDetector()
        self._floor: float | None = None
        # Per window of the last judged chunk: (loud, VAD, over the residual bar,
        # over the floor), so each test's delay after an onset can be measured
        # (bench/barge_in_stages.py).
        self.tests = np.zeros((0, 4), dtype=bool)
        # False: a paused answer's speech is judged as a playing one's (the rule
        # before 2026-11-28; the benches' anchor).
        self.paused_terms = True

    def judge(
        self,
        raw: np.ndarray,
        mic: np.ndarray,
        echo: np.ndarray,
        *,
        listen: bool,
        paused: bool = False,
    ) -> list[tuple[bool, bool]]:
        """(loud, speech) per 10 ms window of ``mic`` (echo handled) and ``raw``.

        ``echo``: how loud the echo may be per window (``EchoPath.echo_levels``).
        Every chunk comes here, so the floor follows the room; ``listen``
        False (nothing to pause): nothing is judged (the VAD is not run).
        ``paused``: the answer is paused, so a window is speech without the
        residual test (see the module's docstring).
        """
        frames = len(mic) // WINDOW_SAMPLES
        shaped = mic[: frames * WINDOW_SAMPLES].astype(np.float64)
        levels = np.sqrt(np.mean(shaped.reshape(frames, WINDOW_SAMPLES) ** 2, axis=1))
        echo = np.pad(echo[:frames], (0, max(0, frames - len(echo))))
        floors = np.empty(frames)
        for index, level in enumerate(levels):
            if self._floor is None:
                self._floor = max(_SILENT, level)
            elif echo[index] * _OVER_RESIDUAL < self._floor:  # no echo to suppress
                self._floor = max(_SILENT, min(self._floor * _RISE, level))
            floors[index] = self._floor
        if not listen:
            self.tests = np.zeros((0, 4), dtype=bool)
            return []
        loud = (levels > echo * _OVER_VOICE) & (levels > floors * _LOUD_FLOOR)
        residual = levels > echo * _OVER_RESIDUAL
        floor = levels > floors * _OVER_FLOOR
        vad = np.array(self._vad.windows(raw), dtype=bool)
        vad = np.pad(vad, (0, max(0, frames - len(vad))))[:frames]
        self.tests = np.stack([loud, vad, residual, floor], axis=1)
        speech = vad & floor & (residual | (paused and self.paused_terms))
        return [(bool(loud[i]), bool(speech[i])) for i in range(frames)]
