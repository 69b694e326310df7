"""A mic in its own format (``--mic-command-rate/width/channels``) -> 16 kHz mono.

A USB array or a HAT often records only 48 kHz, 32-bit, two or more channels.
Everything after the mic (wake word, VAD, the request) takes 16 kHz mono 16-bit,
so the conversion happens here, once, as the audio arrives:

- channels: one (``--mic-channel-index``) or their average;
- width: 8, 16 or 32-bit samples to 16-bit;
- rate: low-passed below 8 kHz first (a windowed-sinc FIR whose state carries
  across reads), then interpolated: without the filter, everything between 8 kHz
  and the device's Nyquist frequency would fold into the speech band;
- chunks: exactly ``CHUNK_SAMPLES`` out, whatever the device's rate.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .audio import RATE, StreamConverter, to_mono_int16

CHUNK_SAMPLES = 1280  # 80 ms at 16 kHz: openWakeWord's step
PASSBAND_HZ = 7200.0  # kept; 7.2-8 kHz is the filter's transition band


@dataclass(frozen=True, slots=True)
class MicFormat:
    """What the mic command (or stdin) prints."""

    rate: int = RATE
    width: int = 2
    channels: int = 1
    channel: int | None = None  # None: the average of all channels

    @property
    def native(self) -> bool:
        """Already 16 kHz mono 16-bit: nothing to convert."""
        return (self.rate, self.width, self.channels) == (RATE, 2, 1)

    @property
    def read_bytes(self) -> int:
        """Bytes of about one chunk's time (80 ms) in this format."""
        frames = max(1, round(CHUNK_SAMPLES * self.rate / RATE))
        return frames * self.width * self.channels


NATIVE = MicFormat()  # what the satellite works in


def _lowpass(rate: int) -> np.ndarray:
    """Hamming-windowed sinc taps passing up to ``PASSBAND_HZ`` at ``rate``."""
    cutoff = (PASSBAND_HZ + RATE / 2) / 2 / rate  # mid-transition, cycles/sample
    count = 4 * rate // 1000 | 1  # odd: 193 taps at 48 kHz, ~0.8 kHz transition
    n = np.arange(count) - (count - 1) / 2
    taps = 2 * cutoff * np.sinc(2 * cutoff * n) * np.hamming(count)
    normalized: np.ndarray = taps / taps.sum()
    return normalized


class MicConverter:
    """Raw PCM in ``MicFormat`` -> 16 kHz mono int16 chunks of ``CHUNK_SAMPLES``."""

    def __init__(self, fmt: MicFormat) -> None:
        """Filter and interpolator state start at silence."""
        self._format = fmt
        self._taps = _lowpass(fmt.rate) if fmt.rate > RATE else None
        self._history = np.zeros(0 if self._taps is None else len(self._taps) - 1)
        self._resampler = StreamConverter(fmt.rate, 2, 1, RATE)
        self._pending = np.zeros(0, dtype=np.int16)
        self._partial = b""  # bytes of an incomplete frame, kept for the next read

    def convert(self, data: bytes) -> list[np.ndarray]:
        """The whole chunks ``data`` completes (often one, sometimes none or two)."""
        fmt = self._format
        data = self._partial + data
        frame = fmt.width * fmt.channels
        usable = len(data) - len(data) % frame
        data, self._partial = data[:usable], data[usable:]
        mono = to_mono_int16(data, fmt.width, fmt.channels, fmt.channel)
        if self._taps is not None:
            signal = np.concatenate([self._history, mono.astype(np.float64)])
            self._history = signal[len(signal) - len(self._history) :]
            filtered = np.convolve(signal, self._taps, mode="valid")
            mono = np.clip(np.rint(filtered), -32768, 32767).astype(np.int16)
        converted = self._resampler.convert(mono.tobytes())
        pending = np.concatenate([self._pending, converted])
        whole = len(pending) - len(pending) % CHUNK_SAMPLES
        self._pending = pending[whole:]
        return list(pending[:whole].reshape(-1, CHUNK_SAMPLES))
