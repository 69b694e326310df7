"""The one bounded Wyoming reader both ends use, over real loopback sockets.

A peer here is an asyncio server on 127.0.0.1 that writes given bytes, the way a
hostile or broken device on the network would; the reader is opened as Home
Assistant's link and ``describe`` open theirs (``limit=MAX_HEADER_BYTES``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
from wyoming.event import Event, async_write_event

from voicestack_protocol.wire import MAX_HEADER_BYTES, ProtocolError, read_event

LIMIT = 4096  # max_payload in these tests


@asynccontextmanager
async def peer_sending(data: bytes) -> AsyncIterator[asyncio.StreamReader]:
    """A reader connected to a peer that writes ``data`` and then closes."""

    async def handle(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        writer.write(data)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, limit=MAX_HEADER_BYTES
    )
    try:
        yield reader
    finally:
        writer.transport.abort()
        server.close()
        await server.wait_closed()


class _Bytes:
    """Collects what ``async_write_event`` writes: the wire bytes of events."""

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def writelines(self, data: list[bytes]) -> None:
        self.data += b"".join(data)

    async def drain(self) -> None:
        """Nothing to wait for."""


async def encoded(*events: Event) -> bytes:
    """``events`` exactly as wyoming writes them."""
    out = _Bytes()
    for event in events:
        await async_write_event(event, out)  # type: ignore[arg-type]
    return out.data


async def test_wyoming_events_are_read_back_whole_and_then_the_end() -> None:
    chunk = Event(
        "audio-chunk", {"rate": 16000, "width": 2, "channels": 1}, bytes(range(200))
    )
    info = Event("info", {"satellite": {"name": "kitchen"}, "voicestack": {"id": "k"}})
    async with peer_sending(await encoded(chunk, info, Event("ping"))) as reader:
        events = [await read_event(reader, LIMIT) for _ in range(3)]
        end = await read_event(reader, LIMIT)

    assert [(e.type, e.data, e.payload) for e in events] == [
        ("audio-chunk", chunk.data, chunk.payload),
        ("info", info.data, None),
        ("ping", {}, None),
    ]
    assert end is None


async def test_data_in_the_header_and_in_the_data_segment_are_merged() -> None:
    raw = b'{"type": "x", "data": {"a": 1, "b": 1}, "data_length": 8}\n{"b": 2}'
    async with peer_sending(raw) as reader:
        event = await read_event(reader, LIMIT)

    assert event is not None
    assert event.data == {"a": 1, "b": 2}


async def test_a_length_over_the_limit_is_refused_before_the_body_is_read() -> None:
    """Nothing of what the header announces is read: the body is still unread."""
    header = b'{"type": "audio-chunk", "payload_length": 2000000000}\n'
    body = b"body" + bytes(LIMIT * 4)
    async with peer_sending(header + body) as reader:
        with pytest.raises(ProtocolError) as refused:
            await read_event(reader, LIMIT)
        unread = await reader.read()

    assert str(refused.value) == (
        "audio-chunk: payload_length 2000000000 exceeds the limit of 4096 bytes"
    )
    assert unread == body


async def test_a_length_at_the_limit_is_read() -> None:
    raw = b'{"type": "audio-chunk", "payload_length": 4096}\n' + bytes(LIMIT)
    async with peer_sending(raw) as reader:
        event = await read_event(reader, LIMIT)

    assert event is not None
    assert event.payload == bytes(LIMIT)


async def test_a_header_line_over_the_limit_is_refused() -> None:
    raw = b'{"type": "info", "data": {"x": "' + b"x" * MAX_HEADER_BYTES + b'"}}\n'
    async with peer_sending(raw) as reader:
        with pytest.raises(ProtocolError, match="event header longer than 65536"):
            await read_event(reader, LIMIT)


MALFORMED = {
    "not json": (b"not json\n", "event header is not JSON: b'not json\\n'"),
    "not utf-8": (b'{"type": "\xff"}\n', "event header is not JSON"),
    "a list": (b"[1, 2]\n", "event header has no type: b'[1, 2]\\n'"),
    "no type": (b'{"data": {}}\n', "event header has no type"),
    "a type that is a number": (b'{"type": 7}\n', "event header has no type"),
    "data that is a number": (b'{"type": "x", "data": 3}\n', "x: data is not an"),
    "a length that is text": (
        b'{"type": "x", "payload_length": "9"}\n',
        "x: payload_length '9' is not a size",
    ),
    "a negative length": (
        b'{"type": "x", "data_length": -3}\n',
        "x: data_length -3 is not a size",
    ),
    "a length that is true": (
        b'{"type": "x", "data_length": true}\n',
        "x: data_length True is not a size",
    ),
    "a fractional length": (
        b'{"type": "x", "payload_length": 1.5}\n',
        "x: payload_length 1.5 is not a size",
    ),
    "a data segment that is not JSON": (
        b'{"type": "x", "data_length": 3}\nabc',
        "x: data is not JSON: b'abc'",
    ),
    "a data segment that is a list": (
        b'{"type": "x", "data_length": 2}\n[]',
        "x: data is not an object",
    ),
    # Deeper than any Python's parser goes (3.14 parses 30,000 levels).
    "a data segment nested 100,000 deep": (
        b'{"type": "x", "data_length": 200000}\n' + b"[" * 100_000 + b"]" * 100_000,
        "x: data is not JSON",
    ),
    "the end inside a header": (b'{"type": "x"', "in the middle of an event header"),
    "the end inside a payload": (
        b'{"type": "x", "payload_length": 10}\n12345',
        "x: connection closed mid-event",
    ),
}


@pytest.mark.parametrize(
    ("raw", "reason"), MALFORMED.values(), ids=list(MALFORMED.keys())
)
async def test_malformed_framing_is_refused_with_the_reason(
    raw: bytes, reason: str
) -> None:
    async with peer_sending(raw) as reader:
        with pytest.raises(ProtocolError) as refused:
            await read_event(reader, 256 * 1024)

    assert reason in str(refused.value)
