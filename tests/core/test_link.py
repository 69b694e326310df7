"""SatelliteLink against the real satellite subprocess and against faulty peers.

The faulty peers are small asyncio servers on 127.0.0.1 that stand in for what a
real satellite never does on purpose: close at once, send garbage, never answer,
stop answering pings, stop reading. Backoff delays go through an injected
``sleep`` that records them and yields for a few milliseconds, so retries are
fast and their delays exact. Every wait polls a condition with a deadline.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
import itertools
import logging
from pathlib import Path
from typing import Any

import pytest
from wyoming.event import Event, async_read_event, async_write_event

from custom_components.voicestack.core import link as link_module
from custom_components.voicestack.core.backoff import Backoff
from custom_components.voicestack.core.link import SatelliteLink
from devstack import servers, speech
from devstack.reproducible import seeded
from devstack.satellite import RunningSatellite, satellite
from devstack.waiting import wait_for
from voicestack_protocol import parse_info

LOGGER_NAME = link_module.__name__
FAST = {"ping_interval_s": 0.2, "pong_timeout_s": 0.2, "connect_timeout_s": 0.5}
# The real satellite runs openWakeWord on every chunk; on a loaded machine it may
# answer later than a fake peer, so only the ping interval stays short.
REAL = {"ping_interval_s": 0.2, "pong_timeout_s": 3.0, "connect_timeout_s": 5.0}
SATELLITE_START_S = 30.0  # generous: a loaded CI machine loads openWakeWord slowly


# -- helpers ------------------------------------------------------------------


class RecordingListener:
    """A LinkListener that records every call, in order."""

    def __init__(self) -> None:
        """Nothing heard yet."""
        self.calls: list[tuple[str, Any]] = []

    def link_connected(self, info: Event) -> None:
        """Record the info event."""
        self.calls.append(("connected", info))

    def link_lost(self, reason: str) -> None:
        """Record the reason."""
        self.calls.append(("lost", reason))

    def link_event(self, event: Event) -> None:
        """Record the event."""
        self.calls.append(("event", event))

    def link_refused(self, reason: str) -> None:
        """Record the busy refusal."""
        self.calls.append(("refused", reason))

    def _of(self, kind: str) -> list[Any]:
        return [arg for call, arg in self.calls if call == kind]

    @property
    def connected(self) -> list[Event]:
        """Info events of each ``link_connected``."""
        return self._of("connected")

    @property
    def lost(self) -> list[str]:
        """Reasons of each ``link_lost``."""
        return self._of("lost")

    @property
    def events(self) -> list[Event]:
        """Events handed on."""
        return self._of("event")


class Sleeps:
    """The injected sleep: records each backoff delay and yields briefly."""

    def __init__(self) -> None:
        """No delays yet."""
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        """Record ``delay``; sleep a few milliseconds instead."""
        self.delays.append(delay)
        await asyncio.sleep(0.005)


@dataclass(slots=True)
class Linked:
    """A started link with its listener and recorded sleeps."""

    link: SatelliteLink
    listener: RecordingListener
    sleeps: Sleeps


@pytest.fixture
async def make_link() -> AsyncIterator[Callable[..., Linked]]:
    """Start links to 127.0.0.1 with fast timings; stop them all afterwards."""
    made: list[Linked] = []

    def _make(port: int, **options: Any) -> Linked:
        listener = RecordingListener()
        sleeps = Sleeps()
        settings: dict[str, Any] = {
            **FAST,
            "backoff": Backoff(rng=seeded(1)),
            "sleep": sleeps,
            **options,
        }
        link = SatelliteLink("127.0.0.1", port, listener, **settings)
        link.start()
        made.append(Linked(link, listener, sleeps))
        return made[-1]

    yield _make
    for linked in made:
        await linked.link.stop()


def link_records(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    """Messages the link logged at exactly ``level``."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == LOGGER_NAME and r.levelno == level
    ]


