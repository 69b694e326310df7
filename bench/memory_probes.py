"""Memory under hostile peers: the probes of issue 12 (items 5 and 8) against their bounds.

Each probe sends what once made a process grow without bound, measures the
resident memory of the process that reads it before, at its peak and after,
and compares the growth with the bound the code's own limits allow. Peaks are
``VmHWM`` from ``/proc/PID/status`` after resetting it (writing ``5`` to
``/proc/PID/clear_refs``), so nothing between two samples is missed.

Satellite: a real ``voicestack-satellite`` subprocess
(``devstack/satellite.py``, on ``devstack.servers.engines_python()``):

1. the owner sends 200 MiB of playback audio (22050 Hz, the default
   ``--snd-rate``) as fast as the satellite takes it, and ``voicestack-flush``
   once it has been held back for 2 s. Bound: the player's buffer
   (``MAX_AHEAD_S`` + ``HISTORY_S`` at the output rate) plus the owner's
   connection (below). Also: 5 s after the flush the growth is at most 4 MiB.
2. 50 connections each announce a 4 MiB payload and send all but its last byte;
3. 1,100 connections that send nothing, to a satellite whose file limit is 1024
   (``prlimit --nofile=1024``); then a new client's ``describe`` must be answered
   within Home Assistant's ``DESCRIBE_TIMEOUT_S`` (5 s).

   Bound for 2 and 3, all the network can make the satellite hold: the owner's
   unfinished event (2 x ``--max-payload``) and, per connection (at most
   ``--max-connections``), asyncio's read buffer (it stops reading above twice
   the stream's limit, ``MAX_HEADER_BYTES``, and one read adds up to asyncio's
   read size), 2 x ``NON_OWNER_MAX_PAYLOAD`` and ``MAX_QUEUED_BYTES`` unsent.

Home Assistant: a real Home Assistant in this process (``devstack.home``'s
home, with real whisper and Piper servers for its Assist pipeline), so the
memory measured is this process's. It also runs the hostile peers; they hold
at most one 1 MiB block and one encoded chunk. Freed heap is given back to the
system (``malloc_trim``) before each probe, so the growth is not hidden in it.

4. a VoiceStack entry (added through the config flow) for a peer that behaves
   until the link runs; then the peer cuts the connection and answers every
   ``run-satellite`` of the link's handshake with an ``audio-chunk`` header
   announcing a 2e9-byte payload, and zeros after it, for 5 s (the link
   reconnects meanwhile). Bound: the link's reader, asyncio's read buffer plus
   2 x ``link.MAX_PAYLOAD_BYTES``. Then the config flow's ``describe`` against a
   peer that answers it the same way. Bound: the same with
   2 x ``wyoming_info.DESCRIBE_MAX_PAYLOAD_BYTES``.
5. a VoiceStack entry for a stock satellite that, after one 1 MiB request (the
   pipeline's one-time set-up is not what is measured), starts a request and
   streams 256 MiB of audio into it in 64 KiB chunks, as fast as Home Assistant
   reads them, without ``audio-stop``: through VoiceStack's link and voice loop
   into the pipeline. Bound: the link's reader plus the voice loop's queue
   (``MAX_QUEUED_AUDIO_BYTES``).

Every bound is printed as the sum of those limits plus ``SLACK_MIB`` (10 MiB)
for what a process allocates anyway while it serves the probe: the
interpreter and its allocator, the connections' objects, for Home Assistant
the reconnects and the request's pipeline run.

Before the fixes (issue 12): 1. 55 -> 440 MB, still 440 MB after the flush;
2. 54 -> 254 MB; 3. ``accept()`` failed and ``describe`` timed out; 4. 110 ->
1,135 MB in 5 s; 5. 189 -> 504 MB.

    scripts/ha-run .venv/bin/python -m bench.memory_probes [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
import io
import json
import os
from pathlib import Path
import resource
import socket
import sys
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homeassistant.config_entries import SOURCE_USER, ConfigEntry
from homeassistant.const import CONF_HOST, CONF_PORT
from wyoming.audio import AudioChunk, AudioStart
from wyoming.event import Event, async_read_event, write_event
from wyoming.info import Describe
from wyoming.satellite import RunSatellite

from bench.common import DEFAULTS, figure, header, report, verdict
from custom_components.voicestack.const import DESCRIBE_TIMEOUT_S, DOMAIN
from custom_components.voicestack.core.link import MAX_PAYLOAD_BYTES
from custom_components.voicestack.core.request_audio import MAX_QUEUED_AUDIO_BYTES
from custom_components.voicestack.core.wyoming_info import (
    DESCRIBE_MAX_PAYLOAD_BYTES,
)
from custom_components.voicestack.request.loop import VoiceLoop
from devstack import servers, speech
from devstack.engines import start_engines
from devstack.fake_satellite import BOMB_LENGTH, BOMB_WINDOW_S, FakeSatellite
from devstack.home import HA_VERSION, Home, Owner
from devstack.runner import run_bench
from devstack.satellite import RunningSatellite, read_until, satellite
from devstack.voicestack_entry import satellite_entity
from devstack.waiting import wait_for
from voicestack_protocol import MAX_HEADER_BYTES
from voicestack_satellite.connections import NON_OWNER_MAX_PAYLOAD
from voicestack_satellite.memory import release_freed_memory
from voicestack_satellite.peer import MAX_QUEUED_BYTES
from voicestack_satellite.player import MAX_AHEAD_S
from voicestack_satellite.player_stream import HISTORY_S

KIB = 1024
MIB = 1024 * KIB
SLACK_MIB = 10.0
# One read of a socket by asyncio's selector transport adds up to this much.
ASYNCIO_READ_BYTES: int = asyncio.selector_events._SelectorSocketTransport.max_size  # noqa: SLF001

FLOOD_BYTES = 200 * MIB  # 1.
PLAYBACK_CHUNK = b"\x01\x00" * 16384  # 32 KiB, 0.74 s at 22050 Hz
HELD_BACK_S = 2.0
RETURN_MIB = 4.0
PAYLOAD_CONNECTIONS = 50  # 2.
ANNOUNCED_PAYLOAD = 4 * MIB
IDLE_CONNECTIONS = 1100  # 3.
SATELLITE_FILE_LIMIT = 1024
STREAM_BYTES = 256 * MIB  # 5.
WARM_UP_BYTES = MIB
STREAM_CHUNK = 64 * KIB


# -- measuring ------------------------------------------------------------------------


class Memory:
    """One process's resident memory in MiB, from ``/proc/PID``.

    Read with ``os.open``: Home Assistant, running in this process, reports
    ``open()`` in its event loop as blocking; these files never block.
    """

    def __init__(self, pid: int) -> None:
        """The process ``pid`` (this one: ``os.getpid()``)."""
        self.pid = pid

    def rss(self) -> float:
        """Resident now (``VmRSS``)."""
        return self._status_kib("VmRSS") / KIB

    def peak(self) -> float:
        """The most resident since the last ``reset_peak`` (``VmHWM``)."""
        return self._status_kib("VmHWM") / KIB

    def reset_peak(self) -> float:
        """Start the peak afresh at what is resident now; returns that."""
        fd = os.open(f"/proc/{self.pid}/clear_refs", os.O_WRONLY)
        try:
            os.write(fd, b"5")
        finally:
            os.close(fd)
        return self.rss()

    def _status_kib(self, key: str) -> int:
        fd = os.open(f"/proc/{self.pid}/status", os.O_RDONLY)
        try:
            status = os.read(fd, 64 * KIB).decode()
        finally:
            os.close(fd)
        line = next(row for row in status.splitlines() if row.startswith(f"{key}:"))
        return int(line.split()[1])


@dataclass(frozen=True, slots=True)
class Bound:
    """What the code lets the peer make the process hold: named limits, in bytes."""

    parts: tuple[tuple[str, int], ...]

    @property
    def mib(self) -> float:
        """The limits plus the slack."""
        return sum(size for _, size in self.parts) / MIB + SLACK_MIB

    def text(self) -> str:
        """How it adds up."""
        parts = " + ".join(f"{size / MIB:.2f} ({what})" for what, size in self.parts)
        return f"{parts} + {SLACK_MIB:g} (slack) = {self.mib:.1f} MiB"


@dataclass(frozen=True, slots=True)
class Rss:
    """A process's resident memory (MiB) before a probe, at its peak and after."""

    before: float
    peak: float
    after: float

    @property
    def growth(self) -> float:
        """From before to the peak: what the probe made the process hold."""
        return self.peak - self.before


