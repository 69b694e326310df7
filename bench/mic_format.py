"""CPU the mic format conversion costs (``--mic-command-rate/-width/-channels``).

A wyoming-satellite user's recorder often prints 48 kHz, 32-bit, two channels;
the satellite converts it to 16 kHz mono 16-bit as it arrives (mic_format.py: a
channel, the low-pass filter, interpolation, 80 ms chunks). This measures that
conversion's process CPU time per second of audio, in reads of 80 ms as the mic
loop does, against the anchor the satellite pays anyway: its wake word detector
(``WakeDetector``, hey_jarvis) on the same audio at 16 kHz, in the same run.
Audio: 60 s of Piper speech with pauses, on the second of two channels (the
first is noise). 3 runs each, interleaved, median.

Goal: the conversion costs at most a tenth of the wake word detector.

Then the resampler alone (``StreamConverter``, soxr's ``ResampleStream``)
against the linear interpolation it replaced (kept here as ``Linear``, the
anchor), for the mic (48 kHz to 16 kHz) and the player (Piper's 22.05 kHz to
16 kHz): CPU per second of audio in 80 ms chunks, and the alias rejection: a
tone above the new Nyquist frequency (20 kHz and 10 kHz) against a 1 kHz one,
in dB, measured where it would fold (4 kHz and 6 kHz).

    .venv-satellite/bin/python -m bench.mic_format
"""

from __future__ import annotations

from pathlib import Path
import sys
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.common import (
    CHUNK_SAMPLES,
    RATE,
    SENTENCES,
    chunks,
    figure,
    header,
    median,
    report,
    talk,
    wake_detector,
)
from voicestack_satellite.audio import StreamConverter, resample
from voicestack_satellite.mic_format import MicConverter, MicFormat

AUDIO_S = 60.0
PAUSES_S = (0.6, 1.2, 0.4, 2.0, 0.8)
REPEATS = 3
GOAL_RATIO = 0.1
FORMATS = (
    MicFormat(48000, 4, 2, channel=1),
    MicFormat(44100, 2, 2),
    MicFormat(16000, 2, 2, channel=1),
)


def device_pcm(voice: np.ndarray, fmt: MicFormat) -> bytes:
    """``voice`` (16 kHz) as a recorder in ``fmt`` prints it, noise on channel 0."""
    at_rate = resample(voice, RATE, fmt.rate).astype(np.int64)
    scale = {1: 1 / 256, 2: 1, 4: 65536}[fmt.width]
    dtype = {1: np.uint8, 2: np.int16, 4: np.int32}[fmt.width]
    noise = np.random.default_rng(1).normal(0, 3000, len(at_rate))
    channels = [noise, at_rate][-fmt.channels :]
    frames = np.stack([c * scale for c in channels], axis=1)
    if fmt.width == 1:
        frames = frames + 128
    return frames.astype(dtype).tobytes()


def convert_cpu_s(pcm: bytes, fmt: MicFormat) -> float:
    """Process CPU seconds to convert ``pcm`` in 80 ms reads."""
    converter = MicConverter(fmt)
    step = fmt.read_bytes
    start = time.process_time()
    for at in range(0, len(pcm), step):
        converter.convert(pcm[at : at + step])
    return time.process_time() - start


def wake_cpu_s(voice: np.ndarray) -> float:
    """Process CPU seconds of the wake word detector on ``voice``."""
    detector = wake_detector(["hey_jarvis"])
    try:
        start = time.process_time()
        for index, chunk in enumerate(chunks(voice)):
            detector.process(chunk, (index + 1) * CHUNK_SAMPLES)
        return time.process_time() - start
    finally:
        detector.close()


def main() -> None:
    """Print the conversion's CPU per second of audio and the ratio to the anchor."""
    header("mic format conversion (--mic-command-rate/-width/-channels)")
    voice = talk(((text, 1.0) for text in SENTENCES), PAUSES_S, AUDIO_S)
    devices = {fmt: device_pcm(voice, fmt) for fmt in FORMATS}
    wake: list[float] = []
    converted: dict[MicFormat, list[float]] = {fmt: [] for fmt in FORMATS}
    for _ in range(REPEATS):
        wake.append(wake_cpu_s(voice))
        for fmt, pcm in devices.items():
            converted[fmt].append(convert_cpu_s(pcm, fmt))
    anchor = median(wake) * 1000 / AUDIO_S
    report(f"{AUDIO_S:.0f} s of audio, {REPEATS} runs, median; CPU ms per s of audio")
    for fmt, runs in converted.items():
        value = median(runs) * 1000 / AUDIO_S
        figure(
            f"{fmt.rate} Hz, {8 * fmt.width}-bit, {fmt.channels} channels"
            f"{'' if fmt.channel is None else f', channel {fmt.channel}'}",
            value,
            "ms/s",
            anchor=("wake word detector (hey_jarvis)", anchor),
            goal=(f"<= {GOAL_RATIO}x", value <= GOAL_RATIO * anchor),
            precision=2,
        )

    resampler_figures()


