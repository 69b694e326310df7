"""Cheaper improvements on the GE2E gate, measured by bench/gate_family.py.

Issue 28 asks for a gate that takes the user over the answer's echo and in a
room's noise and still refuses a similar voice. Before another model (none
that ships its weights in a PyPI package and runs without torch was found:
docs/benchmarks.md), these change what the same encoder is given, or how its
score is read:

- ``speex``: Speex's noise suppressor (``pyspeex-noise``, the satellite's
  dependency) over the mic before embedding, with 1 s of the room before the
  voice so it has learnt the noise, as on a satellite that runs it all along;
- ``nopad``: the 1.4 s window as one LSTM pass, not padded with silence to
  Resemblyzer's 1.6 s partial;
- ``segments``: the normalized mean of 0.8 s sub-windows every 0.2 s;
- ``looped <seconds>`` (``voiceprint.encoder.loop``; 1.6 s, ``LOOP_S``, ships
  since 2026-11-28): the judged speech repeated end to end to that length
  instead of padded with zeros (the enrollment's phrases as before);
- the window's length (``Take.window_s``: 2.0 s, over the 1.5 s budget, to see
  what length buys);
- a **cohort heard in the gate's conditions**: the cohort's espeak-ng voices
  (``scripts/make_gate_cohort.py``'s variants and phrases, in the ``tv`` room,
  not the judged one) embedded clean, over the answer's residual and in noise;
  pooled, adaptive s-norm's closest-``TOP_K`` choice picks the cohort voices
  heard in the same condition as the test, which is what a noisy test needs
  and no shipped clean cohort gives.
"""

from __future__ import annotations

import json
from typing import Final

import numpy as np

from voicestack_satellite.voiceprint.calibration import COHORT_PATH

COHORT_VARIANTS: Final = tuple(  # the shipped cohort's espeak-ng variants
    voice["name"].rpartition("+")[2]
    for voice in json.loads(COHORT_PATH.read_text(encoding="utf-8"))["voices"]
)
COHORT_PREFIX: Final = "cohort-"  # a voice name: one of the cohort's variants
PREROLL_S: Final = 1.0  # the room heard before the voice, for the denoiser
SEGMENT_FRAMES: Final = 80  # 0.8 s sub-windows
SEGMENT_STEP: Final = 20  # every 0.2 s


def speex(samples: np.ndarray, preroll: int) -> np.ndarray:
    """Speex noise suppression over ``samples``; the first ``preroll`` dropped."""
    from pyspeex_noise import AudioProcessor

    processor = AudioProcessor(0, -30)  # no gain control, suppress up to 30 dB
    out = []
    for at in range(0, len(samples) - 159, 160):
        chunk = processor.process_10ms(samples[at : at + 160].tobytes())
        out.append(np.frombuffer(chunk, np.int16))
    return np.concatenate(out)[preroll:]


def embed(encoder: object, samples: np.ndarray, treatment: str) -> np.ndarray:
    """The unit voiceprint of ``samples`` with ``treatment`` (``nopad``, ``segments``, ``looped``)."""
    from voicestack_satellite.voiceprint.features import (
        mel_spectrogram,
        pcm_to_float,
        preprocess,
    )

    if treatment.startswith("looped "):
        loop_s = float(treatment.removeprefix("looped "))
        return encoder.embed_pcm(samples, loop_s=loop_s)  # type: ignore[attr-defined,no-any-return]
    wav = preprocess(pcm_to_float(samples))
    mel = mel_spectrogram(wav)
    if treatment == "nopad":
        windows = mel[None]
    elif treatment == "segments":
        starts = range(0, max(1, len(mel) - SEGMENT_FRAMES + 1), SEGMENT_STEP)
        windows = np.stack([mel[s : s + SEGMENT_FRAMES] for s in starts])
    else:
        raise ValueError(f"no treatment {treatment!r}")
    partials = encoder.forward(windows)  # type: ignore[attr-defined]
    mean = partials.mean(axis=0)
    return mean / np.linalg.norm(mean)
