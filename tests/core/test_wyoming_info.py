"""``describe`` reads a peer's answer through the bounded reader.

Zeroconf discovery asks every host on the network that announces
``_wyoming._tcp``, so the peer may be anything: here it is an asyncio server on
127.0.0.1 writing what a hostile or broken device would, and a real
wyoming-piper, whose ``info`` (every voice it can download) is the largest a
real Wyoming service sends.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
import json

import pytest

from custom_components.voicestack.core.wyoming_info import (
    DESCRIBE_MAX_PAYLOAD_BYTES,
    NotWyomingError,
    PeerUnreachableError,
    async_describe_event,
)
from devstack import servers

HOST = "127.0.0.1"
TIMEOUT_S = 5.0


@asynccontextmanager
async def answering(answer: bytes, *, then_stream: bool) -> AsyncIterator[int]:
    """A peer that answers ``describe`` with ``answer``.

    With ``then_stream`` it goes on writing zeros for as long as it is read, as
    if it were sending the body its header announced.
    """

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            await reader.readline()
            writer.write(answer)
            while then_stream:
                writer.write(bytes(64 * 1024))
                await writer.drain()
            await writer.drain()
            await reader.read()  # until the other side closes
        except ConnectionError:
            pass  # dropped by describe: what these tests provoke
        finally:
            writer.transport.abort()

    server = await asyncio.start_server(handle, HOST, 0)
    try:
        yield server.sockets[0].getsockname()[1]
    finally:
        server.close()
        await server.wait_closed()


async def test_a_huge_length_is_not_wyoming_at_once() -> None:
    """Refused at the header: wyoming's reader would read the 2 GB it announces."""
    header = b'{"type": "info", "payload_length": 2000000000}\n'
    async with answering(header, then_stream=True) as port:
        with pytest.raises(NotWyomingError) as refused:  # an answer, not a timeout
            await async_describe_event(HOST, port, TIMEOUT_S)

    assert str(refused.value) == (
        f"{HOST}:{port}: info: payload_length 2000000000 exceeds the limit of "
        "1048576 bytes"
    )


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (
            b'{"type": "info", "data": {"x": "' + b"x" * (1 << 16) + b'"}}\n',
            "event header longer than 65536 bytes",
        ),
        (b'{"type": "info", "data_length": -1}\n', "info: data_length -1 is not a"),
        (b"\xff\xfe not json\n", "event header is not JSON"),
    ],
    ids=["a header over 64 KiB", "a negative length", "bytes that are no JSON"],
)
async def test_malformed_framing_is_not_wyoming(answer: bytes, reason: str) -> None:
    async with answering(answer, then_stream=False) as port:
        with pytest.raises(NotWyomingError, match=reason):
            await async_describe_event(HOST, port, TIMEOUT_S)


async def test_a_peer_that_never_sends_info_times_out() -> None:
    """Events other than ``info`` are skipped, each bounded, the whole in time."""
    pings = b'{"type": "ping"}\n' * 200_000
    async with answering(pings, then_stream=False) as port:
        with pytest.raises(PeerUnreachableError, match="TimeoutError"):
            await async_describe_event(HOST, port, 0.5)


async def test_wyoming_piper_s_large_info_is_read() -> None:
    with servers.piper_server() as piper:
        info = await async_describe_event(piper.host, piper.port, 30.0)

    assert info.type == "info"
    assert info.data["tts"]
    encoded_size = len(json.dumps(info.data).encode())
    assert 64 * 1024 < encoded_size < DESCRIBE_MAX_PAYLOAD_BYTES
