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
from voicestack_satellite.audio import resample
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


if __name__ == "__main__":
    main()
