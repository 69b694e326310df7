"""Noise suppression and auto gain on the satellite's mic, and the echo options.

``--auto-gain`` and ``--noise-suppression`` are speex with Home Assistant's own
scales: auto gain lifts quiet speech, noise suppression takes noise down, off
leaves the mic untouched; values out of range, or an echo mode that is none,
are refused at startup with a clear line, and a real satellite started with
them says how it handles echo. (Echo handling at work: test_barge_in.py.)
"""

from __future__ import annotations

import importlib.metadata
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest

from devstack import speech
from devstack.satellite import satellite
from voicestack_satellite.enhance import EnhanceError, MicEnhancer
from voicestack_satellite.settings import SettingsError, load

BASE = ["--name", "k", "--mic-stdin", "--snd-file", "played.wav"]


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))


def through(enhancer: MicEnhancer, samples: np.ndarray) -> np.ndarray:
    """``samples`` in 80 ms chunks, as the mic delivers them."""
    return np.concatenate(
        [enhancer.process(samples[i : i + 1280]) for i in range(0, len(samples), 1280)]
    )


def auto_gain_lifts_quiet_speech() -> None:
    """What --auto-gain does with pyspeex-noise 1.x (test_speex_1x.py runs it there)."""
    voice = np.frombuffer(
        speech.pad(speech.speak("Turn on the fan."), 0.5, 0.5), np.int16
    )
    quiet = (voice * 0.1).astype(np.int16)

    lifted = through(MicEnhancer(auto_gain=31, noise_suppression=0), quiet)

    assert len(lifted) == len(quiet)
    assert rms(lifted) > 1.4 * rms(quiet)  # speex adapts its gain as it goes


def test_auto_gain_lifts_quiet_speech_or_is_refused_at_startup() -> None:
    """1.x lifts quiet speech; 2.0.1's gain silences the mic, so it is refused."""
    if importlib.metadata.version("pyspeex-noise").startswith("1."):
        auto_gain_lifts_quiet_speech()
        return
    with pytest.raises(EnhanceError, match=r"automatic gain of pyspeex-noise 2\.0\.1"):
        MicEnhancer(auto_gain=31, noise_suppression=0)
    MicEnhancer(auto_gain=0, noise_suppression=4)  # noise suppression still works


def test_noise_suppression_takes_noise_down() -> None:
    noise = np.random.default_rng(1).normal(0, 800, 16000 * 2).astype(np.int16)

    suppressed = through(MicEnhancer(auto_gain=0, noise_suppression=4), noise)

    assert rms(suppressed[8000:]) < rms(noise[8000:]) / 4


def test_the_installed_pyspeex_noise_is_driven_through_its_own_api() -> None:
    """2.x here (.venv-satellite); 1.x in tests/integration/test_speex_1x.py.

    2.x is the [barge-in] extra's pin, 1.x Home Assistant's (its venvs).
    """
    major = importlib.metadata.version("pyspeex-noise").split(".")[0]
    enhancer = MicEnhancer(auto_gain=0, noise_suppression=2)

    expected = {"1": "Process10ms", "2": "process_10ms"}[major]
    assert enhancer.api == expected
    assert len(enhancer.process(np.zeros(1280, np.int16))) == 1280


def test_a_pyspeex_noise_it_cannot_use_stops_the_satellite_at_startup(
    tmp_path: Path,
) -> None:
    """Not an error per chunk and an exit 10 s later (a restart loop under systemd).

    A stand-in for a future pyspeex-noise whose API changed: no real version
    is unusable today.
    """
    package = tmp_path / "pyspeex_noise"
    package.mkdir()
    (package / "__init__.py").write_text(
        "class AudioProcessor:\n"
        "    def __init__(self, auto_gain, noise_suppression):\n"
        "        pass\n"
        "    def process(self, audio):\n"
        "        return audio\n"
    )
    info = tmp_path / "pyspeex_noise-3.0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pyspeex-noise\nVersion: 3.0.0\n"
    )

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "voicestack_satellite",
            *BASE,
            "--noise-suppression",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )

    assert result.returncode == 2
    assert (
        "pyspeex-noise 3.0.0 is not one this satellite can use: "
        'pip install "pyspeex-noise>=1.0.2,<3"'
    ) in result.stderr
    assert "Traceback" not in result.stderr


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
        tmp_path,
        "--mic-file",
        str(wav),
        "--echo-cancel",
        "gate",
        "--noise-suppression",
        "2",
    ) as sat:
        log = sat.log_text()

    assert "barge-in echo handling: gate; voice gate: installed" in log
