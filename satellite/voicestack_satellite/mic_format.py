"""A mic in its own format (``--mic-command-rate/width/channels``) -> 16 kHz mono.

A USB array or a HAT often records only 48 kHz, 32-bit, two or more channels.
Everything after the mic (wake word, VAD, the request) takes 16 kHz mono 16-bit,
so the conversion happens here, once, as the audio arrives:

- channels: one (``--mic-channel-index``) or their average;
- width: 8, 16 or 32-bit samples to 16-bit;
- rate: soxr's band-limited streaming resampler (``StreamConverter``), which
  filters out what lies above 8 kHz: without a filter, everything between 8 kHz
  and the device's Nyquist frequency would fold into the speech band;
- chunks: exactly ``READ_SAMPLES`` out, whatever the device's rate. soxr holds
  back up to about 40 ms of audio (its filter, bench/mic_format.py); the chunks
  start with ``LEAD_S`` of silence in its place, so the samples that come out
  keep pace with the device's time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .audio import RATE, StreamConverter, to_mono_int16

CHUNK_SAMPLES = 1280  # 80 ms at 16 kHz: openWakeWord's step (what the listener gets)
# 20 ms: how often the mic is read. Barge-in judges each read as it comes, so a
# voice over an answer is not kept waiting for the rest of an 80 ms chunk
# (measured: 44 ms off the median onset-to-paused, bench/barge_in_stages.py).
READ_SAMPLES = 320
LEAD_S = 0.05  # silence ahead of a resampled mic: more than soxr holds back


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
        """Bytes of about one read's time (20 ms) in this format."""
        frames = max(1, round(READ_SAMPLES * self.rate / RATE))
        return frames * self.width * self.channels


NATIVE = MicFormat()  # what the satellite works in


class MicConverter:
    """Raw PCM in ``MicFormat`` -> 16 kHz mono int16 chunks of ``READ_SAMPLES``."""

    def __init__(self, fmt: MicFormat) -> None:
        """The resampler starts at silence, and so do the chunks (``LEAD_S``)."""
        self._format = fmt
        self._resampler = StreamConverter(fmt.rate, 2, 1, RATE)
        lead = 0 if fmt.rate == RATE else round(LEAD_S * RATE)
        self._pending = np.zeros(lead, dtype=np.int16)
        self._partial = b""  # bytes of an incomplete frame, kept for the next read

    def convert(self, data: bytes) -> list[np.ndarray]:
        """The whole chunks ``data`` completes (often one, sometimes none or two)."""
        fmt = self._format
        data = self._partial + data
        frame = fmt.width * fmt.channels
        usable = len(data) - len(data) % frame
        data, self._partial = data[:usable], data[usable:]
        mono = to_mono_int16(data, fmt.width, fmt.channels, fmt.channel)
        converted = self._resampler.convert(mono.tobytes())
        pending = np.concatenate([self._pending, converted])
        whole = len(pending) - len(pending) % READ_SAMPLES
        self._pending = pending[whole:]
        return list(pending[:whole].reshape(-1, READ_SAMPLES))


class Rechunk:
    """Reads of any length -> whole ``CHUNK_SAMPLES`` chunks (the listener's step)."""

    def __init__(self) -> None:
        """Nothing held."""
        self._held: list[np.ndarray] = []
        self._count = 0

    def add(self, samples: np.ndarray) -> np.ndarray | None:
        """The whole chunks ``samples`` completes (one array), else None."""
        self._held.append(samples)
        self._count += len(samples)
        if self._count < CHUNK_SAMPLES:
            return None
        held = np.concatenate(self._held)
        whole = len(held) - len(held) % CHUNK_SAMPLES
        rest = held[whole:]
        self._held, self._count = [rest], len(rest)
        return held[:whole]