@dataclass(frozen=True, slots=True)
class Result:
    """One probe's figures and whether every goal was met."""

    probe: str
    rss: Rss
    bound: Bound
    ok: bool


RESULTS: list[Result] = []


def show(probe: str, sent: str, rss: Rss, bound: Bound, *more_goals: bool) -> None:
    """Print a probe's figures against its bound, and keep them for the summary."""
    report(f"sent: {sent}")
    report(
        f"RSS before {rss.before:.1f} MiB, peak {rss.peak:.1f} MiB, "
        f"after {rss.after:.1f} MiB"
    )
    report(f"bound on the growth: {bound.text()}")
    within = rss.growth <= bound.mib
    figure(
        "growth at the peak",
        rss.growth,
        "MiB",
        anchor=("bound", bound.mib),
        goal=("<= bound", within),
    )
    RESULTS.append(Result(probe, rss, bound, within and all(more_goals)))


def summary() -> None:
    """All probes in one table (Markdown, as docs/benchmarks.md keeps it)."""
    report()
    report("| probe | RSS before | peak | after | growth | bound | ratio | verdict |")
    report("|---|---|---|---|---|---|---|---|")
    for r in RESULTS:
        report(
            f"| {r.probe} | {r.rss.before:.1f} | {r.rss.peak:.1f} | "
            f"{r.rss.after:.1f} | {r.rss.growth:.1f} | {r.bound.mib:.1f} | "
            f"{r.rss.growth / r.bound.mib:.2f} | {verdict(r.ok)} |"
        )


