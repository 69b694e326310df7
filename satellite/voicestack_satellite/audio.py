"""PCM conversion to the satellite's one internal format: 16 kHz, mono, int16.

Everything the satellite hears (mic file, mic command, stdin) and everything it plays
is converted once at the edge, so the rest of the code never branches on formats.

A sample here is one instant of every channel (``width * channels`` bytes of
interleaved PCM): positions and counts at a stream's own rate count these.
"""

from __future__ import annotations

from pathlib import Path
import wave

import numpy as np
import soxr

RATE = 16000
WIDTH = 2
CHANNELS = 1

_DTYPE_BY_WIDTH = {1: np.uint8, 2: np.int16, 4: np.int32}


class AudioFormatError(ValueError):
    """Audio the satellite cannot convert (unsupported width, not a WAV, ...)."""


def to_mono_int16(
    data: bytes, width: int, channels: int, channel: int | None = None
) -> np.ndarray:
    """Interleaved PCM of 8/16/32-bit values -> mono int16.

    ``channel`` picks one channel (useful for a mic array); by default channels are
    averaged.
    """
    dtype = _DTYPE_BY_WIDTH.get(width)
    if dtype is None:
        raise AudioFormatError(
            f"unsupported sample width {width} bytes (use 1, 2 or 4)"
        )
    if channels < 1:
        raise AudioFormatError(f"invalid channel count {channels}")
    sample_bytes = width * channels
    usable = len(data) - (len(data) % sample_bytes)
    values = np.frombuffer(data[:usable], dtype=dtype).astype(np.float64)
    if width == 1:
        values = (values - 128.0) * 256.0
    elif width == 4:
        values = values / 65536.0
    by_channel = values.reshape(-1, channels)
    if channel is not None:
        if not 0 <= channel < channels:
            raise AudioFormatError(f"channel {channel} not in 0..{channels - 1}")
        mono = by_channel[:, channel]
    else:
        mono = by_channel.mean(axis=1)
    return np.clip(np.rint(mono), -32768, 32767).astype(np.int16)


def from_mono_int16(samples: np.ndarray, width: int, channels: int) -> bytes:
    """Mono int16 -> interleaved PCM of ``width`` bytes, the same on every channel."""
    if width == 1:
        values: np.ndarray = ((samples.astype(np.int32) >> 8) + 128).astype(np.uint8)
    elif width == 4:
        values = samples.astype(np.int32) << 16
    else:
        values = samples
    return np.repeat(values, channels).tobytes()


def resample(samples: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Band-limited resampling of a whole int16 signal (FFT method).

    Exact for band-limited signals and free of the aliasing that linear
    interpolation adds, which matters for wake-word accuracy.
    """
    if src_rate <= 0 or dst_rate <= 0:
        raise AudioFormatError(f"invalid sample rates {src_rate} -> {dst_rate}")
    if src_rate == dst_rate or len(samples) == 0:
        return samples.astype(np.int16, copy=True)
    n_out = round(len(samples) * dst_rate / src_rate)
    spectrum = np.fft.rfft(samples.astype(np.float64))
    n_bins = n_out // 2 + 1
    if n_bins <= len(spectrum):
        spectrum = spectrum[:n_bins]
    else:
        spectrum = np.pad(spectrum, (0, n_bins - len(spectrum)))
    out = np.fft.irfft(spectrum, n_out) * (n_out / len(samples))
    return np.clip(np.rint(out), -32768, 32767).astype(np.int16)


def read_wav(path: str | Path, channel: int | None = None) -> np.ndarray:
    """Read a WAV of any rate, width and channel count as 16 kHz mono int16."""
    try:
        with wave.open(str(path), "rb") as wav:
            rate = wav.getframerate()
            width = wav.getsampwidth()
            channels = wav.getnchannels()
            data = wav.readframes(wav.getnframes())
    except (wave.Error, EOFError) as err:
        raise AudioFormatError(f"{path}: not a PCM WAV file ({err})") from err
    return resample(to_mono_int16(data, width, channels, channel), rate, RATE)


def write_wav(path: str | Path, pcm: bytes, rate: int = RATE) -> Path:
    """Write 16-bit mono PCM as a WAV file."""
    path = Path(path)
    with wave.open(str(path), "wb") as wav:
        wav.setframerate(rate)
        wav.setsampwidth(WIDTH)
        wav.setnchannels(CHANNELS)
        wav.writeframes(pcm)
    return path


class StreamConverter:
    """Convert a stream chunk by chunk to mono int16 at ``dst_rate``.

    Channels are averaged first (``to_mono_int16``), then soxr's streaming
    resampler (``ResampleStream``, quality HQ) changes the rate: band-limited,
    so what lies above the new Nyquist frequency is filtered out instead of
    folding into the speech band, with no seams at chunk boundaries. Linear
    interpolation, which this replaced, has no such filter: a 10 kHz tone in
    22.05 kHz audio came out at 6 kHz 6 dB below a 1 kHz one, now 113 dB below
    (bench/mic_format.py measures both). soxr holds back its filter's length of audio (up to about 40 ms):
    the last chunk of a stream is converted with ``last=True`` to get it out, up
    to the instant of the last sample fed (not the ringing into the silence
    after it), as interpolation did.

    Why not wyoming's ``AudioChunkConverter`` (audioop's ``ratecv``)? Python
    3.13 removed ``audioop`` and wyoming then falls back to pure Python (17 times
    slower than interpolation with numpy); it also adds the two channels of
    stereo instead of averaging them (twice as loud, clipping) and takes no
    more than two.
    """

    def __init__(self, rate: int, width: int, channels: int, dst_rate: int) -> None:
        """Describe the incoming format and the rate wanted."""
        if rate <= 0 or dst_rate <= 0:
            raise AudioFormatError(f"invalid sample rate {rate} -> {dst_rate}")
        if width not in _DTYPE_BY_WIDTH:
            raise AudioFormatError(f"unsupported sample width {width} bytes")
        if channels < 1:
            raise AudioFormatError(f"invalid channel count {channels}")
        self._width, self._channels = width, channels
        self._ratio = dst_rate / rate
        self._resampler = (
            None
            if rate == dst_rate
            else soxr.ResampleStream(rate, dst_rate, 1, dtype="int16")
        )
        self._fed = self._made = 0  # samples in, samples out

    def samples_in(self, data: bytes) -> int:
        """How many whole samples (of every channel) ``data`` holds."""
        return len(data) // (self._width * self._channels)

    def convert(self, data: bytes, *, last: bool = False) -> np.ndarray:
        """Convert one chunk (``last``: and whatever the resampler still holds)."""
        samples = to_mono_int16(data, self._width, self._channels)
        if self._resampler is None:
            return samples
        self._fed += len(samples)
        converted: np.ndarray = self._resampler.resample_chunk(samples, last=last)
        if last:  # nothing after the last sample's instant
            until = int((self._fed - 1) * self._ratio) + 1 if self._fed else 0
            converted = converted[: max(0, until - self._made)]
        self._made += len(converted)
        return converted