def real_satellite(tmp_path: Path) -> AbstractAsyncContextManager[RunningSatellite]:
    """The real satellite with a silent mic file, in its own folder."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    return satellite(tmp_path, "--mic-file", str(wav))


# -- fake peers ----------------------------------------------------------------


class PeerConnection:
    """The peer's side of one connection from the link."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        """Wrap an accepted connection."""
        self.reader = reader
        self.writer = writer
        self.received: list[Event] = []

    async def read(self) -> Event | None:
        """The next event from the link (None at EOF)."""
        event = await async_read_event(self.reader)
        if event is not None:
            self.received.append(event)
        return event

    async def expect(self, event_type: str) -> Event:
        """Read until ``event_type``; fail on EOF."""
        while (event := await self.read()) is not None:
            if event.type == event_type:
                return event
        raise ConnectionError(f"link closed before {event_type}")

    async def send(self, event: Event) -> None:
        """Write one event to the link."""
        await async_write_event(event, self.writer)

    async def drain_until_eof(self) -> None:
        """Read (and ignore) everything until the link closes."""
        while await self.read() is not None:
            pass


Script = Callable[[PeerConnection, int], Awaitable[None]]


def info_event(*, voicestack: bool = True) -> Event:
    """An ``info`` like a satellite's, with or without the VoiceStack block."""
    data: dict[str, Any] = {
        "satellite": {
            "name": "fake",
            "attribution": {"name": "", "url": ""},
            "installed": True,
            "description": "fake satellite",
            "version": "1.0",
        }
    }
    if voicestack:
        data["voicestack"] = {
            "id": "fake-1",
            "protocol": 1,
            "sends": ["voicestack-progress"],
            "accepts": ["voicestack-flush"],
        }
    return Event("info", data)


async def handshake(
    peer: PeerConnection, *, early: tuple[Event, ...] = (), voicestack: bool = True
) -> None:
    """Answer describe, accept run-satellite, answer the confirming ping."""
    await peer.expect("describe")
    await peer.send(info_event(voicestack=voicestack))
    await peer.expect("run-satellite")
    ping = await peer.expect("ping")
    for event in early:
        await peer.send(event)
    await peer.send(Event("pong", {"text": ping.data.get("text")}))


async def serve_pings(peer: PeerConnection) -> None:
    """Answer every ping until the link closes."""
    while (event := await peer.read()) is not None:
        if event.type == "ping":
            await peer.send(Event("pong", {"text": event.data.get("text")}))


