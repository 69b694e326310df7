"""Every voice the tests can speak with, by name: ``voice("flite-slt").say(text)``.

The project was tuned on Piper's joe; a user is someone else. Besides joe there
are Debian's ``flite`` voices (slt, rms, awb, kal: kal is 8 kHz, telephone-like)
and ``espeak-ng`` variants, each at any speaking rate (``RATES`` are the ones
the journeys use). All return 16 kHz mono int16 PCM (``devstack.speech``);
Piper's and flite's speech is cached on disk, espeak-ng is fast enough not to be.
"""

from __future__ import annotations

from dataclasses import dataclass

from devstack import speech

# Slower, normal and faster than the voice's own pace.
RATES = (0.8, 1.0, 1.25)
ESPEAK_WPM = 165  # espeak-ng's pace at rate 1.0 (its default is 175)


@dataclass(frozen=True, slots=True)
class Voice:
    """One synthetic speaker: ``engine`` (piper, flite, espeak) and its own voice id."""

    name: str
    engine: str
    id: str

    def say(self, text: str, rate: float = 1.0) -> bytes:
        """``text`` at ``rate`` times the voice's pace, 16 kHz mono int16 PCM."""
        if not 0.5 <= rate <= 2.0:
            raise ValueError(f"speaking rate {rate} is not 0.5 to 2")
        if self.engine == "piper":
            return speech.speak(text, length_scale=None if rate == 1.0 else 1 / rate)
        if self.engine == "flite":
            return speech.flite(text, self.id, 1 / rate)
        return speech.espeak(text, self.id, round(ESPEAK_WPM * rate))


VOICES: tuple[Voice, ...] = (
    Voice("joe", "piper", "en_US-joe-medium"),
    Voice("flite-slt", "flite", "slt"),
    Voice("flite-rms", "flite", "rms"),
    Voice("flite-awb", "flite", "awb"),
    Voice("flite-kal", "flite", "kal"),
    Voice("espeak-us-f3", "espeak", "en-us+f3"),
    Voice("espeak-us-m3", "espeak", "en-us+m3"),
    Voice("espeak-gb", "espeak", "en-gb"),
)
NAMES = tuple(v.name for v in VOICES)


def voice(name: str) -> Voice:
    """The voice called ``name`` (one of ``NAMES``)."""
    for candidate in VOICES:
        if candidate.name == name:
            return candidate
    raise ValueError(f"no voice {name!r}; there are {', '.join(NAMES)}")
