"""The local announce socket (issue 16): lines in, one answer each, bounded.

What a line may hold and the token bucket are checked directly (the bucket on
a manual clock, so every figure is exact); the socket itself is a real Unix
socket in this process, with the forwarding function the satellite passes it
replaced by one that records (or refuses) what it gets; the idle timeout and
who makes room for a new connection run in virtual time (``virtual_time.py``),
so every time they show is exact; and a real satellite process sends what its
socket takes to the Wyoming connection that runs it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
import json
import logging
import os
from pathlib import Path
import socket
import stat
import subprocess
import sys

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.ping import Ping
from wyoming.satellite import RunSatellite

from devstack import servers, speech
from devstack.satellite import CLI, read_until, satellite
from devstack.waiting import wait_for
from tests.satellite import virtual_time
import voicestack_protocol as protocol
from voicestack_satellite.announce_lines import (
    EXAMPLE,
    LineError,
    TokenBucket,
    parse_line,
)
from voicestack_satellite.announce_slots import IDLE_TIMEOUT_S, MAX_CONNECTIONS
from voicestack_satellite.announce_socket import (
    MAX_LINE_BYTES,
    QUIET_LOG_S,
    RATE_LINES,
    AnnounceSocket,
    AnnounceSocketError,
)
from voicestack_satellite.settings import SettingsError, load

NOT_RUN = (
    "no Home Assistant is connected (nothing is queued on the satellite; "
    "send the line again once it is)"
)
POSITIVE = "ttl must be a positive number of seconds"
NOT_ASKED = "Home Assistant does not accept announcements from this satellite"
ANSWER_S = 5.0
IDLE = {"ok": False, "error": "no complete line for 5 s; closing the connection"}
EVICTED = {
    "ok": False,
    "error": "closed to make room for a new connection (4 at most); "
    "connect again to send a line",
}


class Clock:
    """Monotonic seconds that move only when the test says so."""

    def __init__(self) -> None:
        """Time starts at 1000 s."""
        self.now = 1000.0

    def __call__(self) -> float:
        """The current time."""
        return self.now


class Recorder:
    """What the socket forwards; ``refusal`` set: refuses with it instead."""

    def __init__(self) -> None:
        """Nothing forwarded yet."""
        self.sent: list[Event] = []
        self.refusal: str | None = None

    def __call__(self, announce: Event) -> str | None:
        """Keep ``announce`` (or refuse it)."""
        if self.refusal is None:
            self.sent.append(announce)
        return self.refusal


class Client:
    """One connection to the socket: write lines, read answers."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """A connected client."""
        self.reader, self.writer = reader, writer

    async def ask(self, line: bytes | str | dict[str, object]) -> dict[str, object]:
        """Write one line, read its answer."""
        if isinstance(line, dict):
            line = json.dumps(line)
        if isinstance(line, str):
            line = line.encode()
        self.writer.write(line + b"\n")
        return await self.answer()

    async def answer(self) -> dict[str, object]:
        """The next answer line."""
        async with asyncio.timeout(ANSWER_S):
            raw = await self.reader.readline()
        assert raw.endswith(b"\n"), f"no answer line: {raw!r}"
        return json.loads(raw)

    async def closed(self) -> bool:
        """The socket closed the connection (end of file, nothing more)."""
        async with asyncio.timeout(ANSWER_S):
            return await self.reader.read() == b""

    async def close(self) -> None:
        """Close this end."""
        self.writer.close()
        await self.writer.wait_closed()


async def open_client(path: Path) -> Client:
    """A client of the socket at ``path``; the caller closes it."""
    return Client(*await asyncio.open_unix_connection(str(path)))


@asynccontextmanager
async def connect(path: Path) -> AsyncIterator[Client]:
    """A client of the socket at ``path``, closed afterwards."""
    client = await open_client(path)
    try:
        yield client
    finally:
        await client.close()


@asynccontextmanager
async def serving(
    path: Path, forward: Callable[[Event], str | None], clock: Callable[[], float]
) -> AsyncIterator[AnnounceSocket]:
    """The announce socket at ``path`` from start to close."""
    server = AnnounceSocket(path, forward, clock=clock, write_timeout_s=2.0)
    await server.start()
    try:
        yield server
    finally:
        await server.close()


def short_path(tmp_path: Path) -> Path:
    """A socket path in the test's folder (Unix socket paths are short)."""
    return tmp_path / "a.sock"