def encode(*events: Event) -> bytes:
    """Events as they go on the wire."""
    buffer = io.BytesIO()
    for event in events:
        write_event(event, buffer)  # type: ignore[arg-type]
    return buffer.getvalue()


# -- the satellite ----------------------------------------------------------------------


def satellite_connection(max_payload: int) -> int:
    """Bytes one connection may make the satellite hold (see the module)."""
    read_buffer = 2 * MAX_HEADER_BYTES + ASYNCIO_READ_BYTES
    return read_buffer + 2 * max_payload + MAX_QUEUED_BYTES


def satellite_network_bound() -> Bound:
    """All the network can make the satellite hold, with its default settings."""
    others = DEFAULTS.max_connections * satellite_connection(
        min(DEFAULTS.max_payload_bytes, NON_OWNER_MAX_PAYLOAD)
    )
    return Bound(
        (
            ("the owner's unfinished event", 2 * DEFAULTS.max_payload_bytes),
            (f"{DEFAULTS.max_connections} connections", others),
        )
    )


async def describe_latency(sat: RunningSatellite) -> float | None:
    """Seconds a new client waits for ``info``; None if not within the timeout."""
    client = sat.connect()
    started = time.monotonic()
    try:
        async with asyncio.timeout(DESCRIBE_TIMEOUT_S):
            await client.connect()
            await client.write_event(Describe().event())
            await read_until(client, "info", DESCRIBE_TIMEOUT_S)
    except (OSError, TimeoutError):
        return None
    finally:
        await client.disconnect()
    return time.monotonic() - started


def show_describe(latency: float | None) -> None:
    """Print how long a new client's ``describe`` took, or that it got no answer."""
    goal = f"<= {DESCRIBE_TIMEOUT_S:g} s"
    if latency is None:
        report(f"new client's describe: no info | goal {goal}: MISS")
    else:
        figure(
            "new client's describe answered in",
            latency,
            "s",
            goal=(goal, True),
            precision=3,
        )


