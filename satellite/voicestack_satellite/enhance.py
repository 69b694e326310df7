"""Noise suppression and automatic gain on the mic (``--noise-suppression``, ``--auto-gain``).

The same speex processing, with the same scales, as Home Assistant's own
pipeline applies to satellite audio (assist_pipeline's ``MicroVadSpeexEnhancer``:
noise suppression 0-4 is -15 dB per step, auto gain 0-31 dBFS is 300 speex
units per step), here on the satellite, before the wake word and the request
hear the mic. Both off (0) by default; ``pyspeex-noise`` is then not needed.
"""

from __future__ import annotations

import numpy as np

FRAME = 160  # 10 ms at 16 kHz: what speex processes at a time
PACKAGE = "pyspeex-noise"


class EnhanceError(RuntimeError):
    """Asked for, but ``pyspeex-noise`` is not installed."""


class MicEnhancer:
    """Speex noise suppression and automatic gain, 10 ms at a time."""

    def __init__(self, auto_gain: int, noise_suppression: int) -> None:
        """``auto_gain`` 0-31 dBFS, ``noise_suppression`` 0-4 (Home Assistant's scales)."""
        try:
            from pyspeex_noise import AudioProcessor  # noqa: PLC0415 (optional)
        except ImportError as err:
            raise EnhanceError(
                f"--auto-gain and --noise-suppression need the {PACKAGE} package:"
                f" pip install {PACKAGE}"
            ) from err
        self._processor = AudioProcessor(auto_gain * 300, noise_suppression * -15)

    def process(self, mic: np.ndarray) -> np.ndarray:
        """``mic`` (whole 10 ms frames) enhanced; as many samples as given."""
        out = np.empty_like(mic)
        for start in range(0, len(mic) - len(mic) % FRAME, FRAME):
            frame = mic[start : start + FRAME].tobytes()
            audio = self._processor.Process10ms(frame).audio
            out[start : start + FRAME] = np.frombuffer(audio, dtype=np.int16)
        out[len(mic) - len(mic) % FRAME :] = mic[len(mic) - len(mic) % FRAME :]
        return out
