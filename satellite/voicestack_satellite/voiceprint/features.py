"""Resemblyzer's audio preprocessing and mel spectrogram, in numpy only.

Each step repeats ``resemblyzer/audio.py`` 0.1.4 (and the librosa 0.11 calls it
makes) operation for operation, so the encoder sees the same frames it was trained
on: volume raised to -30 dBFS, long silences cut with WebRTC VAD (30 ms windows,
moving average of 8, silences kept up to 6 windows), then a 40-channel Slaney mel
power spectrogram (25 ms Hann window, 10 ms hop, centred frames, zero padding).
librosa (and the numba it needs) is not imported: its STFT and filterbank are a few
lines of numpy.
"""

from __future__ import annotations

from functools import cache
import math
from typing import Any

import numpy as np

SAMPLE_RATE = 16000
N_FFT = SAMPLE_RATE * 25 // 1000  # 400 samples: the 25 ms analysis window
HOP = SAMPLE_RATE * 10 // 1000  # 160 samples: one frame every 10 ms
N_MELS = 40
TARGET_DBFS = -30.0
VAD_WINDOW = SAMPLE_RATE * 30 // 1000  # 480 samples
VAD_AVERAGE_WIDTH = 8
VAD_MAX_SILENCE = 6
INT16_MAX = 2**15 - 1


def pcm_to_float(samples: np.ndarray) -> np.ndarray:
    """16 kHz int16 samples as float32 in [-1, 1), the way soundfile/librosa read them."""
    return samples.astype(np.float32) / np.float32(32768.0)


def preprocess(wav: np.ndarray) -> np.ndarray:
    """``resemblyzer.preprocess_wav`` for 16 kHz float audio: louder, shorter silences."""
    return trim_long_silences(normalize_volume(wav, TARGET_DBFS))


def normalize_volume(wav: np.ndarray, target_dbfs: float) -> np.ndarray:
    """Raise (never lower) the level to ``target_dbfs``; same dtype arithmetic as Resemblyzer."""
    rms = np.sqrt(np.mean((wav * INT16_MAX) ** 2))
    if rms == 0:
        return wav  # silence: Resemblyzer would divide by zero and multiply by inf
    change = target_dbfs - 20 * np.log10(rms / INT16_MAX)
    if change < 0:
        return wav
    louder: np.ndarray = wav * (10 ** (change / 20))
    return louder


