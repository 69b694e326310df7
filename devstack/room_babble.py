"""Babble: a TV or a few people talking at once, at the room's ``other`` position.

Four voices the tests never use as the user (``devstack.voices``) read lines
of a talk show over each other, each with pauses of its own drawn from the
room's seed. The mix is a loop of ``BED_S`` seconds, convolved with the
``other`` impulse response circularly so the loop has no seam, and played at
the room's noise level.
"""

from __future__ import annotations

import numpy as np

from devstack import room_presets, voices
from devstack.room_presets import RATE, Preset

BED_S = 24.0
TALKERS = ("flite-rms", "flite-awb", "espeak-us-m3", "espeak-gb")
LINES = (
    "Good evening and welcome back to the show.",
    "Tonight we are talking about the weather, and the news from town.",
    "The council met on Tuesday to discuss the new bridge.",
    "Prices at the market went up again this week.",
    "Our next guest has written a book about gardening.",
    "It rained all afternoon, but the evening should be clear.",
    "The team won the match in the last minute.",
    "Stay with us, there is more after the break.",
    "Scientists say the winter will be mild this year.",
    "A new restaurant opened on the corner of Main Street.",
)


class Babble:
    """A looped babble bed at ``rms`` (the room's noise level)."""

    def __init__(self, rms: float, room: Preset) -> None:
        """Synthesized (flite's speech is cached) and placed once per room."""
        rng = np.random.default_rng([room.seed, 3])
        length = round(BED_S * RATE)
        bed = np.zeros(length)
        for name in TALKERS:
            bed += _talker(voices.voice(name), rng, length)
        response = room_presets.responses(room)["other"]
        spread = np.fft.irfft(
            np.fft.rfft(bed, length + len(response))
            * np.fft.rfft(response, length + len(response))
        )
        bed = spread[:length]
        bed[: len(spread) - length] += spread[length:]  # the tail wraps around
        self._bed = bed * rms / np.sqrt(np.mean(bed**2))
        self._at = 0

    def take(self, count: int) -> np.ndarray:
        """The next ``count`` samples of the loop."""
        index = (self._at + np.arange(count)) % len(self._bed)
        self._at = (self._at + count) % len(self._bed)
        return self._bed[index]


def _talker(talker: voices.Voice, rng: np.random.Generator, length: int) -> np.ndarray:
    """One voice reading random lines with pauses, ``length`` samples (cut)."""
    out = np.zeros(length)
    at = round(rng.uniform(0.0, 1.0) * RATE)
    while at < length:
        line = LINES[int(rng.integers(len(LINES)))]
        said = np.frombuffer(talker.say(line), dtype=np.int16).astype(np.float64)
        said /= max(1.0, np.sqrt(np.mean(said**2)))  # every talker equally loud
        end = min(length, at + len(said))
        out[at:end] += said[: end - at]
        at = end + round(rng.uniform(0.2, 0.8) * RATE)
    return out
