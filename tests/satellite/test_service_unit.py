"""The shipped systemd unit: sandboxed, and the satellite still works inside it.

``systemd-analyze security --offline`` rates the unit file as systemd would (no
running systemd needed); scripts/setup installs Debian's ``systemd`` where the
tool is missing, so a machine without it fails here instead of skipping.

``MemoryDenyWriteExecute=yes`` is the one setting the engines could trip over (a
JIT, or native code that maps memory writable and executable). The kernel's own
W^X switch (``prctl(PR_SET_MDWE)``, Linux 6.3+) refuses the same mappings, so
the satellite runs under it here and must still hear the wake word and stream
the request.
"""

from __future__ import annotations

from pathlib import Path
import re
import shutil
import subprocess
import textwrap

import pytest

from devstack import servers, speech
import devstack.satellite
from devstack.satellite import read_until, run_satellite, satellite
from tests.satellite.owner import read_audio
from voicestack_satellite import echo_cancel

UNIT = servers.REPO / "satellite" / "systemd" / "voicestack-satellite.service"
MAX_EXPOSURE = 4.0  # "OK" in systemd-analyze's words goes up to 4.9
# Everything native the satellite can load: echo canceller, speex noise suppression.
PROCESSING = ("--echo-cancel", "aec", "--noise-suppression", "2")
PR_SET_MDWE = 65
PR_MDWE_REFUSE_EXEC_GAIN = 1
# Python code that puts its own process under W^X, and checks that it is.
UNDER_MDWE = textwrap.dedent(f"""\
    import ctypes, mmap
    if ctypes.CDLL(None, use_errno=True).prctl(
        {PR_SET_MDWE}, {PR_MDWE_REFUSE_EXEC_GAIN}, 0, 0, 0
    ) != 0:
        raise SystemExit("prctl(PR_SET_MDWE) failed: Linux 6.3+ needed")
    try:
        mmap.mmap(-1, 4096, prot=mmap.PROT_WRITE | mmap.PROT_EXEC)
    except PermissionError:
        pass
    else:
        raise SystemExit("a writable, executable mapping was allowed")
""")


def _directives() -> list[tuple[str, str]]:
    lines = UNIT.read_text(encoding="utf-8").splitlines()
    return [
        (key.strip(), value.strip())
        for key, sep, value in (line.partition("=") for line in lines)
        if sep and not key.lstrip().startswith("#")
    ]


def test_systemd_rates_the_unit_4_0_or_less() -> None:
    tool = shutil.which("systemd-analyze")
    assert tool, "systemd-analyze is missing: scripts/setup installs Debian's systemd"
    result = subprocess.run(
        [tool, "security", "--offline=yes", "--no-pager", str(UNIT)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    found = re.search(r"Overall exposure level for \S+: (\d+\.\d+)", result.stdout)

    assert found, result.stdout + result.stderr
    assert float(found.group(1)) <= MAX_EXPOSURE, result.stdout


def test_the_sandbox_leaves_the_sound_cards_and_the_network_open() -> None:
    directives = _directives()

    assert ("DeviceAllow", "char-alsa rw") in directives
    assert ("SupplementaryGroups", "audio") in directives
    assert ("PrivateDevices", "yes") not in directives  # it would hide /dev/snd
    families = dict(directives)["RestrictAddressFamilies"].split()
    assert {"AF_INET", "AF_INET6", "AF_UNIX", "AF_NETLINK"} <= set(families)
    # ProtectHome= hides /home: the virtualenv must live elsewhere.
    (exec_start,) = [value for key, value in directives if key == "ExecStart"]
    assert exec_start.startswith("/opt/voicestack/bin/voicestack-satellite ")


async def test_the_satellite_hears_its_wake_word_without_writable_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert ("MemoryDenyWriteExecute", "yes") in _directives()
    under_mdwe = tmp_path / "under_mdwe.py"
    under_mdwe.write_text(
        UNDER_MDWE
        + "import runpy\nrunpy.run_module('voicestack_satellite', run_name='__main__')\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(
        devstack.satellite, "CLI", [servers.engines_python(), str(under_mdwe)]
    )
    spoken = speech.pad(speech.speak("Hey Jarvis."), 0.5, 0.7) + speech.speak(
        "Turn on the kitchen lights."
    )
    wav = speech.write_wav(tmp_path / "mic.wav", speech.pad(spoken, 0.0, 2.5))
    async with (
        satellite(tmp_path, "--mic-file", str(wav), *PROCESSING) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        detection, _ = await read_until(client, "detection", 10)
        await read_until(client, "audio-start", 2)
        audio = await read_audio(client, 4.0)

    assert detection.data["name"] == "hey_jarvis"
    assert "kitchen" in speech.transcribe(audio).lower()


@pytest.mark.parametrize("backend", sorted(echo_cancel.BACKENDS))
def test_every_echo_canceller_runs_without_writable_code(backend: str) -> None:
    # The satellite above runs the first one installed; a Pi may run another.
    script = UNDER_MDWE + textwrap.dedent(f"""\
        import numpy as np
        from voicestack_satellite import echo_cancel
        _, cancel = echo_cancel.open_backend({backend!r})
        rng = np.random.default_rng(0)
        for _ in range(200):  # 2 s of 10 ms frames
            mic, played = rng.integers(-3000, 3000, (2, echo_cancel.FRAME), np.int16)
            assert len(cancel(mic.tobytes(), played.tobytes())) == 2 * echo_cancel.FRAME
        print("cancelled")
    """)
    result = subprocess.run(
        [servers.engines_python(), "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "cancelled"
