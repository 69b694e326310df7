"""The arm64 check's inside: install into the emulated Pi, start it, talk to it.

``scripts/arm64-check`` builds the root and calls this (``python -m
scripts.arm64_check ROOT``). In a private mount namespace, a throwaway overlay
on ROOT gets ``/proc``, ``/sys`` (onnxruntime reads it) and ``/dev``, copies of
``satellite/`` and ``protocol/`` side by side (what a clone has; install.sh
installs voicestack-protocol from ``protocol/``, which is not on PyPI before a
release), the host's name servers and CA bundle (a proxy's CA, as scripts/setup
gives its root);
``install.sh --service`` runs in it, timed; then the installed satellite runs
there with ``--mic-stdin``. From here, on loopback (the chroot shares the
network): "Hey Jarvis" goes into its mic and must appear in its log, and
``describe`` must be answered with its ``info``. Its startup line must say
that its echo canceller and voice gate loaded. Exit 1 on any failure.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
import shlex
import signal
import subprocess
import sys
import tempfile
import time

from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from devstack import speech
from devstack.servers import LOOPBACK, free_port

REPO = Path(__file__).resolve().parents[1]
INSTALL_GOAL_S = 300.0  # issue 29: install.sh under emulation
WAKE_TIMEOUT_S = 600.0  # the emulated start-up takes minutes, then the wake word
LOADED = "barge-in echo handling: aec (pywebrtc); voice gate: installed"
NAMESPACE = ("unshare", "--mount", "--propagation", "private", "sh", "-c")


def _inside(root: Path, work: Path, port: int) -> str:
    """The shell script run in the private mount namespace."""
    merged = work / "merged"
    satellite = [
        "/opt/voicestack/bin/voicestack-satellite",
        *("--name", "arm64", "--uri", f"tcp://{LOOPBACK}:{port}"),
        *("--mic-stdin", "--snd-file", "/root/played.wav", "--no-zeroconf"),
    ]
    return f"""set -eu
mkdir -p {work}/upper {work}/work {merged}
mount -t overlay overlay -o lowerdir={root},upperdir={work}/upper,workdir={work}/work {merged}
mount -t proc proc {merged}/proc
mount --rbind /sys {merged}/sys
mount --rbind /dev {merged}/dev
cp -L /etc/resolv.conf {merged}/etc/resolv.conf
cp -L /etc/ssl/certs/ca-certificates.crt {merged}/etc/ssl/certs/ca-certificates.crt
cp -r {REPO / "satellite"} {merged}/root/satellite
cp -r {REPO / "protocol"} {merged}/root/protocol
# a checkout's build output
rm -rf {merged}/root/satellite/*.egg-info {merged}/root/satellite/build \
  {merged}/root/protocol/*.egg-info {merged}/root/protocol/build
started=$(date +%s)
chroot {merged} env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
  PIP_CERT=/etc/ssl/certs/ca-certificates.crt sh /root/satellite/install.sh --service
echo "arm64-check: install.sh took $(($(date +%s) - started)) s"
exec chroot {merged} {shlex.join(satellite)}
"""


def _wait_for(
    text: str, log: Path, process: subprocess.Popen[bytes], timeout_s: float
) -> None:
    """Until ``text`` is in the log; raises if the process ends or time runs out."""
    deadline = time.monotonic() + timeout_s
    while text not in log.read_text(errors="replace"):
        if process.poll() is not None:
            raise RuntimeError(f"it exited with {process.returncode} before {text!r}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {text!r} within {timeout_s:.0f} s")
        time.sleep(0.5)


async def _describe(port: int) -> str:
    """``describe`` answered with ``info``: the satellite's name in it."""
    async with AsyncTcpClient(LOOPBACK, port) as client:
        await client.write_event(Event("describe"))
        while True:
            event = await asyncio.wait_for(client.read_event(), 30)
            if event is None:
                raise ConnectionError("the satellite closed before info")
            if event.type == "info":
                return str(event.data["satellite"]["name"])


def _check(process: subprocess.Popen[bytes], log: Path, port: int) -> tuple[float, str]:
    """Install, wake word, describe, startup line: (install seconds, name)."""
    started = time.monotonic()
    _wait_for("install.sh took", log, process, 1800)
    installed_s = time.monotonic() - started
    assert process.stdin is not None
    process.stdin.write(speech.pad(speech.speak("Hey Jarvis."), 2.0, 1.0))
    process.stdin.flush()  # it reads its mic once it runs
    _wait_for("Wake word hey_jarvis", log, process, WAKE_TIMEOUT_S)
    name = asyncio.run(_describe(port))
    if LOADED not in log.read_text(errors="replace"):
        raise RuntimeError(f"its startup line lacks {LOADED!r}")
    return installed_s, name


def main() -> None:
    """Run the check on the root named on the command line."""
    root = Path(sys.argv[1]).resolve()
    port = free_port()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(dir=REPO / ".cache") as tmp:
        work, log = Path(tmp), Path(tmp) / "arm64.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [*NAMESPACE, _inside(root, work, port)],
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # stopped as a group, install or satellite
            )
        try:
            installed_s, name = _check(process, log, port)
        except (RuntimeError, TimeoutError, OSError) as err:
            print(log.read_text(errors="replace")[-4000:])
            print(f"scripts/arm64-check: FAILED: {err}")
            sys.exit(1)
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(30)
        text = log.read_text(errors="replace")
        print(text[text.index("install.sh:") :][:3000])
    verdict = "within" if installed_s <= INSTALL_GOAL_S else "OVER"
    print(
        f"scripts/arm64-check: passed: install.sh --service {installed_s:.0f} s"
        f" emulated ({verdict} the {INSTALL_GOAL_S:.0f} s goal); satellite {name!r}"
        f" heard hey_jarvis and answered describe; {LOADED}; in all"
        f" {time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