@dataclass
class FakePeer:
    """A server on 127.0.0.1 running ``script`` for each connection."""

    script: Script
    port: int = 0
    connections: list[PeerConnection] = field(default_factory=list)
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[Any]] = field(default_factory=set)

    async def __aenter__(self) -> FakePeer:
        """Listen on a free port."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Stop listening, drop connections, end the scripts."""
        assert self._server is not None
        self._server.close()
        for conn in self.connections:
            conn.writer.transport.abort()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks)
        await self._server.wait_closed()

    async def _handle(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        peer = PeerConnection(reader, writer)
        self.connections.append(peer)
        try:
            await self.script(peer, len(self.connections))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the link dropped us: that is what these tests provoke
        finally:
            writer.transport.abort()
            self._tasks.discard(task)


# -- the real satellite ----------------------------------------------------------


async def test_connects_to_the_real_satellite_and_runs_it(
    tmp_path: Path, make_link: Callable[..., Linked]
) -> None:
    async with real_satellite(tmp_path) as sat:
        linked = make_link(sat.port, **REAL)
        link = linked.link

        assert await link.wait_connected(SATELLITE_START_S)
        assert link.connected
        assert link.info is not None
        assert linked.listener.connected == [link.info]
        block = parse_info(link.info.data)
        assert block is not None
        assert block.id.endswith(f"-{sat.port}")
        assert link.supports("voicestack-flush")
        assert not link.supports("voicestack-preroll")  # the satellite sends that
        assert not link.supports("no-such-event")
        # The satellite took us as its owner (run-satellite) ...
        await wait_for(lambda: "Run by 127.0.0.1" in sat.log_text(), 5.0, "Run by")
        # ... and answers our pings.
        await wait_for(lambda: link.stats.pings_sent >= 3, 5.0, "three pings")
        assert await link.send(Event("voicestack-flush"))
        await link.stop()

    assert linked.listener.lost == []  # stop() is not a lost connection
    stats = link.stats
    assert stats.connects == 1
    assert stats.last_rtt_ms is not None
    assert 0 <= stats.last_rtt_ms < 1000


async def test_a_second_link_is_refused_as_busy_and_keeps_retrying(
    tmp_path: Path,
    make_link: Callable[..., Linked],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER_NAME)
    async with real_satellite(tmp_path) as sat:
        first = make_link(sat.port, name="first", **REAL)
        assert await first.link.wait_connected(SATELLITE_START_S)
        second = make_link(sat.port, name="second", **REAL)

        await wait_for(lambda: len(second.sleeps.delays) >= 3, 5.0, "three retries")

        assert first.link.connected
        assert first.listener.lost == []
        assert not second.link.connected
        last_error = second.link.stats.last_error
        assert last_error is not None
        # Told once (a repair issue in HA), never connected, so never lost.
        assert [call for call, _ in second.listener.calls] == ["refused"]
        assert last_error.startswith("busy: satellite already run by 127.0.0.1:")
        await second.link.stop()
        await first.link.stop()

    warnings = link_records(caplog, logging.WARNING)
    assert warnings == [
        (
            f"Satellite second is run by another connection ({last_error}); remove "
            "it from the other integration (e.g. Wyoming) so VoiceStack can run it"
        )
    ]
    retries = [
        m
        for m in link_records(caplog, logging.DEBUG)
        if m.startswith("Attempt ") and "to reach second" in m
    ]
    assert len(retries) >= 2
    # Every refusal is recognised, none mistaken for a dropped connection.
    assert all(": busy: satellite already run by" in m for m in retries)


async def test_a_restarted_satellite_is_reconnected_with_backoff(
    tmp_path: Path,
    make_link: Callable[..., Linked],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    port = servers.free_port()
    monkeypatch.setattr(servers, "free_port", lambda: port)  # same port twice
    async with real_satellite(tmp_path / "first") as sat:
        linked = make_link(port, backoff=Backoff(rng=seeded(5)), **REAL)
        assert await linked.link.wait_connected(SATELLITE_START_S)
        assert linked.sleeps.delays == []

        sat.process.terminate()
        await asyncio.to_thread(sat.process.wait, 10)
        await wait_for(lambda: linked.listener.lost != [], 5.0, "link_lost")
        await wait_for(lambda: len(linked.sleeps.delays) >= 3, 5.0, "three retries")
        assert not linked.link.connected

    async with real_satellite(tmp_path / "second") as sat:
        assert sat.port == port
        await wait_for(
            lambda: len(linked.listener.connected) == 2, SATELLITE_START_S, "reconnect"
        )
        await linked.link.stop()

    listener = linked.listener
    assert [call for call, _arg in listener.calls if call != "event"] == [
        "connected",
        "lost",
        "connected",
    ]
    delays = linked.sleeps.delays
    reference = Backoff(rng=seeded(5))
    assert delays == [reference.next_delay() for _ in delays]
    assert link_records(caplog, logging.WARNING) == [
        (
            f"Lost connection to satellite 127.0.0.1:{port}: {listener.lost[0]}; "
            "reconnecting in the background"
        )
    ]
    assert link_records(caplog, logging.INFO)[-1] == (
        f"Satellite 127.0.0.1:{port} reconnected after {len(delays)} attempts"
    )
    stats = linked.link.stats
    assert (stats.connects, stats.disconnects) == (2, 1)


# -- faulty peers ---------------------------------------------------------------


async def close_at_once(peer: PeerConnection, _n: int) -> None:
    """Accept, then hang up."""
    peer.writer.close()


async def test_a_peer_that_closes_at_once_is_retried(
    make_link: Callable[..., Linked], caplog: pytest.LogCaptureFixture
) -> None:
    async with FakePeer(close_at_once) as peer:
        linked = make_link(peer.port)
        await wait_for(lambda: len(peer.connections) >= 3, 5.0, "three connections")
        await wait_for(lambda: len(linked.sleeps.delays) >= 3, 5.0, "three retries")
        await linked.link.stop()

    assert linked.listener.calls == []
    assert not linked.link.connected
    assert linked.link.stats.last_error is not None
    assert link_records(caplog, logging.WARNING) == []
    infos = link_records(caplog, logging.INFO)
    assert len(infos) == 1
    assert infos[0].startswith("Cannot reach satellite 127.0.0.1:")


INVALID = "invalid data from the satellite: "


@pytest.mark.parametrize(
    ("garbage", "error"),
    [
        (b"not json\n", INVALID + "event header is not JSON: b'not json\\n'"),
        (b"[1, 2]\n", INVALID + "event header has no type: b'[1, 2]\\n'"),
        (b'{"data": {}}\n', INVALID + "event header has no type"),
        (b'{"type": 5}\n', INVALID + "event header has no type"),
        (
            b'{"type": "info", "data_length": "x"}\n',
            INVALID + "info: data_length 'x' is not a size",
        ),
        (b'{"type": "info", "data": 3}\n', INVALID + "info: data is not an object"),
        (
            b'{"type": "info", "data_length": 2000000000}\n',
            INVALID + "info: data_length 2000000000 exceeds the limit of 262144 bytes",
        ),
        (
            b'{"type": "info", "data": {"x": "' + b"x" * (1 << 16) + b'"}}\n',
            INVALID + "event header longer than 65536 bytes",
        ),
        (
            b'{"type": "info", "data_length": 200000}\n'
            + b"[" * 100_000
            + b"]" * 100_000,
            INVALID + "info: data is not JSON",
        ),
        (
            b'{"type": "info", "data": {"satellite": {"name": "x"}}}\n',
            "invalid info from the satellite: TypeError",
        ),
    ],
    ids=[
        "not json",
        "a list",
        "no type",
        "a type that is a number",
        "a length that is text",
        "data that is a number",
        "a huge data_length",
        "a header over 64 KiB",
        "data nested 100,000 deep",
        "info that wyoming cannot read",
    ],
)
async def test_garbage_during_the_handshake_is_retried(
    make_link: Callable[..., Linked], garbage: bytes, error: str
) -> None:
    async def send_garbage(peer: PeerConnection, _n: int) -> None:
        peer.writer.write(garbage)
        await peer.drain_until_eof()

    async with FakePeer(send_garbage) as peer:
        linked = make_link(peer.port)
        await wait_for(lambda: len(peer.connections) >= 2, 5.0, "a retry")
        await linked.link.stop()

    assert linked.listener.calls == []
    last_error = linked.link.stats.last_error
    assert last_error is not None
    assert last_error.startswith(error)


async def test_a_huge_payload_length_drops_the_peer_before_its_body_is_read(
    make_link: Callable[..., Linked],
) -> None:
    """The reproduction of issue 12 item 8: HA's RSS went 110 -> 1,135 MB in 5 s.

    The peer announces a 2 GB audio chunk and streams it without end. The link
    refuses it at the header: wyoming's reader read (and kept) all it was sent.
    Keepalive pings are off, so only the length check can end this connection.
    """
    header = (
        b'{"type": "audio-chunk", "data": {"rate": 16000, "width": 2, '
        b'"channels": 1}, "payload_length": 2000000000}\n'
    )

    async def hostile(peer: PeerConnection, n: int) -> None:
        await handshake(peer)
        if n > 1:
            await serve_pings(peer)
            return
        peer.writer.write(header)
        while True:  # until the link drops us (ConnectionError)
            peer.writer.write(bytes(64 * 1024))
            await peer.writer.drain()

    async with FakePeer(hostile) as peer:
        linked = make_link(peer.port, ping_interval_s=60.0)
        await wait_for(lambda: linked.listener.lost != [], 5.0, "link_lost")
        await linked.link.stop()

    assert linked.listener.lost == [
        INVALID
        + "audio-chunk: payload_length 2000000000 exceeds the limit of 262144 bytes"
    ]
    assert linked.listener.events == []  # nothing of it was handed on


async def test_garbage_while_connected_loses_the_link_once_and_reconnects(
    make_link: Callable[..., Linked], caplog: pytest.LogCaptureFixture
) -> None:
    async def garbage_once(peer: PeerConnection, n: int) -> None:
        await handshake(peer)
        if n == 1:
            peer.writer.write(b"not json\n")
        await serve_pings(peer)

    async with FakePeer(garbage_once) as peer:
        linked = make_link(peer.port)
        await wait_for(lambda: len(linked.listener.connected) == 2, 5.0, "reconnect")
        await linked.link.stop()

    assert linked.listener.lost == [
        INVALID + "event header is not JSON: b'not json\\n'"
    ]
    assert linked.sleeps.delays == [pytest.approx(0.567, abs=1e-3)]  # Random(1)
    assert len(link_records(caplog, logging.WARNING)) == 1
    assert link_records(caplog, logging.INFO)[-1] == (
        f"Satellite 127.0.0.1:{peer.port} reconnected after 1 attempt"
    )


async def test_a_peer_that_never_answers_describe_times_out(
    make_link: Callable[..., Linked],
) -> None:
    async def silent(peer: PeerConnection, _n: int) -> None:
        await peer.drain_until_eof()

    async with FakePeer(silent) as peer:
        linked = make_link(peer.port)
        await wait_for(lambda: len(peer.connections) >= 2, 5.0, "a retry")
        await linked.link.stop()

    assert linked.listener.calls == []
    assert linked.link.stats.last_error == "timed out waiting for info (0.5 s)"
    assert [event.type for event in peer.connections[0].received] == ["describe"]


async def test_a_peer_that_stops_answering_pings_is_declared_dead(
    make_link: Callable[..., Linked],
) -> None:
    async def deaf(peer: PeerConnection, _n: int) -> None:
        await handshake(peer)
        await peer.drain_until_eof()  # pings go unanswered

    async with FakePeer(deaf) as peer:
        linked = make_link(peer.port)
        await wait_for(lambda: len(linked.listener.connected) >= 2, 5.0, "reconnect")
        await linked.link.stop()

    listener = linked.listener
    assert listener.lost[0] == "no pong within 0.2 s"
    # One link_lost per connection, never two in a row.
    kinds = [call for call, _arg in listener.calls]
    assert kinds[:3] == ["connected", "lost", "connected"]
    assert all(a != b for a, b in itertools.pairwise(kinds))
    pings = [e for e in peer.connections[0].received if e.type == "ping"]
    assert len(pings) == 2  # the run-satellite confirmation and one keepalive


async def test_pings_from_the_satellite_are_answered_and_events_handed_on(
    make_link: Callable[..., Linked],
) -> None:
    answered: list[Event] = []
    progress = Event("voicestack-progress", {"stream": "1", "played": 0})

    async def chatty(peer: PeerConnection, _n: int) -> None:
        await handshake(peer, early=(progress,))  # sent before the confirming pong
        await peer.send(Event("ping", {"text": "are you there"}))
        answered.append(await peer.expect("pong"))
        await peer.send(Event("info", {"satellite": {"name": "renamed"}}))
        await peer.send(Event("played"))
        await serve_pings(peer)

    async with FakePeer(chatty) as peer:
        linked = make_link(peer.port)
        await wait_for(lambda: len(linked.listener.events) == 3, 5.0, "three events")
        assert linked.link.info is not None
        assert linked.link.info.data["satellite"]["name"] == "renamed"
        await linked.link.stop()

    assert answered[0].data == {"text": "are you there"}
    calls = [(call, getattr(arg, "type", arg)) for call, arg in linked.listener.calls]
    assert calls == [
        ("connected", "info"),
        ("event", "voicestack-progress"),
        ("event", "ping"),
        ("event", "played"),
    ]


async def test_send_delivers_events_and_supports_reads_the_block(
    make_link: Callable[..., Linked],
) -> None:
    async def stock(peer: PeerConnection, _n: int) -> None:
        await handshake(peer, voicestack=False)
        await serve_pings(peer)

    async with FakePeer(stock) as peer:
        linked = make_link(peer.port)
        assert await linked.link.wait_connected(5)
        assert await linked.link.send(Event("transcript", {"text": "hello"}))
        await wait_for(
            lambda: any(e.type == "transcript" for e in peer.connections[0].received),
            5.0,
            "the transcript",
        )
        assert not linked.link.supports("voicestack-flush")  # a stock satellite
        await linked.link.stop()

    sent = [e for e in peer.connections[0].received if e.type == "transcript"]
    assert sent[0].data == {"text": "hello"}


async def test_send_while_disconnected_returns_false(
    make_link: Callable[..., Linked],
) -> None:
    idle = SatelliteLink("127.0.0.1", servers.free_port(), RecordingListener())
    assert not await idle.send(Event("voicestack-flush"))  # never started
    assert not await idle.wait_connected(0.01)

    linked = make_link(servers.free_port())  # nothing listens there
    await wait_for(lambda: len(linked.sleeps.delays) >= 2, 5.0, "two retries")
    assert not linked.link.connected
    assert not await linked.link.send(Event("voicestack-flush"))
    assert linked.link.stats.last_error is not None
    assert linked.link.stats.last_error.startswith("cannot connect: ")


async def test_stop_is_idempotent_and_leaves_no_tasks() -> None:
    before = asyncio.all_tasks()

    async def good(peer: PeerConnection, _n: int) -> None:
        await handshake(peer)
        await serve_pings(peer)

    async with FakePeer(good) as peer:
        link = SatelliteLink("127.0.0.1", peer.port, RecordingListener(), **FAST)
        try:
            await link.stop()  # before start: nothing to do
            link.start()
            link.start()  # already running: no second task
            names = [task.get_name() for task in asyncio.all_tasks()]
            assert names.count(f"voicestack link {link.name}") == 1
            assert await link.wait_connected(5)
            await wait_for(lambda: link.stats.pings_sent >= 2, 5.0, "a keepalive ping")
            await asyncio.gather(link.stop(), link.stop())
            assert not link.connected
            assert link.stats.connected_since is None
            await link.stop()
            await wait_for(peer.connections[0].reader.at_eof, 5.0, "socket closed")
        finally:
            await link.stop()

    assert asyncio.all_tasks() == before


async def test_stop_during_a_long_backoff_returns_at_once() -> None:
    before = asyncio.all_tasks()
    link = SatelliteLink(
        "127.0.0.1",
        servers.free_port(),
        RecordingListener(),
        **FAST,
        backoff=Backoff(base_s=60.0, cap_s=60.0),  # real asyncio.sleep
    )
    link.start()
    try:
        await wait_for(
            lambda: link.stats.last_error is not None, 5.0, "a failed attempt"
        )
        async with asyncio.timeout(1.0):
            await link.stop()
    finally:
        await link.stop()

    assert asyncio.all_tasks() == before


async def test_a_stuck_write_cannot_block_stop(
    make_link: Callable[..., Linked],
) -> None:
    async def never_reads(peer: PeerConnection, _n: int) -> None:
        await handshake(peer)
        await asyncio.Event().wait()  # until the test ends: the link's writes pile up

    chunk = Event("audio-chunk", {"rate": 16000, "width": 2, "channels": 1})
    chunk.payload = bytes(1 << 20)
    in_flight = asyncio.Event()

    async with FakePeer(never_reads) as peer:
        linked = make_link(peer.port, ping_interval_s=60.0)
        assert await linked.link.wait_connected(5)

        async def flood() -> int:
            sent = 0
            while True:
                in_flight.set()
                if not await linked.link.send(chunk):
                    return sent
                in_flight.clear()
                sent += 1

        flooding = asyncio.create_task(flood())

        def stuck() -> bool:
            conn = linked.link._conn
            return (
                in_flight.is_set()
                and conn is not None
                # Over the high-water mark (64 KiB): drain() waits for the peer.
                and conn._writer.transport.get_write_buffer_size() > 64 * 1024
            )

        await wait_for(stuck, 5.0, "a blocked write")
        async with asyncio.timeout(1.0):
            await linked.link.stop()
            sent = await flooding

    assert sent > 0
    assert not linked.link.connected