RESAMPLED = ((48000, 20000), (22050, 10000))  # (rate, a tone above 8 kHz)


class Linear:
    """The linear interpolation ``StreamConverter`` used before soxr (mono int16)."""

    def __init__(self, rate: int) -> None:
        """Interpolate from ``rate`` to 16 kHz, carrying position and last sample."""
        self._step = rate / RATE
        self._position = 0.0
        self._previous: np.ndarray | None = None

    def convert(self, samples: np.ndarray) -> np.ndarray:
        """One chunk, resampled."""
        signal = samples.astype(np.float64)
        if self._previous is not None:
            signal = np.concatenate([self._previous, signal])
        positions = np.arange(self._position, len(signal) - 1, self._step)
        out = np.interp(positions, np.arange(len(signal)), signal)
        following = positions[-1] + self._step if len(positions) else self._position
        self._previous = signal[-1:]
        self._position = following - (len(signal) - 1)
        return np.clip(np.rint(out), -32768, 32767).astype(np.int16)


def resampled(rate: int, samples: np.ndarray, linear: bool) -> tuple[np.ndarray, float]:
    """``samples`` at ``rate`` to 16 kHz in 80 ms chunks: output, CPU seconds."""
    step = round(0.08 * rate)
    chunked = [samples[at : at + step] for at in range(0, len(samples), step)]
    if linear:
        reference = Linear(rate)
        start = time.process_time()
        parts = [reference.convert(chunk) for chunk in chunked]
    else:
        converter = StreamConverter(rate, 2, 1, RATE)
        start = time.process_time()
        parts = [converter.convert(chunk.tobytes()) for chunk in chunked]
    return np.concatenate(parts), time.process_time() - start


def rejection_db(out: np.ndarray, alias_hz: float) -> float:
    """The level at ``alias_hz`` against the 1 kHz tone, in dB."""
    part = out[RATE : 3 * RATE].astype(np.float64)
    spectrum = np.abs(np.fft.rfft(part * np.hanning(len(part))))
    at = np.fft.rfftfreq(len(part), 1 / RATE)
    level = {hz: spectrum[np.argmin(abs(at - hz))] for hz in (1000, alias_hz)}
    return float(20 * np.log10(level[alias_hz] / level[1000]))


def resampler_figures() -> None:
    """Linear (anchor) against soxr: CPU per audio second and alias rejection."""
    report("resampler alone, 80 ms chunks: linear interpolation (anchor) against soxr")
    for rate, above_hz in RESAMPLED:
        t = np.arange(rate * round(AUDIO_S)) / rate
        tones = np.sin(2 * np.pi * 1000 * t) + np.sin(2 * np.pi * above_hz * t)
        samples = (0.3 * tones * 32767).astype(np.int16)
        cpu: dict[bool, list[float]] = {True: [], False: []}
        outputs: dict[bool, np.ndarray] = {}
        for _ in range(REPEATS):
            for linear in (True, False):
                outputs[linear], spent = resampled(rate, samples, linear)
                cpu[linear].append(spent)
        anchor = median(cpu[True]) * 1000 / AUDIO_S
        figure(
            f"{rate} Hz -> 16 kHz, soxr CPU",
            median(cpu[False]) * 1000 / AUDIO_S,
            "ms/s",
            anchor=("linear interpolation", anchor),
            precision=2,
        )
        alias_hz = abs(above_hz - RATE * round(above_hz / RATE))
        soxr_db = rejection_db(outputs[False], alias_hz)
        linear_db = rejection_db(outputs[True], alias_hz)
        # dB are a ratio already: the anchor's figure and the difference to it.
        figure(
            f"{rate} Hz -> 16 kHz, a {above_hz / 1000:g} kHz tone at {alias_hz / 1000:g}"
            " kHz against 1 kHz, soxr",
            soxr_db,
            "dB",
            detail=f" | anchor linear interpolation: {linear_db:.1f} dB"
            f" | difference {soxr_db - linear_db:+.1f} dB",
        )


if __name__ == "__main__":
    main()
