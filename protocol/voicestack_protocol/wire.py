"""Reading Wyoming events defensively: bounded sizes, clear reasons on bad input.

wyoming's own ``async_read_event`` trusts the peer's lengths (a ``payload_length``
of 2e9 is read, and buffered, to the end) and turns some malformed headers into
``None`` while others escape as ``KeyError``/``TypeError``. Both ends of VoiceStack
face peers they cannot trust: the satellite any client on its network, Home
Assistant any host that announces ``_wyoming._tcp``. So both read through this one
reader, which refuses an oversized or malformed event with one ``ProtocolError``
saying why, before reading (and buffering) what the header announces.

Both import it from here (voicestack-protocol), so there is one text of it. It
imports nothing but the standard library and wyoming, and runs on the
satellite's Python 3.11.

Bounds per event: the header line is bounded by the ``StreamReader``'s ``limit``
(open streams with ``limit=MAX_HEADER_BYTES``), the data and payload segments by
``max_payload`` each, which the caller chooses for what its peer sends.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from wyoming.event import Event

MAX_HEADER_BYTES = 64 * 1024


class ProtocolError(Exception):
    """The peer sent something that is not a well-formed, acceptable event."""


async def read_event(reader: asyncio.StreamReader, max_payload: int) -> Event | None:
    """Read one event; ``None`` at a clean end of stream.

    Raises ``ProtocolError`` for anything malformed or over the limits, and
    ``OSError`` when the connection fails.
    """
    try:
        line = await reader.readuntil(b"\n")
    except asyncio.IncompleteReadError as err:
        if not err.partial:
            return None
        raise ProtocolError(
            "connection closed in the middle of an event header"
        ) from err
    except asyncio.LimitOverrunError as err:
        raise ProtocolError(
            f"event header longer than {MAX_HEADER_BYTES} bytes"
        ) from err
    header = _json(line, "event header")
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise ProtocolError(f"event header has no type: {line[:80]!r}")
    kind = header["type"]
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise ProtocolError(f"{kind}: data is not an object")
    data_length = _length(header, "data_length", max_payload)
    payload_length = _length(header, "payload_length", max_payload)
    try:
        if data_length:
            extra = _json(await reader.readexactly(data_length), f"{kind}: data")
            if not isinstance(extra, dict):
                raise ProtocolError(f"{kind}: data is not an object")
            data.update(extra)
        payload = await reader.readexactly(payload_length) if payload_length else None
    except asyncio.IncompleteReadError as err:
        raise ProtocolError(f"{kind}: connection closed mid-event") from err
    return Event(type=kind, data=data, payload=payload)


def _json(raw: bytes, what: str) -> Any:
    """Parse ``raw``; nesting too deep for the parser is as bad as no JSON."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise ProtocolError(f"{what} is not JSON: {raw[:80]!r}") from err


def _length(header: dict[str, Any], key: str, max_payload: int) -> int:
    value = header.get(key) or 0
    if type(value) is not int or value < 0:  # bool is an int, but not a size
        raise ProtocolError(f"{header['type']}: {key} {value!r} is not a size")
    if value > max_payload:
        raise ProtocolError(
            f"{header['type']}: {key} {value} exceeds the limit of {max_payload} bytes"
        )
    return value
