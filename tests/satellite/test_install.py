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
