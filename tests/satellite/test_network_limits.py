"""The satellite keeps listening whatever the network does (issue 12, items 4 and 5).

A peer that stops reading, a flood of idle connections and unfinished payloads
run against a real satellite process on loopback; the send queue's rules against
real loopback sockets in this process; the mic loop's failure rules with a
counted mic (its clock is the chunk count, so they are exact).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import datetime
import json
import logging
from pathlib import Path
import re
import socket
import subprocess

import numpy as np
import pytest
from wyoming.audio import AudioChunk
from wyoming.event import Event

from devstack import speech
from devstack.satellite import (
    CLI,
    RunningSatellite,
    read_until,
    run_satellite,
    satellite,
)
from voicestack_satellite.mic_loop import (
    GIVE_UP_CHUNKS,
    REPORT_EVERY_CHUNKS,
    MicLoopError,
    run_mic_loop,
)
from voicestack_satellite.peer import MAX_QUEUED_BYTES, Peer
from voicestack_satellite.settings import SettingsError, load

MiB = 1024 * 1024
FAILED = "Processing a mic chunk failed"


# -- helpers ----------------------------------------------------------------------


def _wire(kind: str, data: dict | None = None, payload_length: int = 0) -> bytes:
    """An event's bytes as a peer sends them (data in its own segment)."""
    header: dict[str, object] = {"type": kind}
    body = b""
    if data:
        body = json.dumps(data).encode()
        header["data_length"] = len(body)
    if payload_length:
        header["payload_length"] = payload_length
    return json.dumps(header).encode() + b"\n" + body


