"""TV-like babble: several espeak-ng voices talking at once, quiet, behind the user.

A false wake is the TV saying something like the wake word; what follows it is
more TV, not a request. The babble is made of voices the project was not tuned
on (espeak-ng's), several sentences at once with their own starts, repeated to
the length asked and scaled to a level (dBFS, RMS): a TV across the room.
Deterministic for a seed, so a failure reproduces.
"""

from __future__ import annotations

import numpy as np

from devstack import speech

RATE = speech.RATE
# What TV people say; no command a home assistant would act on.
LINES = (
    "In other news, the city council met again on Tuesday to discuss the budget.",
    "Temperatures will drop sharply overnight with a chance of rain by morning.",
    "The home team scored twice in the second half and held on to win the game.",
    "Our next guest has written three books about the history of the railway.",
    "Stay with us, after the break we look at the best gardens in the region.",
)
VOICES = ("en-us+f3", "en+m3", "en-gb+f2", "en-us+m7")


def babble(seconds: float, level_dbfs: float = -35.0, seed: int = 0) -> bytes:
    """``seconds`` of several voices at once at ``level_dbfs`` RMS (16 kHz int16)."""
    rng = np.random.default_rng(seed)
    length = round(seconds * RATE)
    mix = np.zeros(length)
    for index, voice in enumerate(VOICES):
        talk = np.concatenate(
            [
                np.frombuffer(speech.espeak(line, voice=voice), np.int16)
                for line in np.roll(LINES, index + int(rng.integers(len(LINES))))
            ]
        ).astype(np.float64)
        start = int(rng.integers(len(talk)))
        mix += np.resize(np.roll(talk, -start), length)
    rms = float(np.sqrt(np.mean(mix * mix))) or 1.0
    scaled = mix * (32768 * 10 ** (level_dbfs / 20) / rms)
    return np.clip(np.rint(scaled), -32768, 32767).astype(np.int16).tobytes()


def over(background: bytes, foreground: bytes, at_s: float) -> bytes:
    """``foreground`` (the user, the wake word) said over ``background`` at ``at_s``."""
    mix = np.frombuffer(background, np.int16).astype(np.int32)
    said = np.frombuffer(foreground, np.int16)
    at = round(at_s * RATE)
    end = min(len(mix), at + len(said))
    mix[at:end] += said[: end - at]
    return np.clip(mix, -32768, 32767).astype(np.int16).tobytes()
