"""satellite/install.sh refuses, with the reason, a Pi the engines cannot run on.

The machine type and glibc version are read from the system; the variables
``VOICESTACK_MACHINE`` and ``VOICESTACK_GLIBC`` stand in for a Pi's here, and
``PYTHON`` names this interpreter (the Debian root has no ``python3``).
"""

from __future__ import annotations

import os
from pathlib import Path
import subprocess
import sys

import pytest

INSTALL = Path(__file__).resolve().parents[2] / "satellite" / "install.sh"


def check(**environment: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(INSTALL), "--check"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env={**os.environ, "PYTHON": sys.executable, **environment},
    )


@pytest.mark.parametrize(
    ("machine", "glibc"),
    [("aarch64", "2.36"), ("x86_64", "2.35"), ("aarch64", "2.41")],
)
def test_a_64_bit_system_with_a_recent_glibc_is_supported(
    machine: str, glibc: str
) -> None:
    result = check(VOICESTACK_MACHINE=machine, VOICESTACK_GLIBC=glibc)

    assert result.returncode == 0, result.stderr
    assert f"{machine}, glibc {glibc}" in result.stdout
    assert "supported" in result.stdout


@pytest.mark.parametrize(
    ("machine", "glibc", "reason"),
    [
        ("armv7l", "2.36", "32-bit system (armv7l)"),
        ("armv6l", "2.36", "Install the 64-bit Raspberry Pi OS"),
        ("aarch64", "2.31", "glibc 2.31 is too old"),
        ("aarch64", "", "no glibc found"),
        ("riscv64", "2.36", "unknown machine type 'riscv64'"),
    ],
)
def test_what_the_engines_cannot_run_on_is_refused_with_the_reason(
    machine: str, glibc: str, reason: str
) -> None:
    result = check(VOICESTACK_MACHINE=machine, VOICESTACK_GLIBC=glibc)

    assert result.returncode == 1
    assert reason in result.stderr
    assert "Traceback" not in result.stderr


def test_this_machine_passes_the_check() -> None:
    result = check()

    assert result.returncode == 0, result.stderr


def run(*args: str, path: Path | None = None) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHON": sys.executable}
    if path is not None:
        environment["PATH"] = f"{path}:{environment['PATH']}"
    return subprocess.run(
        [str(INSTALL), *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        env=environment,
    )


def lister(folder: Path, name: str, cards: str) -> None:
    """A stand-in for arecord/aplay -l: this machine has no sound cards to list."""
    script = folder / name
    script.write_text(f"#!/bin/sh\ncat <<'EOF'\n{cards}EOF\n")
    script.chmod(0o755)


def test_the_usb_mic_and_speaker_are_proposed(tmp_path: Path) -> None:
    # What a Pi 4 with a USB speakerphone lists (the headphone jack and HDMI first).
    lister(
        tmp_path,
        "arecord",
        "**** List of CAPTURE Hardware Devices ****\n"
        "card 2: S3 [Jabra SPEAK 410 USB], device 0: USB Audio [USB Audio]\n"
        "  Subdevices: 1/1\n",
    )
    lister(
        tmp_path,
        "aplay",
        "**** List of PLAYBACK Hardware Devices ****\n"
        "card 0: Headphones [bcm2835 Headphones], device 0: bcm2835 Headphones"
        " [bcm2835 Headphones]\n"
        "card 1: vc4hdmi [vc4-hdmi], device 0: MAI PCM i2s-hifi-0 [MAI PCM i2s-hifi-0]\n"
        "card 2: S3 [Jabra SPEAK 410 USB], device 0: USB Audio [USB Audio]\n",
    )

    result = run("--devices", path=tmp_path)

    assert result.returncode == 0, result.stderr
    assert (
        "--mic-command 'arecord -D plughw:CARD=S3,DEV=0 -r 16000 -c 1 -f S16_LE -t raw'"
    ) in result.stdout
    assert "--snd-command 'aplay -D plughw:CARD=S3,DEV=0 -r 22050" in result.stdout


def test_without_a_usb_card_the_default_is_proposed_and_said(tmp_path: Path) -> None:
    lister(tmp_path, "arecord", "")
    lister(
        tmp_path,
        "aplay",
        "card 0: Headphones [bcm2835 Headphones], device 0: bcm2835 Headphones"
        " [bcm2835 Headphones]\n",
    )

    result = run("--devices", path=tmp_path)

    assert "no USB microphone in 'arecord -l'" in result.stdout
    assert "no USB speaker in 'aplay -l'" in result.stdout
    assert "--mic-command 'arecord -D default -r 16000" in result.stdout


def test_an_unknown_option_is_refused() -> None:
    result = run("--minimla")

    assert result.returncode == 1
    assert "unknown option --minimla" in result.stderr


def test_the_install_ends_saying_what_the_satellite_will_do() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "voicestack_satellite.installed", "/opt/voicestack"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    lines = result.stdout.splitlines()
    assert lines[0].startswith("voicestack-satellite ")
    assert "run /opt/voicestack/bin/voicestack-satellite --help" in lines[0]
    assert any(
        line.startswith("- barge-in: echo canceller ") and "(--echo-cancel aec)" in line
        for line in lines
    )
    assert "- voice gate (only enrolled voices pause an answer): available" in lines
    assert any(
        line.startswith("- --noise-suppression: pyspeex-noise ") for line in lines
    )
