"""voicestack-satellite as a real subprocess on loopback, and Wyoming talk to it.

Two ways to run it: ``satellite()`` starts it with the test's arguments and logs to
a file (tests, the satellite benchmarks); ``Satellite.running()`` starts it as the
demo home's kitchen satellite hearing a WAV, with its state changes arriving live
(``scripts/demo``, the Home Assistant benchmarks).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
import json
from pathlib import Path
import subprocess
import threading
import time
from typing import Any

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.satellite import RunSatellite

from devstack import servers
from devstack.errors import StackError
from devstack.room import Room
from devstack.servers import LOOPBACK
import voicestack_protocol as protocol

CLI = [servers.engines_python(), "-m", "voicestack_satellite"]
SATELLITE_NAME = "Kitchen satellite"
SATELLITE_AREA = "Kitchen"
SATELLITE_START_TIMEOUT_S = 30.0


@dataclass(slots=True)
class RunningSatellite:
    """A satellite process and where it writes its sound."""

    port: int
    process: subprocess.Popen[bytes]
    snd_file: Path
    log: Path

    def connect(self) -> AsyncTcpClient:
        """A new (unconnected) Wyoming client for the satellite."""
        return AsyncTcpClient(LOOPBACK, self.port)

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
    room: Room | None = None,
) -> AsyncIterator[RunningSatellite]:
    """Start ``voicestack-satellite`` with ``args``; stop it afterwards.

    Without ``area`` the satellite names none: Home Assistant 2026.11 puts a
    device's area into its new entities' ids, and the tests address entities
    by id (``assist_satellite.test_satellite``).

    ``port`` restarts a satellite where a previous one listened; ``zeroconf``
    lets it announce itself (off by default so tests do not see each other);
    ``stdin`` gives it a pipe (``process.stdin``) for ``--mic-stdin``;
    ``max_open_files`` lowers its file limit (``ulimit -n``, through util-linux's
    ``prlimit``, which execs the satellite: the process id stays its own);
    ``room`` puts it in a simulated room (``devstack.room``): the room is its
    speaker (at 16 kHz) and feeds its mic, instead of ``--snd-file``.
    """
    port = port or servers.free_port()
    snd_file = tmp_path / "played.wav"
    log = tmp_path / "satellite.log"
    with log.open("wb") as log_file:
        limit = (
            [] if max_open_files is None else ["prlimit", f"--nofile={max_open_files}"]
        )
        process = subprocess.Popen(  # noqa: ASYNC220 - starting it does not wait
            [
                *limit,
                *CLI,
                "--name",
                "test-satellite",
                *(["--area", area] if area else []),
                "--uri",
                f"tcp://{LOOPBACK}:{port}",
                *(
                    ["--snd-file", str(snd_file)]
                    if room is None
                    else [
                        "--snd-command",
                        room.speaker_command,
                        "--snd-rate",
                        "16000",
                        "--snd-latency",
                        "0",
                        "--mic-stdin",
                    ]
                ),
                *([] if zeroconf else ["--no-zeroconf"]),
                "--debug",
                *args,
            ],
            stdin=subprocess.PIPE if stdin or room else subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    try:
        await asyncio.to_thread(
            servers.wait_until_described,
            process,
            LOOPBACK,
            port,
            SATELLITE_START_TIMEOUT_S,
        )
        if room is not None:
            assert process.stdin is not None
            room.attach(process.stdin)
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
        hello = Event(protocol.HELLO, {"protocol": protocol.PROTOCOL_VERSION})
        await client.write_event(hello)
    await client.write_event(RunSatellite().event())


async def play_answer(client: AsyncTcpClient, pcm: bytes, stream: str) -> None:
    """Send 16 kHz ``pcm`` as one voice response (``stream``), marked for barge-in."""
    start = AudioStart(rate=16000, width=2, channels=1).event()
    start.data.update({protocol.STREAM: stream, protocol.BARGE_IN_FIELD: True})
    await client.write_event(start)
    await client.write_event(
        AudioChunk(rate=16000, width=2, channels=1, audio=pcm).event()
    )
    await client.write_event(AudioStop().event())


# -- the demo home's satellite, its states live ----------------------------------------


@dataclass(frozen=True, slots=True)
class SatelliteState:
    """One line of the satellite's ``--event-command`` output."""

    state: str
    at: float  # time.time() in the satellite
    details: dict[str, Any]