async def probe_playback(tmp: Path) -> None:
    """1. 200 MiB of playback audio from the owner, then a flush."""
    header("1. satellite: 200 MiB of playback audio from the owner, then a flush")
    rate = DEFAULTS.snd_rate
    mic = speech.write_wav(tmp / "mic.wav", speech.silence(1.0))
    async with satellite(tmp, "--mic-file", str(mic)) as sat:
        memory = Memory(sat.process.pid)
        # A small send buffer: what is in flight sits in the satellite's socket.
        sock = socket.create_connection(("127.0.0.1", sat.port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * KIB)
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock)
        played = asyncio.Event()
        played_at = 0.0

        async def read_all() -> None:
            nonlocal played_at
            while (event := await async_read_event(reader)) is not None:
                if event.type == "played" and not played.is_set():
                    played_at = time.monotonic()
                    played.set()

        reading = asyncio.create_task(read_all())
        writer.write(
            encode(
                Event("voicestack-hello", {"protocol": 1}),
                RunSatellite().event(),
                AudioStart(rate=rate, width=2, channels=1).event(),
            )
        )
        await asyncio.sleep(1.0)
        before = memory.reset_peak()
        chunk = encode(
            AudioChunk(rate=rate, width=2, channels=1, audio=PLAYBACK_CHUNK).event()
        )
        sent, started = 0, time.monotonic()
        try:
            while sent < FLOOD_BYTES:
                writer.write(chunk)
                sent += len(PLAYBACK_CHUNK)
                await asyncio.wait_for(writer.drain(), HELD_BACK_S)
        except TimeoutError:
            pass
        flood_s = time.monotonic() - started
        flushed_at = time.monotonic()
        writer.write(encode(Event("voicestack-flush")))
        await asyncio.wait_for(played.wait(), 120)
        await asyncio.sleep(5.0)
        peak, after = memory.peak(), memory.rss()
        writer.close()
        reading.cancel()

    returned = after - before <= RETURN_MIB
    player = (MAX_AHEAD_S + HISTORY_S) * rate * 2
    bound = Bound(
        (
            (f"player: {MAX_AHEAD_S:g} s ahead + {HISTORY_S:g} s played", int(player)),
            (
                "the owner's connection",
                satellite_connection(DEFAULTS.max_payload_bytes),
            ),
        )
    )
    show(
        "1. satellite: 200 MiB of playback from the owner, then a flush",
        f"{sent / MIB:.1f} MiB of {FLOOD_BYTES / MIB:.0f} MiB in {flood_s:.1f} s, "
        f"then held back for {HELD_BACK_S:g} s; the flush was read "
        f"{played_at - flushed_at:.1f} s after it was sent (the audio in the "
        f"socket buffers plays first); 'after' is 5 s after that",
        Rss(before, peak, after),
        bound,
        returned,
    )
    figure(
        "growth 5 s after the flush",
        after - before,
        "MiB",
        goal=(f"<= {RETURN_MIB:g} MiB", returned),
    )


async def probe_payloads(tmp: Path) -> None:
    """2. 50 connections, each announcing a 4 MiB payload and not finishing it."""
    header("2. satellite: 50 connections, each with an unfinished 4 MiB payload")
    mic = speech.write_wav(tmp / "mic.wav", speech.silence(1.0))
    async with satellite(tmp, "--mic-file", str(mic)) as sat:
        memory = Memory(sat.process.pid)
        await asyncio.sleep(1.0)
        before = memory.reset_peak()
        event = {"type": "audio-chunk", "payload_length": ANNOUNCED_PAYLOAD}
        data = json.dumps(event).encode() + b"\n" + bytes(ANNOUNCED_PAYLOAD - 1)
        writers: list[asyncio.StreamWriter] = []
        for _ in range(PAYLOAD_CONNECTIONS):
            _reader, writer = await asyncio.open_connection("127.0.0.1", sat.port)
            writer.write(data)
            writers.append(writer)

        async def drained(writer: asyncio.StreamWriter) -> bool:
            try:
                await asyncio.wait_for(writer.drain(), 5.0)
            except (ConnectionError, TimeoutError):
                return False
            return True

        complete = sum(await asyncio.gather(*(drained(w) for w in writers)))
        await asyncio.sleep(2.0)
        latency = await describe_latency(sat)
        peak = memory.peak()
        for writer in writers:
            writer.transport.abort()
        await asyncio.sleep(1.0)
        after = memory.rss()
    show(
        "2. satellite: 50 connections with an unfinished 4 MiB payload",
        f"{PAYLOAD_CONNECTIONS} connections, each a header announcing "
        f"{ANNOUNCED_PAYLOAD:,} bytes and {ANNOUNCED_PAYLOAD - 1:,} bytes of it "
        f"({complete} got all of it into the sockets before the satellite dropped "
        "them); 'after' is 1 s after closing them",
        Rss(before, peak, after),
        satellite_network_bound(),
        latency is not None,
    )
    show_describe(latency)


