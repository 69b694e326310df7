"""Run voicestack-satellite as a real subprocess on loopback and talk Wyoming to it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
import subprocess
import time

from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from tests import servers

CLI = [servers.engines_python(), "-m", "voicestack_satellite"]


@dataclass(slots=True)
class RunningSatellite:
    """A satellite process and where it writes its sound."""

    port: int
    process: subprocess.Popen[bytes]
    snd_file: Path
    log: Path

    def connect(self) -> AsyncTcpClient:
        """A new (unconnected) Wyoming client for the satellite."""
        return AsyncTcpClient("127.0.0.1", self.port)

    def log_text(self) -> str:
        """What the satellite logged so far."""
        return self.log.read_text(errors="replace")


@asynccontextmanager
async def satellite(
    tmp_path: Path,
    *args: str,
    port: int | None = None,
    zeroconf: bool = False,
    stdin: bool = False,
    area: str | None = None,
    max_open_files: int | None = None,
) -> AsyncIterator[RunningSatellite]:
    """Start ``voicestack-satellite`` with ``args``; stop it afterwards.

    Without ``area`` the satellite names none: Home Assistant 2026.11 puts a
    device's area into its new entities' ids, and the tests address entities
    by id (``assist_satellite.test_satellite``).

    ``port`` restarts a satellite where a previous one listened; ``zeroconf``
    lets it announce itself (off by default so tests do not see each other);
    ``stdin`` gives it a pipe (``process.stdin``) for ``--mic-stdin``;
    ``max_open_files`` lowers its file limit (``ulimit -n``, through util-linux's
    ``prlimit``, which execs the satellite: the process id stays its own).
    """
    port = port or servers.free_port()
    snd_file = tmp_path / "played.wav"
    log = tmp_path / "satellite.log"
    with log.open("wb") as log_file:
        limit = (
            [] if max_open_files is None else ["prlimit", f"--nofile={max_open_files}"]
        )
        process = subprocess.Popen(
            [
                *limit,
                *CLI,
                "--name",
                "test-satellite",
                *(["--area", area] if area else []),
                "--uri",
                f"tcp://127.0.0.1:{port}",
                "--snd-file",
                str(snd_file),
                *([] if zeroconf else ["--no-zeroconf"]),
                "--debug",
                *args,
            ],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    try:
        await asyncio.to_thread(
            servers.wait_until_described, process, "127.0.0.1", port, 30.0
        )
        yield RunningSatellite(port, process, snd_file, log)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        process.terminate()
        try:
            await asyncio.to_thread(process.wait, 10)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.to_thread(process.wait)


async def read_until(
    client: AsyncTcpClient, event_type: str, timeout_s: float
) -> tuple[Event, list[Event]]:
    """Read events until one of ``event_type``; return it and everything before."""
    seen: list[Event] = []
    deadline = time.monotonic() + timeout_s
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            types = sorted({e.type for e in seen})
            raise TimeoutError(f"no {event_type} within {timeout_s} s; saw {types}")
        event = await asyncio.wait_for(client.read_event(), remaining)
        if event is None:
            raise ConnectionError(f"satellite closed before {event_type}")
        if event.type == event_type:
            return event, seen
        seen.append(event)


async def run_satellite(client: AsyncTcpClient, *, extensions: bool = True) -> None:
    """Take ownership as VoiceStack does: ``voicestack-hello``, then ``run-satellite``.

    With ``extensions=False`` the client behaves like a stock Wyoming peer.
    """
    if extensions:
        await client.write_event(Event("voicestack-hello", {"protocol": 1}))
    await client.write_event(Event("run-satellite"))
