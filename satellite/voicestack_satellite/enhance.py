"""Noise suppression and automatic gain on the mic (``--noise-suppression``, ``--auto-gain``).

The same speex processing, with the same scales, as Home Assistant's own
pipeline applies to satellite audio (assist_pipeline's ``MicroVadSpeexEnhancer``:
noise suppression 0-4 is -15 dB per step, auto gain 0-31 dBFS is 300 speex
units per step), here on the satellite, before the wake word and the request
hear the mic. Both off (0) by default; ``pyspeex-noise`` is then not needed.

``pyspeex-noise`` 1.x (Home Assistant's pin, source only) calls it
``Process10ms`` and returns an object with the audio; 2.x (wheels for x86-64
and aarch64, what ``voicestack-satellite[barge-in]`` installs) calls it
``process_10ms`` and returns the bytes. Both work; any other shape is refused
at startup (exit 2), with the versions that work, before the mic opens.
2.0.1's automatic gain silences the mic instead (its target level reaches
speex as a double where speex reads a float): a quiet tone, tried at startup,
must come out louder, or ``--auto-gain`` is refused with what to do.
"""

from __future__ import annotations

from collections.abc import Callable
import importlib.metadata

import numpy as np

FRAME = 160  # 10 ms at 16 kHz: what speex processes at a time
PACKAGE = "pyspeex-noise"
WORKS = ">=1.0.2,<3"  # the versions whose API this knows
PROBE_DBFS = -40.0  # the startup tone: auto gain must not make it quieter
PROBE_FRAMES = 10


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
        self.api, self._process = _frame_function(
            AudioProcessor(auto_gain * 300, noise_suppression * -15)
        )
        if auto_gain:
            _check_gain(_frame_function(AudioProcessor(auto_gain * 300, 0))[1])

    def process(self, mic: np.ndarray) -> np.ndarray:
        """``mic`` (whole 10 ms frames) enhanced; as many samples as given."""
        out = np.empty_like(mic)
        for start in range(0, len(mic) - len(mic) % FRAME, FRAME):
            frame = mic[start : start + FRAME].tobytes()
            audio = self._process(frame)
            out[start : start + FRAME] = np.frombuffer(audio, dtype=np.int16)
        out[len(mic) - len(mic) % FRAME :] = mic[len(mic) - len(mic) % FRAME :]
        return out


def _frame_function(processor: object) -> tuple[str, Callable[[bytes], bytes]]:
    """The API's name, and 10 ms in, 10 ms out through whichever ``processor`` has.

    Tried once on silence, so an unusable version fails here, at startup.
    """
    api, function = "", None
    if callable(process := getattr(processor, "process_10ms", None)):  # 2.x
        api, function = "process_10ms", process
    elif callable(process := getattr(processor, "Process10ms", None)):  # 1.x
        api, function = "Process10ms", lambda frame: process(frame).audio
    try:
        works = function is not None and len(function(bytes(2 * FRAME))) == 2 * FRAME
    except (AttributeError, TypeError, ValueError):
        works = False
    if function is None or not works:
        version = importlib.metadata.version(PACKAGE)
        raise EnhanceError(
            f"{PACKAGE} {version} is not one this satellite can use: "
            f'pip install "{PACKAGE}{WORKS}"'
        )
    return api, function


def _check_gain(process: Callable[[bytes], bytes]) -> None:
    """Refuse an automatic gain that makes a quiet tone quieter (pyspeex-noise 2.0.1)."""
    time = np.arange(PROBE_FRAMES * FRAME) / 16000
    tone = np.sin(2 * np.pi * 440 * time) * 32768 * 10 ** (PROBE_DBFS / 20)
    frames = tone.astype(np.int16).reshape(PROBE_FRAMES, FRAME)
    out = np.frombuffer(b"".join(process(f.tobytes()) for f in frames), np.int16)
    level = float(np.sqrt(np.mean(out[-FRAME:].astype(np.float64) ** 2)))
    if level < 0.1 * np.sqrt(np.mean(tone**2)):
        version = importlib.metadata.version(PACKAGE)
        raise EnhanceError(
            f"--auto-gain: the automatic gain of {PACKAGE} {version} silences the mic"
            f" (a {PROBE_DBFS:.0f} dBFS tone came out at {level:.1f} of 32768)."
            " Leave --auto-gain out (--noise-suppression works), or install"
            f" {PACKAGE} 1.0.2 (built from source: pip install {PACKAGE}==1.0.2)"
        )
