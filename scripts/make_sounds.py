"""Generate the satellite's default sounds (awake, done, timer) as small WAVs.

The shipped files in ``satellite/voicestack_satellite/sounds/`` are this script's
output; a test checks they still match, so the sounds are reproducible and
licence-free. Run: ``.venv/bin/python -m scripts.make_sounds``.
"""

from __future__ import annotations

import numpy as np

from voicestack_satellite.audio import RATE, write_wav
from voicestack_satellite.sounds import KINDS, default_path

FADE_S = 0.006
LEVEL = 0.3  # of full scale: audible without startling


def tone(freq_hz: float, seconds: float) -> np.ndarray:
    """A sine with short fades so it starts and stops without clicks."""
    t = np.arange(round(seconds * RATE)) / RATE
    wave = np.sin(2 * np.pi * freq_hz * t)
    fade = min(len(t) // 2, round(FADE_S * RATE))
    ramp = np.linspace(0.0, 1.0, fade)
    wave[:fade] *= ramp
    wave[len(wave) - fade :] *= ramp[::-1]
    return wave


def gap(seconds: float) -> np.ndarray:
    """Silence."""
    return np.zeros(round(seconds * RATE))


def render(kind: str) -> np.ndarray:
    """The samples of ``kind``: rising chime, falling chime, or three beeps."""
    parts = {
        # Short, so little of what follows the wake word is muted.
        "awake": [tone(880, 0.05), tone(1320, 0.07)],
        "done": [tone(1320, 0.05), tone(880, 0.07)],
        "timer": [tone(1000, 0.12), gap(0.08)] * 3 + [gap(0.4)],
    }[kind]
    return np.rint(np.concatenate(parts) * LEVEL * 32767).astype(np.int16)


def main() -> None:
    """Write every sound into the package."""
    for kind in KINDS:
        write_wav(default_path(kind), render(kind).tobytes(), RATE)


if __name__ == "__main__":
    main()