# -- what a line may hold -------------------------------------------------------------


def test_a_good_line_gives_every_field() -> None:
    fields = {
        "message": "Someone is at the door.",
        "priority": "high",
        "category": "warning",
        "source": "doorbell",
        "dedup_key": "door",
        "ttl": 30,
    }
    assert parse_line(json.dumps(fields).encode()) == fields
    bare = parse_line(b'{"message": "Hi.", "ttl": null}\r')
    assert bare == dict.fromkeys(bare, None) | {"message": "Hi."}


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (b"", 'empty line; send a JSON object such as {"message": '),
        (b"   ", "empty line"),
        (b"\xff\xfe", "the line is not UTF-8 text"),
        (b"hello", "not valid JSON: Expecting value at column 1"),
        (b'{"message": "x"', "not valid JSON: Expecting ',' delimiter at column 16"),
        (b'{"message": "x", "ttl": NaN}', "not valid JSON: NaN is not a number"),
        (b'["message"]', "expected a JSON object such as {"),
        (
            b'"Someone is at the door"',
            f"expected a JSON object such as {EXAMPLE}, got a string",
        ),
        (
            b'{"message": "x", "target": "all", "colour": 1}',
            (
                "unknown field(s) 'colour', 'target'; allowed: message, priority, "
                "category, source, dedup_key, ttl"
            ),
        ),
        (b'{"priority": "high"}', "message is required, e.g. {"),
        (b'{"message": null}', "message is required"),
        (b'{"message": 42}', "message must be a string, got a number"),
        (b'{"message": " \\n "}', "message is empty"),
        (b'{"message": "x", "priority": true}', "priority must be a string, got a"),
        (
            b'{"message": "x", "priority": "urgent"}',
            "priority must be one of critical, high, normal, low, got 'urgent'",
        ),
        (b'{"message": "x", "category": ["a"]}', "category must be a string, got an"),
        (b'{"message": "x", "source": {}}', "source must be a string, got an object"),
        (b'{"message": "x", "dedup_key": 1}', "dedup_key must be a string, got a"),
        (b'{"message": "x", "ttl": "60"}', "ttl must be a positive number of sec"),
        (b'{"message": "x", "ttl": 0}', "ttl must be a positive number of seconds"),
        (b'{"message": "x", "ttl": -5}', f"{POSITIVE}, got -5"),
        (b'{"message": "x", "ttl": true}', f"{POSITIVE}, got true"),
        (b'{"message": "x", "ttl": 1e999}', f"{POSITIVE}, got Infinity"),
        (b'{"message": "x", "ttl": 1' + b"0" * 400 + b"}", "ttl must be a positive"),
    ],
)
def test_a_bad_line_says_what_is_wrong(line: bytes, error: str) -> None:
    with pytest.raises(LineError) as err:
        parse_line(line)
    assert str(err.value).startswith(error)


# -- the rate ---------------------------------------------------------------------------


def test_the_bucket_takes_ten_at_once_then_one_a_second() -> None:
    clock = Clock()
    bucket = TokenBucket(10, 10.0, clock)
    assert [bucket.take() for _ in range(10)] == [0.0] * 10
    assert bucket.take() == 1.0  # the next token in a second
    clock.now += 0.25
    assert bucket.take() == 0.75  # refused lines take nothing
    clock.now += 0.75
    assert bucket.take() == 0.0
    assert bucket.take() == 1.0
    clock.now += 3.5
    assert [bucket.take() for _ in range(3)] == [0.0] * 3
    assert bucket.take() == 0.5
    clock.now += 60.0  # a long pause fills it, never beyond 10
    assert [bucket.take() for _ in range(10)] == [0.0] * 10
    assert bucket.take() == 1.0