async def probe_idle(tmp: Path) -> None:
    """3. 1,100 idle connections against a file limit of 1024, then ``describe``."""
    header("3. satellite: 1,100 idle connections, file limit 1024, then describe")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = IDLE_CONNECTIONS + 256
    if soft < needed:  # this process holds the client ends
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(needed, hard), hard))
    mic = speech.write_wav(tmp / "mic.wav", speech.silence(1.0))
    async with satellite(
        tmp, "--mic-file", str(mic), max_open_files=SATELLITE_FILE_LIMIT
    ) as sat:
        memory = Memory(sat.process.pid)
        await asyncio.sleep(1.0)
        before = memory.reset_peak()
        loop = asyncio.get_running_loop()
        sockets: list[socket.socket] = []
        try:
            for _ in range(IDLE_CONNECTIONS):
                sock = socket.socket()
                sock.setblocking(False)
                sockets.append(sock)
                await loop.sock_connect(sock, ("127.0.0.1", sat.port))
            await asyncio.sleep(1.0)
            fds = f"/proc/{sat.process.pid}/fd"
            files = len(await asyncio.to_thread(os.listdir, fds))
            latency = await describe_latency(sat)
            peak = memory.peak()
        finally:
            for sock in sockets:
                sock.close()
        await asyncio.sleep(1.0)
        after = memory.rss()
    show(
        "3. satellite: 1,100 idle connections (file limit 1024), then describe",
        f"{len(sockets):,} connections that send nothing, then one describe; "
        "'after' is 1 s after closing them",
        Rss(before, peak, after),
        satellite_network_bound(),
        latency is not None,
    )
    report(
        f"satellite's open files with {len(sockets):,} connections made: {files} "
        f"(limit {SATELLITE_FILE_LIMIT}, --max-connections {DEFAULTS.max_connections})"
    )
    show_describe(latency)


# -- Home Assistant ---------------------------------------------------------------------


def link_reader() -> tuple[str, int]:
    """What the link's reader may hold of one connection."""
    size = 2 * MAX_HEADER_BYTES + ASYNCIO_READ_BYTES + 2 * MAX_PAYLOAD_BYTES
    return ("the link's reader", size)


async def added(home: Home, peer: FakeSatellite) -> ConfigEntry:
    """A VoiceStack entry for ``peer`` through the config flow; its link running."""
    entry = await home.add_satellite(Owner.VOICESTACK, peer.port)
    await wait_for(lambda: peer.owner is not None, 15, "run-satellite")
    await wait_for(
        lambda: satellite_entity(home.hass, entry) is not None, 15, "satellite entity"
    )
    await asyncio.sleep(2.0)  # setup's work done
    return entry


def settle() -> float:
    """Freed heap back to the system, the peak reset; returns the RSS."""
    release_freed_memory()
    return Memory(os.getpid()).reset_peak()


async def probe_link(home: Home) -> None:
    """4a. The link of a running entry meets a 2e9-byte payload."""
    header("4. Home Assistant: a payload_length of 2e9 on the link, then describe")
    memory = Memory(os.getpid())
    async with FakeSatellite("hostile") as peer:
        entry = await added(home, peer)
        before = settle()
        peer.bomb_on = RunSatellite().event().type
        assert peer.owner is not None
        peer.owner.transport.abort()  # the link reconnects into the bomb
        await asyncio.sleep(BOMB_WINDOW_S)
        peak, after = memory.peak(), memory.rss()
        stats = entry.runtime_data.hub.link.stats
        await home.remove(entry)
    show(
        "4. HA: payload_length 2e9 on the link, 5 s",
        f"{peer.bombs} connection(s) answered run-satellite with a header "
        f"announcing {BOMB_LENGTH:,} bytes; the sockets took "
        f"{peer.bomb_bytes / MIB:.0f} MiB of zeros after them in {BOMB_WINDOW_S:g} s",
        Rss(before, peak, after),
        Bound((link_reader(),)),
        peer.bombs >= 1,
    )
    report(f"the link's last error: {stats.last_error}")


async def probe_describe(home: Home) -> None:
    """4b. The config flow's ``describe`` meets a 2e9-byte payload."""
    memory = Memory(os.getpid())
    async with FakeSatellite("hostile") as peer:
        peer.bomb_on = Describe().event().type
        before = settle()
        started = time.monotonic()
        result = await home.hass.config_entries.flow.async_init(
            DOMAIN,
            context={"source": SOURCE_USER},
            data={CONF_HOST: "127.0.0.1", CONF_PORT: peer.port},
        )
        answered_s = time.monotonic() - started
        await asyncio.sleep(1.0)
        peak, after = memory.peak(), memory.rss()
        home.hass.config_entries.flow.async_abort(result["flow_id"])
    errors = result.get("errors") or {}
    bound = Bound(
        (
            (
                "describe's reader",
                2 * MAX_HEADER_BYTES
                + ASYNCIO_READ_BYTES
                + 2 * DESCRIBE_MAX_PAYLOAD_BYTES,
            ),
        )
    )
    show(
        "4. HA: payload_length 2e9 to the config flow's describe",
        f"describe answered with a header announcing {BOMB_LENGTH:,} bytes; the "
        f"sockets took {peer.bomb_bytes / MIB:.0f} MiB of zeros after it; 'after' "
        "is 1 s after the flow answered",
        Rss(before, peak, after),
        bound,
        errors == {"base": "not_a_satellite"},
    )
    report(f"the config flow answered {errors} in {answered_s:.3f} s")


