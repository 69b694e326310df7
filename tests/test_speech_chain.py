"""Smoke test of the real-speech chain every other test stands on.

Piper says "Hey Jarvis. Turn on the kitchen lights.", openWakeWord finds the wake
word where it was said, and faster-whisper understands what followed it.
"""

from __future__ import annotations

import numpy as np
from pyopen_wakeword import Model, OpenWakeWord, OpenWakeWordFeatures

from devstack import speech

CHUNK_SAMPLES = 1280  # openWakeWord's 80 ms step


def first_detection_s(pcm: bytes, threshold: float = 0.5) -> float | None:
    """Seconds into ``pcm`` at which hey_jarvis first crosses ``threshold``."""
    features = OpenWakeWordFeatures.from_builtin()
    model = OpenWakeWord.from_builtin(Model.HEY_JARVIS)
    samples = np.frombuffer(pcm, dtype=np.int16)
    try:
        for start in range(0, len(samples), CHUNK_SAMPLES):
            chunk = samples[start : start + CHUNK_SAMPLES].tobytes()
            for embedding in features.process_streaming(chunk):
                if any(p > threshold for p in model.process_streaming(embedding)):
                    return (start + CHUNK_SAMPLES) / speech.RATE
    finally:
        model.close()
        features.close()
    return None


def test_speak_produces_16khz_speech() -> None:
    pcm = speech.speak("Hey Jarvis.")
    assert len(pcm) % 2 == 0
    assert 0.5 < speech.seconds(pcm) < 2.5
    assert np.abs(np.frombuffer(pcm, dtype=np.int16)).max() > 5000


def test_wake_word_then_command_transcribes() -> None:
    lead_in = 1.0
    wake_only = speech.speak("Hey Jarvis.")
    utterance = speech.pad(
        speech.speak("Hey Jarvis. Turn on the kitchen lights."), lead_in, 1.0
    )

    detected_at = first_detection_s(utterance)

    assert detected_at is not None, "openWakeWord did not hear 'hey jarvis'"
    # The wake word is detected while or just after it is said, not before it
    # starts and not during the command.
    assert lead_in + 0.3 < detected_at < lead_in + speech.seconds(wake_only) + 0.5
    after = utterance[int(detected_at * speech.RATE) * 2 :]
    text = speech.transcribe(after).lower()
    assert "kitchen" in text
    assert "light" in text


def test_noise_is_mixed_at_the_requested_snr() -> None:
    clean = speech.speak("Turn on the kitchen lights.")
    noisy = speech.mix_noise(clean, snr_db=10.0)
    a = np.frombuffer(clean, dtype=np.int16).astype(np.float64)
    b = np.frombuffer(noisy, dtype=np.int16).astype(np.float64)
    voiced = np.abs(a) > 327
    snr = 10 * np.log10(np.mean(a[voiced] ** 2) / np.mean((b - a) ** 2))
    assert 9.5 < snr < 10.5
    assert "kitchen" in speech.transcribe(noisy).lower()


def test_resample_keeps_duration_and_pitch() -> None:
    tone = (np.sin(2 * np.pi * 440 * np.arange(22050) / 22050) * 10000).astype(np.int16)
    out = speech.resample(tone, 22050, speech.RATE)
    assert len(out) == speech.RATE
    spectrum = np.abs(np.fft.rfft(out.astype(np.float64)))
    assert abs(int(np.argmax(spectrum)) - 440) <= 1  # 1 Hz bins over one second