async def test_the_socket_answers_over_the_rate_with_when_to_try_again(
    tmp_path: Path,
) -> None:
    clock, forward = Clock(), Recorder()
    path = short_path(tmp_path)
    async with serving(path, forward, clock), connect(path) as client:
        first = [await client.ask({"message": f"n{n}"}) for n in range(RATE_LINES)]
        over = await client.ask({"message": "one too many"})
        bad_over = await client.ask("not even JSON")  # every line counts
        clock.now += 0.5
        still = await client.ask({"message": "still too soon"})
        clock.now += 0.5
        again = await client.ask({"message": "again"})

    assert all(answer["ok"] is True for answer in first)
    assert over == {
        "ok": False,
        "error": "over the rate limit of 10 lines per 10 s; try again in 1.0 s",
    }
    assert bad_over == over
    assert still["error"] == (
        "over the rate limit of 10 lines per 10 s; try again in 0.5 s"
    )
    assert again["ok"] is True
    assert [a.data["message"] for a in forward.sent] == [
        *(f"n{n}" for n in range(RATE_LINES)),
        "again",
    ]


async def test_refusals_in_a_flood_log_one_warning_per_ten_seconds(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    path = short_path(tmp_path)
    caplog.set_level(logging.DEBUG, "voicestack_satellite.announce_socket")
    async with serving(path, Recorder(), clock), connect(path) as client:
        for n in range(RATE_LINES + 5):
            await client.ask({"message": f"n{n}"})
        clock.now += QUIET_LOG_S - 1.0
        await client.ask({"message": "x"})  # a token again, sent
        for _ in range(RATE_LINES):
            await client.ask({"message": "y"})  # 9 sent, then refused
        clock.now += 1.0  # ten seconds after the first warning
        await client.ask({"message": "z"})  # a token again
        await client.ask({"message": "z"})

    refusals = [
        (r.levelname, r.getMessage())
        for r in caplog.records
        if "over the rate limit" in r.getMessage()
    ]
    # 5 refused at 1000 s, 2 at 1009 s, 1 at 1010 s: a warning, 6 quiet, a warning.
    assert [level for level, _ in refusals] == ["WARNING", *["DEBUG"] * 6, "WARNING"]
    assert refusals[-1][1].endswith(
        "try again in 1.0 s (6 more refused since, logged at debug level)"
    )


# -- the socket -------------------------------------------------------------------------


async def test_each_line_gets_one_answer(tmp_path: Path) -> None:
    forward = Recorder()
    path = short_path(tmp_path)
    async with serving(path, forward, Clock()), connect(path) as client:
        sent = await client.ask({"message": "Dinner is ready.", "category": "general"})
        bad = await client.ask('{"message": "x", "volume": 11}')
        forward.refusal = NOT_RUN
        away = await client.ask({"message": "Anyone there?"})
        forward.refusal = None
        # Two lines in one write, the last without its newline and then the end.
        client.writer.write(b'{"message": "one"}\n{"message": "two"}')
        client.writer.write_eof()
        both = [await client.answer(), await client.answer()]
        assert await client.closed()

    assert sent["ok"] is True
    assert bad == {
        "ok": False,
        "error": "unknown field(s) 'volume'; allowed: message, priority, category, "
        "source, dedup_key, ttl",
    }
    assert away == {"ok": False, "error": NOT_RUN}
    assert [a["ok"] for a in both] == [True, True]
    ids = [sent["id"], *(a["id"] for a in both)]
    assert [a.data["id"] for a in forward.sent] == ids
    assert len(set(ids)) == 3
    assert forward.sent[0].type == protocol.ANNOUNCE
    assert forward.sent[0].data == {
        "id": sent["id"],
        "message": "Dinner is ready.",
        "category": "general",
    }


async def test_a_line_over_the_limit_is_answered_and_the_connection_closed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    forward = Recorder()
    path = short_path(tmp_path)
    # Exactly at the limit (padding inside the JSON text) is fine.
    at_limit = b'{"message": "x"}'.ljust(MAX_LINE_BYTES)
    async with serving(path, forward, Clock()):
        async with connect(path) as client:
            fits = await client.ask(at_limit)
            too_long = await client.ask(at_limit + b" ")
            closed = await client.closed()
        async with connect(path) as client:  # a new connection is served
            after = await client.ask({"message": "y"})

    assert fits["ok"] is True
    assert too_long == {
        "ok": False,
        "error": "line longer than 4096 bytes; closing the connection",
    }
    assert closed
    assert after["ok"] is True
    assert "refused a line from pid" in caplog.text
    assert "line longer than 4096 bytes" in caplog.text


# -- idle connections and places (virtual time: every time is exact) ------------------


def test_four_idle_connections_do_not_lock_out_a_fifth(tmp_path: Path) -> None:
    """Four connections that never wrote held every place for as long as they stayed."""
    path = short_path(tmp_path)
    forward = Recorder()

    async def scenario() -> tuple[object, ...]:
        loop = asyncio.get_running_loop()
        async with serving(path, forward, loop.time):
            idle = [await open_client(path) for _ in range(MAX_CONNECTIONS)]
            await asyncio.sleep(1.0)
            async with connect(path) as fifth:
                sent = await fifth.ask({"message": "Someone is at the door."})
                sent_at = loop.time()
            pushed_out = (await idle[0].answer(), loop.time(), await idle[0].closed())
            dropped = [
                (await c.answer(), loop.time(), await c.closed()) for c in idle[1:]
            ]
            for client in idle:
                await client.close()
        return sent, sent_at, pushed_out, dropped

    sent, sent_at, pushed_out, dropped = virtual_time.run(scenario())

    assert sent["ok"] is True
    assert sent_at == 1.0  # at once
    assert [a.data["message"] for a in forward.sent] == ["Someone is at the door."]
    # The one that had waited longest made room; the others went when idle 5 s.
    assert pushed_out == (EVICTED, 1.0, True)
    assert dropped == [(IDLE, IDLE_TIMEOUT_S, True)] * 3


async def _trickle(writer: asyncio.StreamWriter, line: bytes, every_s: float) -> None:
    """``line`` one byte every ``every_s``: never silent for long, slow to finish."""
    for byte in line:
        await asyncio.sleep(every_s)
        writer.write(bytes([byte]))


def test_each_line_must_be_finished_within_the_idle_timeout(tmp_path: Path) -> None:
    """The 5 s are for a whole line, from the connect or the last answer."""
    path = short_path(tmp_path)
    forward = Recorder()
    line = b'{"message": "slow"}\n'  # 20 bytes

    async def scenario() -> tuple[object, ...]:
        loop = asyncio.get_running_loop()
        async with serving(path, forward, loop.time):
            async with connect(path) as in_time, connect(path) as too_slow:
                # 20 bytes in 4 s: taken. 20 bytes in 6 s: cut at 5 s.
                trickles = [
                    asyncio.create_task(_trickle(in_time.writer, line, 0.2)),
                    asyncio.create_task(_trickle(too_slow.writer, line, 0.3)),
                ]
                slow = [(await c.answer(), loop.time()) for c in (in_time, too_slow)]
                for trickle in trickles:
                    trickle.cancel()
            async with connect(path) as steady:
                start = loop.time()
                answers = []
                for n in range(15):  # a line every 4 s for a minute
                    answers.append(await steady.ask({"message": f"n{n}"}))
                    await asyncio.sleep(4.0)
                last = (await steady.answer(), loop.time() - start)
        return slow, answers, last

    slow, answers, last = virtual_time.run(scenario())

    assert slow == [
        ({"ok": True, "id": slow[0][0]["id"]}, pytest.approx(4.0)),
        (IDLE, pytest.approx(IDLE_TIMEOUT_S)),
    ]
    assert [a["ok"] for a in answers] == [True] * 15
    assert last == (IDLE, pytest.approx(56.0 + IDLE_TIMEOUT_S))  # after the last answer
    assert [a.data["message"] for a in forward.sent] == [
        "slow",
        *(f"n{n}" for n in range(15)),
    ]


HOLDER = """
import json, socket, sys
socks = [socket.socket(socket.AF_UNIX) for _ in range(int(sys.argv[2]))]
for sock in socks:
    sock.settimeout(10)
    sock.connect(sys.argv[1])
print("connected", flush=True)
sys.stdin.read()
print(json.dumps([sock.makefile("rb").read().decode() for sock in socks]))
"""


def test_the_process_holding_the_most_places_makes_room(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Not simply the oldest: a process never pushes another out for its own."""
    path = short_path(tmp_path)
    forward = Recorder()

    async def scenario() -> tuple[object, ...]:
        loop = asyncio.get_running_loop()
        async with serving(path, forward, loop.time), connect(path) as mine:
            await asyncio.sleep(0.5)  # mine waits longest
            # Blocking: the virtual clock stands still meanwhile.
            holder = subprocess.Popen(
                [sys.executable, "-c", HOLDER, str(path), "3"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            holder_out, holder_in = holder.stdout, holder.stdin
            assert holder_out is not None
            assert holder_in is not None
            assert holder_out.readline() == "connected\n"
            async with connect(path) as newcomer:
                new = await newcomer.ask({"message": "new"})
                still = await mine.ask({"message": "still mine"})
        await asyncio.sleep(1.0)  # the loop runs until idle: the aborts are done
        holder_in.close()  # every connection is closed: all it got, to the end
        got = json.loads(holder_out.readline())
        holder.wait(10)
        return holder.pid, new, still, got

    pid, new, still, got = virtual_time.run(scenario())

    assert (new["ok"], still["ok"]) == (True, True)
    assert got == [json.dumps(EVICTED) + "\n", "", ""]  # its oldest; two cut at close
    assert (
        f"Announce socket: connection of pid {pid}, which waited 0.0 s for a line: "
        f"closed to make room for pid {os.getpid()} (4 at most)"
    ) in caplog.text


async def test_the_socket_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    path = short_path(tmp_path)
    old = os.umask(0)
    try:
        async with serving(path, Recorder(), Clock()):
            mode = path.lstat().st_mode
    finally:
        os.umask(old)

    assert stat.S_ISSOCK(mode)
    assert stat.S_IMODE(mode) == 0o600
    assert not path.exists()  # removed on close


async def test_a_stale_socket_is_replaced(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = short_path(tmp_path)
    with socket.socket(socket.AF_UNIX) as left_behind:  # bound, never listened
        left_behind.bind(str(path))
    caplog.set_level(logging.INFO, "voicestack_satellite.announce_socket")
    async with serving(path, Recorder(), Clock()), connect(path) as client:
        answer = await client.ask({"message": "Still here."})

    assert answer["ok"] is True
    assert f"Replacing the stale announce socket {path}" in caplog.text


async def test_a_socket_in_use_or_a_file_is_never_replaced(tmp_path: Path) -> None:
    path = short_path(tmp_path)
    with socket.socket(socket.AF_UNIX) as other:
        other.bind(str(path))
        other.listen()
        with pytest.raises(AnnounceSocketError, match="is in use by another process"):
            await AnnounceSocket(
                path, Recorder(), clock=Clock(), write_timeout_s=1.0
            ).start()
    path.unlink()
    path.write_text("notes")
    with pytest.raises(AnnounceSocketError, match="exists and is not a socket"):
        await AnnounceSocket(path, Recorder(), clock=Clock(), write_timeout_s=1).start()
    assert path.read_text() == "notes"


def test_the_option_is_checked(tmp_path: Path) -> None:
    base = ["--name", "x", "--mic-stdin", "--snd-file", "o.wav"]
    settings = load([*base, "--announce-socket", str(tmp_path / "a.sock")])
    assert settings.announce_socket == tmp_path / "a.sock"
    assert load(base).announce_socket is None
    (tmp_path / "file").write_text("")
    cases = {
        str(tmp_path / "missing" / "a.sock"): "folder .*missing does not exist",
        str(tmp_path / "file"): "exists and is not a socket; refusing to replace it",
        str(
            tmp_path / ("x" * 110)
        ): r"too long for a Unix socket \(at most 107 bytes\)",
    }
    for path, message in cases.items():
        with pytest.raises(SettingsError, match=message):
            load([*base, "--announce-socket", path])


# -- a real satellite -------------------------------------------------------------------


async def test_a_real_satellite_sends_lines_only_to_an_owner_that_asked(
    tmp_path: Path,
) -> None:
    path = short_path(tmp_path)
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    line = {"message": "Someone is at the door.", "priority": "high", "ttl": 60}
    args = ("--mic-file", str(wav), "--announce-socket", str(path))
    async with satellite(tmp_path, *args) as sat, connect(path) as client:
        mode = stat.S_IMODE(path.lstat().st_mode)
        unowned = await client.ask(line)
        async with sat.connect() as owner:
            # A VoiceStack that does not ask for announcements...
            await say_hello(owner, {"protocol": protocol.PROTOCOL_VERSION})
            not_asked = await client.ask(line)
            # ...and one that does (a hello may come at any time).
            await say_hello(
                owner,
                {"protocol": protocol.PROTOCOL_VERSION, "accepts": [protocol.ANNOUNCE]},
            )
            sent = await client.ask(line)
            event, _ = await read_until(owner, protocol.ANNOUNCE, 5)
        # The satellite sees the owner go when its connection ends; the
        # client's next line is answered after that.
        await wait_for(
            lambda: "disconnected; waiting for the next" in sat.log_text(),
            ANSWER_S,
            "the satellite to see its owner go",
        )
        after = await client.ask(line)
    gone = not path.exists()

    assert mode == 0o600
    assert unowned == {"ok": False, "error": NOT_RUN}
    assert not_asked == {"ok": False, "error": NOT_ASKED}
    assert sent["ok"] is True
    assert event.data == {"id": sent["id"], **line}
    assert after == unowned
    assert gone  # the satellite removes its socket when it stops


async def test_a_real_satellite_takes_a_fifth_script_past_four_idle_ones(
    tmp_path: Path,
) -> None:
    """Four idle connections kept every other script out for as long as they stayed."""
    path = short_path(tmp_path)
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    args = ("--mic-file", str(wav), "--announce-socket", str(path))
    async with satellite(tmp_path, *args) as sat:
        idle = [await open_client(path) for _ in range(MAX_CONNECTIONS)]
        async with connect(path) as fifth:
            answer = await fifth.ask({"message": "Someone is at the door."})
        pushed_out = await idle[0].answer()
        async with asyncio.timeout(IDLE_TIMEOUT_S + ANSWER_S):
            dropped = [await client.reader.read() for client in idle[1:]]
        for client in idle:
            await client.close()
        log = sat.log_text()

    assert answer == {"ok": False, "error": NOT_RUN}  # taken and answered
    assert pushed_out == EVICTED
    assert dropped == [json.dumps(IDLE).encode() + b"\n"] * 3
    assert f"closed to make room for pid {os.getpid()} (4 at most)" in log


async def say_hello(owner: AsyncTcpClient, hello: dict[str, object]) -> None:
    """Hello and run-satellite; the pong says the satellite has handled both."""
    await owner.write_event(Event(protocol.HELLO, hello))
    await owner.write_event(RunSatellite().event())
    await owner.write_event(Ping(text="hello read").event())
    await read_until(owner, "pong", 5)


def test_a_socket_in_use_stops_the_satellite_with_a_clear_error(
    tmp_path: Path,
) -> None:
    path = short_path(tmp_path)
    with socket.socket(socket.AF_UNIX) as other:
        other.bind(str(path))
        other.listen()
        result = subprocess.run(
            [
                *(*CLI, "--name", "x", "--mic-stdin", "--no-zeroconf"),
                *("--snd-file", str(tmp_path / "o.wav")),
                *("--uri", f"tcp://127.0.0.1:{servers.free_port()}"),
                *("--announce-socket", str(path)),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    assert result.returncode == 1
    assert f"{path} is in use by another process" in result.stderr