class Satellite:
    """voicestack-satellite as a subprocess; its state changes arrive live.

    ``--event-command cat`` makes the satellite's hook process copy each state
    line to the satellite's stdout, which is a pipe to us; logs go to a file.
    """

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        port: int,
        workdir: Path,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        """Use ``Satellite.running``."""
        self.process = process
        self.port = port
        self.workdir = workdir
        self.states: list[SatelliteState] = []
        self._loop = loop
        self._changed = asyncio.Event()
        self._reader = threading.Thread(
            target=self._read_states, name="satellite states", daemon=True
        )
        self._reader.start()

    @property
    def uri(self) -> str:
        """Where the satellite listens."""
        return f"tcp://{LOOPBACK}:{self.port}"

    @property
    def log_file(self) -> Path:
        """The satellite's log (debug level)."""
        return self.workdir / "satellite.log"

    @classmethod
    @asynccontextmanager
    async def running(
        cls,
        workdir: Path,
        mic: Path,
        *,
        wake_word: str = "hey_jarvis",
        options: Sequence[str] = (),
    ) -> AsyncIterator[Satellite]:
        """Start the satellite on a free port; stop it (and its hook) afterwards.

        ``options``: more command line options (``--no-speech-timeout 0``).
        """
        process, port = await asyncio.to_thread(
            _spawn, workdir, mic, wake_word, options
        )
        satellite = cls(process, port, workdir, asyncio.get_running_loop())
        try:
            await satellite._wait_until_serving()
            yield satellite
        finally:
            await satellite._stop()

    async def _wait_until_serving(self) -> None:
        try:
            await asyncio.to_thread(
                servers.wait_until_described,
                self.process,
                LOOPBACK,
                self.port,
                SATELLITE_START_TIMEOUT_S,
            )
        except (OSError, RuntimeError, ValueError) as err:
            raise StackError(
                f"voicestack-satellite did not start ({err}); see {self.log_file}"
            ) from err

    async def _stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                await asyncio.to_thread(self.process.wait, 10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                await asyncio.to_thread(self.process.wait)
        await asyncio.to_thread(self._reader.join, 5)

    def _read_states(self) -> None:
        """Reader thread: parse state lines until the hook's pipe closes."""
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                try:
                    data = json.loads(line)
                    state = SatelliteState(
                        str(data.pop("state")), float(data.pop("time")), data
                    )
                except (ValueError, KeyError, TypeError):
                    continue
                self._loop.call_soon_threadsafe(self._add, state)

    def _add(self, state: SatelliteState) -> None:
        self.states.append(state)
        self._changed.set()

    async def wait_for_state(
        self, state: str, *, after: float, timeout_s: float, what: str
    ) -> SatelliteState:
        """The first ``state`` reported at or after ``after``.

        Fails at once when the satellite reports ``error`` (Home Assistant sent it
        an error, e.g. nothing recognised) or exits.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            for seen in self.states:
                if seen.at < after:
                    continue
                if seen.state == state:
                    return seen
                if seen.state == "error":
                    raise StackError(
                        f"waiting for {what}, the satellite reported an error "
                        f"{seen.details or ''}; see {self.log_file}"
                    )
            if self.process.poll() is not None:
                raise StackError(
                    f"waiting for {what}, the satellite exited "
                    f"({self.process.returncode}); see {self.log_file}"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StackError(
                    f"no {what} within {timeout_s:.0f} s; see {self.log_file}"
                )
            self._changed.clear()
            try:
                async with asyncio.timeout(min(remaining, 1.0)):
                    await self._changed.wait()
            except TimeoutError:
                pass


def _spawn(
    workdir: Path, mic: Path, wake_word: str, options: Sequence[str] = ()
) -> tuple[subprocess.Popen[bytes], int]:
    """Start voicestack-satellite as shipped but for its sound: files, and states on stdout."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = servers.free_port()
    args = [
        *CLI,
        "--name",
        SATELLITE_NAME,
        "--area",
        SATELLITE_AREA,
        "--uri",
        f"tcp://{LOOPBACK}:{port}",
        "--mic-file",
        str(mic),
        "--snd-file",
        str(workdir / "played.wav"),
        "--wake-word",
        wake_word,
        "--event-command",
        "cat",
        "--no-zeroconf",
        "--debug",
        *options,
    ]
    with (workdir / "satellite.log").open("wb") as log:
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log)
    return process, port
