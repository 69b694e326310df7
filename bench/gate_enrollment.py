"""A candidate enrollment (not shipped): each phrase also embedded in noise.

A voiceprint made from quiet phrases only is far from the same voice heard
over the answer's echo residual or a fan: under white noise at 10 dB the
enrolled user scored below 0.70 in 62 of 100 trials (issue 28). So each phrase
is embedded three times, as recorded and with two backgrounds mixed in, and
the phrase's voiceprint is the normalized mean of the three:

- ``speech-shaped 10 dB``: noise with speech's long-term spectrum (falling
  6 dB per octave above 500 Hz), 10 dB under the voice: a stand-in for what
  AEC3 leaves of an answer, which is speech-like (the satellite keeps no
  recording of its own residual);
- ``white 20 dB``: white noise 20 dB under the voice.

Louder backgrounds (0 dB, white at 10 dB) pulled every voiceprint towards the
noise: in white noise half the other voices were then taken for the user.
The mix is seeded by the phrase itself, so the same audio always gives the
same voiceprint. bench/gate_family.py measures what it buys.
"""

from __future__ import annotations

import hashlib
from typing import Final

import numpy as np

AUGMENTATIONS: Final = ("clean", "speech-shaped 10 dB", "white 20 dB")
LOUD: Final = 500  # a sample this loud (int16) is speech, for its level
_SHAPE_HZ: Final = 500.0  # speech-shaped noise falls 6 dB per octave above this
RATE: Final = 16000


def augmentations() -> tuple[str, ...]:
    """The versions of each phrase that are embedded (the first: as recorded)."""
    return AUGMENTATIONS


def voiced_power(samples: np.ndarray) -> float:
    """Mean power of the samples loud enough to be speech (1.0 if none)."""
    values = samples.astype(np.float64)
    voiced = values[np.abs(values) > LOUD]
    return float(np.mean(voiced**2)) if len(voiced) else 1.0


def augment(samples: np.ndarray, name: str) -> np.ndarray:
    """``samples`` (16 kHz int16) with the background ``name`` mixed in."""
    if name == "clean":
        return samples
    seed = int.from_bytes(hashlib.sha256(samples.tobytes()).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    power = voiced_power(samples)
    kind, _, level = name.partition(" ")
    try:
        snr_db = float(level.removesuffix(" dB"))
    except ValueError:
        raise ValueError(
            f"no augmentation {name!r}; there are {AUGMENTATIONS}"
        ) from None
    if kind == "white":
        noise = rng.normal(0.0, 1.0, len(samples))
    elif kind == "speech-shaped":
        noise = _speech_shaped(rng.normal(0.0, 1.0, len(samples)))
    else:
        raise ValueError(f"no augmentation {name!r}; there are {AUGMENTATIONS}")
    noise *= np.sqrt(power / np.mean(noise**2) / 10 ** (snr_db / 10))
    mixed = samples.astype(np.float64) + noise
    return np.clip(np.rint(mixed), -32768, 32767).astype(np.int16)


def _speech_shaped(white: np.ndarray) -> np.ndarray:
    """White noise through a one-pole low-pass at ``_SHAPE_HZ`` (in the spectrum)."""
    spectrum = np.fft.rfft(white)
    frequencies = np.fft.rfftfreq(len(white), 1 / RATE)
    spectrum /= np.sqrt(1 + (frequencies / _SHAPE_HZ) ** 2)
    return np.fft.irfft(spectrum, len(white))


def mean_voiceprint(embeddings: list[np.ndarray]) -> np.ndarray:
    """The normalized mean of unit embeddings."""
    mean = np.mean(embeddings, axis=0)
    return mean / np.linalg.norm(mean)