def trim_long_silences(wav: np.ndarray) -> np.ndarray:
    """Drop silences longer than the VAD allows, leading and trailing ones included.

    Windows that WebRTC VAD (mode 3) marks as speech are smoothed with a centred
    moving average, rounded, then dilated by ``VAD_MAX_SILENCE`` windows; samples
    outside the mask go. The tail that does not fill a 30 ms window goes too.
    """
    wav = wav[: len(wav) - len(wav) % VAD_WINDOW]
    pcm = np.round(wav * INT16_MAX).astype(np.int16).tobytes()
    vad = _webrtc_vad()
    step = VAD_WINDOW * 2
    flags = np.array(
        [
            vad.is_speech(pcm[i : i + step], SAMPLE_RATE)
            for i in range(0, len(pcm), step)
        ],
        dtype=float,
    )
    mask = np.round(_moving_average(flags, VAD_AVERAGE_WIDTH)).astype(bool)
    mask = _dilate(mask, VAD_MAX_SILENCE // 2)
    voiced: np.ndarray = wav[np.repeat(mask, VAD_WINDOW)]
    return voiced


def _webrtc_vad() -> Any:
    """WebRTC VAD in its most aggressive mode (3), as Resemblyzer uses it."""
    try:
        import webrtcvad  # noqa: PLC0415 (optional: only the voice gate needs it)
    except ImportError as err:
        raise ImportError(
            "the speaker encoder trims silences with WebRTC VAD: "
            "pip install webrtcvad-wheels"
        ) from err
    return webrtcvad.Vad(3)


def _moving_average(values: np.ndarray, width: int) -> np.ndarray:
    """Resemblyzer's centred moving average, zero-padded at both ends."""
    padded = np.concatenate((np.zeros((width - 1) // 2), values, np.zeros(width // 2)))
    total = np.cumsum(padded, dtype=float)
    total[width:] = total[width:] - total[:-width]
    return total[width - 1 :] / width


def _dilate(mask: np.ndarray, reach: int) -> np.ndarray:
    """Binary dilation with a centred structure of ``2 * reach + 1`` ones.

    Equals ``scipy.ndimage.binary_dilation(mask, np.ones(2 * reach + 1))``.
    """
    padded = np.concatenate((np.zeros(reach, bool), mask, np.zeros(reach, bool)))
    out = np.zeros(len(mask), dtype=bool)
    for shift in range(2 * reach + 1):
        out |= padded[shift : shift + len(mask)]
    return out


def mel_spectrogram(wav: np.ndarray) -> np.ndarray:
    """Mel power spectrogram, frames by channels, float32 (not log-compressed).

    ``librosa.feature.melspectrogram(y=wav, sr=16000, n_fft=400, hop_length=160,
    n_mels=40)``: centred frames with zero padding (librosa >= 0.10), periodic Hann
    window, power 2, Slaney mel scale and area normalization.
    """
    padded = np.pad(wav, N_FFT // 2)
    n_frames = 1 + (len(padded) - N_FFT) // HOP
    frames = np.lib.stride_tricks.as_strided(
        padded,
        shape=(n_frames, N_FFT),
        strides=(padded.strides[0] * HOP, padded.strides[0]),
    )
    # librosa windows in float64 and stores the spectrum as complex64 for float32 input.
    spectrum = np.fft.rfft(frames * _hann_window(), axis=1).astype(np.complex64)
    power = np.abs(spectrum) ** 2
    mels: np.ndarray = (power @ mel_filterbank().T).astype(np.float32)
    return mels


@cache
def _hann_window() -> np.ndarray:
    """Periodic Hann window (``scipy.signal.get_window('hann', N_FFT)``)."""
    return 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)


@cache
def mel_filterbank() -> np.ndarray:
    """``librosa.filters.mel(sr=16000, n_fft=400, n_mels=40)``: (40, 201) float32.

    Triangles on the Slaney mel scale from 0 Hz to Nyquist, each scaled to unit area
    (``norm='slaney'``).
    """
    fft_freqs = np.fft.rfftfreq(N_FFT, d=1.0 / SAMPLE_RATE)
    mel_points = np.linspace(_hz_to_mel(0.0), _hz_to_mel(SAMPLE_RATE / 2), N_MELS + 2)
    mel_freqs = _mel_to_hz(mel_points)
    widths = np.diff(mel_freqs)
    ramps = np.subtract.outer(mel_freqs, fft_freqs)
    weights = np.zeros((N_MELS, len(fft_freqs)), dtype=np.float32)
    for i in range(N_MELS):
        lower = -ramps[i] / widths[i]
        upper = ramps[i + 2] / widths[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    weights *= (2.0 / (mel_freqs[2 : N_MELS + 2] - mel_freqs[:N_MELS]))[:, np.newaxis]
    return weights


# The Slaney (Auditory Toolbox) mel scale: linear below 1 kHz, logarithmic above.
_F_SP = 200.0 / 3
_MIN_LOG_HZ = 1000.0
_MIN_LOG_MEL = _MIN_LOG_HZ / _F_SP
_LOG_STEP = math.log(6.4) / 27.0


def _hz_to_mel(hz: float) -> float:
    if hz >= _MIN_LOG_HZ:
        return _MIN_LOG_MEL + math.log(hz / _MIN_LOG_HZ) / _LOG_STEP
    return hz / _F_SP


def _mel_to_hz(mels: np.ndarray) -> np.ndarray:
    linear = _F_SP * mels
    log = _MIN_LOG_HZ * np.exp(_LOG_STEP * (mels - _MIN_LOG_MEL))
    return np.where(mels >= _MIN_LOG_MEL, log, linear)