async def _open_unread(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection whose receive window is tiny and that this test never reads."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
    return await asyncio.open_connection(sock=sock)


async def _describe(port: int) -> Event:
    async with asyncio.timeout(5):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(_wire("describe"))
            line = await reader.readline()
        finally:
            writer.close()
    if not line:
        raise ConnectionError("closed without info")
    return Event(type=json.loads(line)["type"])


async def _wait_for_log(sat, text: str, count: int = 1, timeout_s: float = 30) -> str:
    async with asyncio.timeout(timeout_s):
        while (log := sat.log_text()).count(text) < count:
            await asyncio.sleep(0.1)
    return log


def _logged_at(log: str, text: str) -> datetime:
    """The timestamp of the first log line containing ``text``."""
    line = next(line for line in log.splitlines() if text in line)
    return datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")  # noqa: DTZ007


def _rss_mb(pid: int) -> float:
    """Resident memory of a process, from /proc/PID/status."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status)[1]) / 1024


async def _owner(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A well-behaved owner: ``run-satellite`` accepted (its ``pong`` read)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_wire("run-satellite") + _wire("ping", {"text": "owner"}))
    await _read_type(reader, "pong")
    return reader, writer


async def _read_type(reader: asyncio.StreamReader, kind: str) -> dict:
    """Skip events (and their data and payload) until one of ``kind``."""
    async with asyncio.timeout(5):
        while True:
            line = await reader.readline()
            if not line:
                raise ConnectionError(f"closed before {kind}")
            header = json.loads(line)
            data = await reader.readexactly(header.get("data_length") or 0)
            await reader.readexactly(header.get("payload_length") or 0)
            if header["type"] == kind:
                return json.loads(data) if data else header.get("data", {})


# -- item 4: a peer that stops reading ----------------------------------------------


async def _take_over(sat: RunningSatellite) -> str:
    """A new owner runs the satellite and pings: the pong's text ("mine")."""
    async with sat.connect() as new_owner:
        await run_satellite(new_owner)
        await new_owner.write_event(Event("ping", {"text": "mine"}))
        pong, _ = await read_until(new_owner, "pong", 5)
    return pong.data["text"]


async def test_an_owner_that_stops_reading_is_dropped_and_the_mic_keeps_listening(
    tmp_path: Path,
) -> None:
    """It froze: a send blocked under the peer's lock and the mic loop waited on it."""
    wake = speech.speak("Hey Jarvis.")
    wav = speech.write_wav(
        tmp_path / "mic.wav", speech.pad(wake, 2.0, 3.0) + speech.pad(wake, 0.0, 3.0)
    )
    async with satellite(tmp_path, "--mic-file", str(wav)) as sat:
        _reader, stuck = await _open_unread(sat.port)
        stuck_name = f"127.0.0.1:{stuck.get_extra_info('sockname')[1]}"
        # Eight 1 MiB pings: more pong than the kernel buffers, and never read.
        stuck.write(
            _wire("run-satellite") + _wire("ping", {"text": "x" * MiB}) * 8
        )  # (no drain: the satellite stops reading this socket when it must)
        log = await _wait_for_log(sat, "Wake word hey_jarvis", count=2)
        await _wait_for_log(sat, f"Dropping {stuck_name}:")
        pong = await _take_over(sat)
        log = sat.log_text()
        stuck.transport.abort()

    assert pong == "mine"
    dropped = _logged_at(log, f"Dropping {stuck_name}:")
    # Dropped when its queue overflowed or, at the latest, after --write-timeout
    # (default 5 s) plus the time to read the pings.
    assert (dropped - _logged_at(log, f"Run by {stuck_name}")).total_seconds() < 7
    assert log.count(f"Dropping {stuck_name}:") == 1  # one warning


async def test_a_takeover_does_not_wait_for_an_old_owner_that_does_not_read(
    tmp_path: Path,
) -> None:
    """It hung in ``Peer.close()`` (close + wait_closed) with unsent data queued."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    args = ("--mic-file", str(wav), "--owner-timeout", "1", "--write-timeout", "20")
    async with satellite(tmp_path, *args, "--max-payload", str(8 * MiB)) as sat:
        _reader, stuck = await _open_unread(sat.port)
        # One 6 MiB pong: the kernel takes about 3 MiB, the rest waits in the
        # satellite for a reader that never comes (and --write-timeout is long).
        stuck.write(_wire("run-satellite") + _wire("ping", {"text": "x" * 6 * MiB}))
        await _wait_for_log(sat, "Run by")
        await asyncio.sleep(1.5)  # silent for longer than --owner-timeout
        pong = await _take_over(sat)
        log = sat.log_text()
        stuck.transport.abort()

    assert pong == "mine"
    assert "handing the satellite to" in log  # the takeover, not the write timeout


async def test_sigterm_ends_it_while_a_write_waits_for_a_peer_that_does_not_read(
    tmp_path: Path,
) -> None:
    """The 2 s exit on SIGTERM (item 7) holds with a writer stuck on a full socket."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    args = ("--mic-file", str(wav), "--write-timeout", "60")
    async with satellite(tmp_path, *args, "--max-payload", str(8 * MiB)) as sat:
        _reader, stuck = await _open_unread(sat.port)
        stuck.write(_wire("run-satellite") + _wire("ping", {"text": "x" * 6 * MiB}))
        await _wait_for_log(sat, "Run by")
        await asyncio.sleep(0.5)  # the pong is being written
        started = asyncio.get_running_loop().time()
        sat.process.terminate()
        code = await asyncio.to_thread(sat.process.wait, 10)
        took = asyncio.get_running_loop().time() - started
        stuck.transport.abort()

    assert code == 0
    assert took < 5  # SHUTDOWN_S is 2 s; the rest is process teardown under load


@asynccontextmanager
async def _peer_not_read(write_timeout_s: float) -> AsyncIterator[Peer]:
    """A ``Peer`` for a real loopback connection whose other end never reads."""
    accepted: asyncio.Future[Peer] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def on_connect(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        accepted.set_result(Peer(reader, writer, write_timeout_s=write_timeout_s))
        await done.wait()

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    _reader, client = await _open_unread(server.sockets[0].getsockname()[1])
    peer = await accepted
    try:
        yield peer
    finally:
        peer.abort()
        client.transport.abort()
        done.set()
        server.close()
        await server.wait_closed()


async def test_a_peer_that_does_not_read_is_dropped_when_its_queue_is_full(
    caplog: pytest.LogCaptureFixture,
) -> None:
    chunk = AudioChunk(rate=16000, width=2, channels=1, audio=bytes(2560)).event()
    async with _peer_not_read(write_timeout_s=60) as peer:
        sent = 0
        while not peer.closed and sent < 10_000:  # 10,000 chunks: 26 MB
            peer.send(chunk)  # returns at once, however full the socket is
            sent += 1
            await asyncio.sleep(0)  # the writer task runs
        closed = peer.closed

    assert closed
    assert f"more than {MAX_QUEUED_BYTES // 1024} KiB waiting to be sent" in caplog.text


async def test_a_write_that_does_not_drain_in_time_drops_the_peer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with _peer_not_read(write_timeout_s=0.3) as peer:
        started = asyncio.get_running_loop().time()
        peer.send(Event("ping", {"text": "x" * 8 * MiB}))  # one event always fits
        async with asyncio.timeout(10):
            await peer.wait_closed()
        waited = asyncio.get_running_loop().time() - started

    assert waited >= 0.3
    assert "could not write for 0.3 s (it does not read)" in caplog.text


async def test_closing_a_peer_that_does_not_read_never_waits_for_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with _peer_not_read(write_timeout_s=0.3) as peer:
        peer.send(Event("ping", {"text": "x" * 8 * MiB}))
        await asyncio.sleep(0.05)  # the writer is stuck in its write
        peer.close()  # does not wait
        peer.send(Event("ping"))  # nothing more is queued after close
        closed = peer.closed
        async with asyncio.timeout(10):  # the write timeout, then an abort
            await peer.wait_closed()

    assert closed
    assert "could not write for 0.3 s" in caplog.text


async def test_closing_a_peer_that_reads_delivers_what_was_queued() -> None:
    """A refusal (``error`` busy) still reaches a peer before the close."""
    accepted: asyncio.Future[Peer] = asyncio.get_running_loop().create_future()

    async def on_connect(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        accepted.set_result(Peer(reader, writer, write_timeout_s=5))

    server = await asyncio.start_server(on_connect, "127.0.0.1", 0)
    reader, client = await asyncio.open_connection(
        "127.0.0.1", server.sockets[0].getsockname()[1]
    )
    peer = await accepted
    for text in ("one", "two", "three"):
        peer.send(Event("ping", {"text": text}))
    peer.close()
    received = await asyncio.wait_for(reader.read(), 5)  # everything, then EOF
    await asyncio.wait_for(peer.wait_closed(), 5)
    client.close()
    server.close()
    await server.wait_closed()

    assert [text in received.decode() for text in ("one", "two", "three")] == [True] * 3


# -- item 5: connections, silence, payloads ------------------------------------------


async def test_idle_connections_cannot_lock_out_describe(tmp_path: Path) -> None:
    """1,100 idle connections used to exhaust the file limit: accept() failed."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with satellite(tmp_path, "--mic-file", str(wav), max_open_files=128) as sat:
        owner_reader, owner = await _owner(sat.port)
        idle = []
        for _ in range(200):  # well beyond the file limit
            try:
                idle.append(
                    await asyncio.wait_for(
                        asyncio.open_connection("127.0.0.1", sat.port), 2
                    )
                )
            except TimeoutError:
                break  # the listen backlog is full: nobody accepts any more
        info = await _describe(sat.port)
        owner.write(_wire("ping", {"text": "still here"}))
        pong = await _read_type(owner_reader, "pong")
        files = len(list(Path(f"/proc/{sat.process.pid}/fd").iterdir()))
        log = sat.log_text()
        for _reader, writer in idle:
            writer.transport.abort()
        owner.close()

    assert len(idle) == 200
    assert info.type == "info"
    assert pong["text"] == "still here"
    assert files < 64  # 8 connections and the satellite's own files
    # One warning for the whole flood, the rest at debug level.
    assert log.count("WARNING voicestack_satellite.connections: Connection limit") == 1
    assert "Connection limit (8) reached: closing 127.0.0.1" in log


async def test_unfinished_payloads_are_refused_beyond_the_limits(
    tmp_path: Path,
) -> None:
    """50 connections holding an unfinished 4 MiB payload grew the RSS by 200 MB."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with satellite(tmp_path, "--mic-file", str(wav)) as sat:
        _owner_reader, owner = await _owner(sat.port)
        before = _rss_mb(sat.process.pid)
        held = [await _send_unfinished_payload(sat.port, 4 * MiB) for _ in range(50)]
        await asyncio.sleep(1)  # anything the satellite still reads, it has read
        after = _rss_mb(sat.process.pid)
        info = await _describe(sat.port)
        log = sat.log_text()
        for writer in held:
            writer.transport.abort()
        owner.close()

    assert info.type == "info"
    assert after - before < 40, (before, after)  # was +200 MB
    assert "payload_length 4194304 exceeds the limit of 16384 bytes" in log


async def _send_unfinished_payload(port: int, size: int) -> asyncio.StreamWriter:
    """Announce ``size`` bytes of payload and send all but the last byte, if taken."""
    _reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(_wire("audio-chunk", {"rate": 16000}, payload_length=size))
    piece = bytes(256 * 1024)
    try:
        for start in range(0, size - 1, len(piece)):
            writer.write(piece[: size - 1 - start])
            await asyncio.wait_for(writer.drain(), 5)
    except (ConnectionError, TimeoutError):
        pass  # refused: the satellite closed the connection
    return writer


async def test_a_connection_that_does_not_run_the_satellite_must_not_stay_silent(
    tmp_path: Path,
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    loop = asyncio.get_running_loop()
    async with satellite(
        tmp_path, "--mic-file", str(wav), "--idle-timeout", "1"
    ) as sat:
        owner_reader, owner = await _owner(sat.port)
        started = loop.time()
        silent_reader, silent = await asyncio.open_connection("127.0.0.1", sat.port)
        asker_reader, asker = await asyncio.open_connection("127.0.0.1", sat.port)
        asker.write(_wire("describe"))
        slow_reader, slow = await asyncio.open_connection("127.0.0.1", sat.port)
        trickle = asyncio.create_task(_trickle(slow, _wire("describe")))
        async with asyncio.timeout(10):
            from_silent = await silent_reader.read()  # EOF: closed
            from_asker = await asker_reader.read()
            from_slow = await slow_reader.read()
        closed_after = loop.time() - started
        await asyncio.sleep(max(0.0, started + 2.5 - loop.time()))
        owner.write(_wire("ping", {"text": "silent owner"}))  # silent for 2.5 s
        pong = await _read_type(owner_reader, "pong")
        trickle.cancel()
        log = sat.log_text()
        for writer in (owner, silent, asker, slow):
            writer.close()

    assert from_silent == b""
    assert b'"info"' in from_asker  # answered, then closed once silent
    assert from_slow == b""  # an event trickled byte by byte never completes
    assert closed_after >= 0.9
    assert pong["text"] == "silent owner"
    assert log.count("no event for 1 s (only the owner may stay silent)") == 3


async def _trickle(writer: asyncio.StreamWriter, data: bytes) -> None:
    """One byte every 0.4 s: a connection that is never silent, never done."""
    for byte in data:
        writer.write(bytes([byte]))
        await asyncio.sleep(0.4)


async def test_at_the_limit_a_new_connection_is_closed_when_all_have_spoken(
    tmp_path: Path,
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with satellite(
        tmp_path, "--mic-file", str(wav), "--max-connections", "3"
    ) as sat:
        owner_reader, owner = await _owner(sat.port)
        first_reader, first = await asyncio.open_connection("127.0.0.1", sat.port)
        first.write(_wire("describe"))
        await _read_type(first_reader, "info")
        second_reader, second = await asyncio.open_connection("127.0.0.1", sat.port)
        second.write(_wire("ping", {"text": "2"}))
        await _read_type(second_reader, "pong")
        with pytest.raises(ConnectionError):
            await _describe(sat.port)  # the fourth: closed at once, no answer
        first.close()  # a place comes free
        async with asyncio.timeout(10):
            while True:
                try:
                    info = await _describe(sat.port)
                    break
                except ConnectionError:
                    await asyncio.sleep(0.1)
        owner.write(_wire("ping", {"text": "owner"}))
        pong = await _read_type(owner_reader, "pong")
        log = sat.log_text()
        owner.close()
        second.close()

    assert info.type == "info"
    assert pong["text"] == "owner"
    assert "Connection limit (3) reached: refusing 127.0.0.1" in log


# -- options -------------------------------------------------------------------------


def test_the_limits_are_options_with_clear_errors(tmp_path: Path) -> None:
    config = tmp_path / "satellite.toml"
    config.write_text(
        'name = "x"\nmic-stdin = true\nsnd-file = "o.wav"\n'
        "max-connections = 4\nidle-timeout = 20\nwrite-timeout = 2.5\n"
    )
    settings = load(["--config", str(config)])
    cases = {
        ("--max-connections", "1"): "--max-connections must be between 2 and 256",
        ("--idle-timeout", "0.5"): "--idle-timeout must be between 1 and 3600",
        ("--write-timeout", "90"): "--write-timeout must be between 0.5 and 60",
        ("--max-payload", str(65 * MiB)): "between 1024 bytes and 64 MiB",
    }
    for extra, message in cases.items():
        with pytest.raises(SettingsError, match=message):
            load(["--name", "x", "--mic-stdin", "--snd-file", "o.wav", *extra])

    assert (settings.max_connections, settings.idle_timeout_s) == (4, 20.0)
    assert settings.write_timeout_s == 2.5
    defaults = load(["--name", "x", "--mic-stdin", "--snd-file", "o.wav"])
    assert (defaults.max_connections, defaults.idle_timeout_s) == (8, 10.0)
    assert (defaults.write_timeout_s, defaults.max_payload_bytes) == (5.0, 4 * MiB)


def test_more_connections_than_the_file_limit_allows_is_a_cli_error() -> None:
    result = subprocess.run(
        [
            *("prlimit", "--nofile=40", *CLI, "--name", "x", "--mic-stdin"),
            *("--snd-file", "o.wav", "--max-connections", "8"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "--max-connections 8 needs 72 open files, but the limit is 40" in (
        result.stderr
    )


# -- the mic loop --------------------------------------------------------------------


async def _mic(chunks: int) -> AsyncIterator[np.ndarray]:
    for _ in range(chunks):
        yield np.zeros(320, dtype=np.int16)  # a 20 ms read


async def test_a_failing_chunk_is_logged_and_listening_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    processed: list[int] = []
    errors: list[str] = []

    async def process(_chunk: np.ndarray) -> None:
        processed.append(len(processed))
        if len(processed) == 3:
            raise RuntimeError("boom")

    await run_mic_loop(_mic(10), process, errors.append)

    assert len(processed) == 10
    assert errors == ["mic processing failed: RuntimeError('boom')"]
    failures = [r for r in caplog.records if FAILED in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].levelno == logging.ERROR
    assert failures[0].exc_info is not None  # with its traceback


async def test_a_repeating_failure_is_reported_once_a_minute_and_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Every other 20 ms read fails for 160 s of mic audio: three reports, no exit."""
    errors: list[str] = []
    count = 0

    async def process(_chunk: np.ndarray) -> None:
        nonlocal count
        count += 1
        if count % 2:
            raise ValueError("odd")

    await run_mic_loop(_mic(8000), process, errors.append)

    reports = [r.getMessage() for r in caplog.records if FAILED in r.getMessage()]
    assert count == 8000
    assert len(reports) == len(errors) == 3  # reads 1, 3001 and 6001
    assert REPORT_EVERY_CHUNKS == 3000
    assert "(1499 more failures since the last report)" in reports[1]


async def test_a_mic_loop_that_fails_on_every_chunk_gives_up_after_10_s() -> None:
    count = 0

    async def process(_chunk: np.ndarray) -> None:
        nonlocal count
        count += 1
        raise RuntimeError("always")

    with pytest.raises(MicLoopError, match="every mic chunk failed for 10 s"):
        await run_mic_loop(_mic(1000), process, lambda _message: None)

    assert count == GIVE_UP_CHUNKS == 500
