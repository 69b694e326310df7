"""Noise suppression and auto gain on the satellite's mic, and the echo options.

``--auto-gain`` and ``--noise-suppression`` are speex with Home Assistant's own
scales: auto gain lifts quiet speech, noise suppression takes noise down, off
leaves the mic untouched; values out of range, or an echo mode that is none,
are refused at startup with a clear line, and a real satellite started with
them says how it handles echo. (Echo handling at work: test_barge_in.py.)
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from devstack import speech
from devstack.satellite import satellite
from voicestack_satellite.enhance import MicEnhancer
from voicestack_satellite.settings import SettingsError, load

BASE = ["--name", "k", "--mic-stdin", "--snd-file", "played.wav"]


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))


def through(enhancer: MicEnhancer, samples: np.ndarray) -> np.ndarray:
    """``samples`` in 80 ms chunks, as the mic delivers them."""
    return np.concatenate(
        [enhancer.process(samples[i : i + 1280]) for i in range(0, len(samples), 1280)]
    )


def test_auto_gain_lifts_quiet_speech() -> None:
    voice = np.frombuffer(
        speech.pad(speech.speak("Turn on the fan."), 0.5, 0.5), np.int16
    )
    quiet = (voice * 0.1).astype(np.int16)

    lifted = through(MicEnhancer(auto_gain=31, noise_suppression=0), quiet)

    assert len(lifted) == len(quiet)
    assert rms(lifted) > 1.4 * rms(quiet)  # speex adapts its gain as it goes


def test_noise_suppression_takes_noise_down() -> None:
    noise = np.random.default_rng(1).normal(0, 800, 16000 * 2).astype(np.int16)

    suppressed = through(MicEnhancer(auto_gain=0, noise_suppression=4), noise)

    assert rms(suppressed[8000:]) < rms(noise[8000:]) / 4


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--noise-suppression", "5"], "--noise-suppression must be between 0 and 4"),
        (["--auto-gain", "40"], r"--auto-gain must be between 0 and 31 \(dBFS\)"),
    ],
)
def test_out_of_range_values_are_refused(args: list[str], message: str) -> None:
    with pytest.raises(SettingsError, match=message):
        load([*BASE, *args])


def test_an_unknown_echo_mode_is_refused(tmp_path: Path) -> None:
    config = tmp_path / "satellite.toml"
    config.write_text('echo-cancel = "loud"\n')
    with pytest.raises(
        SettingsError, match="--echo-cancel must be aec, gate or external"
    ):
        load([*BASE, "--config", str(config)])
    assert load([*BASE, "--echo-cancel", "external"]).echo_cancel == "external"


async def test_a_satellite_says_how_it_handles_echo(tmp_path: Path) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with satellite(
        tmp_path, "--mic-file", str(wav), "--echo-cancel", "gate", "--auto-gain", "10"
    ) as sat:
        log = sat.log_text()

    assert "barge-in echo handling: gate; speaker gate: installed" in log