async def request(
    home: Home, peer: FakeSatellite, voice: VoiceLoop, total: int
) -> None:
    """``peer`` streams ``total`` bytes into a request, until it has its outcome.

    Returns once ``voice`` (the entry's voice loop) read every byte and Home
    Assistant fired ``voicestack_utterance`` for the request.
    """
    utterances = len(home.utterances)
    await asyncio.wait_for(peer.stream(STREAM_CHUNK, total=total), 120)
    await wait_for(
        lambda: voice.audio is not None and voice.audio.received_bytes == total,
        30,
        "read",
    )
    await wait_for(lambda: len(home.utterances) > utterances, 60, "outcome")


async def probe_request(home: Home) -> None:
    """5. A peer at the satellite's address streams audio into a request."""
    header("5. Home Assistant: a peer streams 256 MiB of audio into a request")
    memory = Memory(os.getpid())
    async with FakeSatellite("hostile") as peer:
        entry = await added(home, peer)
        entity = satellite_entity(home.hass, entry)
        assert entity is not None
        voice = entity.voice_loop
        # The first request pays for what the pipeline sets up once (its VAD,
        # the connection to speech-to-text): not what the probe is about.
        await request(home, peer, voice, WARM_UP_BYTES)
        before = settle()
        started = time.monotonic()
        await request(home, peer, voice, STREAM_BYTES)
        took_s = time.monotonic() - started
        await asyncio.sleep(2.0)
        peak, after = memory.peak(), memory.rss()
        audio = voice.audio
        assert audio is not None
        connected = entry.runtime_data.hub.connected
        await home.remove(entry)
    outcome = home.utterances[-1][1].get("outcome")
    show(
        "5. HA: 256 MiB of audio into a request",
        f"after one request of {WARM_UP_BYTES / MIB:g} MiB, run-pipeline and "
        f"{STREAM_BYTES / MIB:.0f} MiB of audio in {STREAM_CHUNK // KIB} KiB chunks "
        f"as fast as read, no audio-stop; read and answered in {took_s:.1f} s; "
        "'after' is 2 s after the request's outcome",
        Rss(before, peak, after),
        Bound((link_reader(), ("the voice loop's queue", MAX_QUEUED_AUDIO_BYTES))),
        audio.peak_bytes <= MAX_QUEUED_AUDIO_BYTES,
    )
    report(
        f"voice loop's queue: peak {audio.peak_bytes:,} bytes (limit "
        f"{MAX_QUEUED_AUDIO_BYTES:,}); received {audio.received_bytes / MIB:.0f} MiB, "
        f"dropped {audio.dropped_bytes / MIB:.1f} MiB; request outcome {outcome!r}; "
        f"link still connected: {connected}"
    )


# -- the run ----------------------------------------------------------------------------


async def bench(workdir: Path) -> int:
    """Every probe; returns 0 (a missed bound is printed, not an error)."""
    header("Memory under hostile peers (issue 12, items 5 and 8)")
    report(
        f"satellite: {servers.engines_python()}; Home Assistant {HA_VERSION} on "
        f"Python {sys.version.split()[0]}, in this process (pid {os.getpid()})"
    )
    for name, probe in (
        ("playback", probe_playback),
        ("payloads", probe_payloads),
        ("idle", probe_idle),
    ):
        (workdir / name).mkdir()
        await probe(workdir / name)
    async with AsyncExitStack() as stack:
        engines, home = await asyncio.gather(
            start_engines(stack),
            stack.enter_async_context(Home.running(workdir / "config")),
        )
        await home.set_up_assist(engines)
        await probe_link(home)
        await probe_describe(home)
        await probe_request(home)
    summary()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the probes; non-zero only when the stack itself fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    return run_bench("memory_probes", args.keep, bench)


if __name__ == "__main__":
    sys.exit(main())
