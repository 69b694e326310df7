"""Reading Wyoming events defensively: bounded sizes, clear reasons on bad input.

wyoming's own ``async_read_event`` trusts the peer's lengths and swallows parse
errors; a satellite on a home network must instead refuse oversized or malformed
events with one clear log line and drop only the offending connection.
"""

from __future__ import annotations

import asyncio
import json

from wyoming.event import Event

MAX_HEADER_BYTES = 64 * 1024


class ProtocolError(Exception):
    """The peer sent something that is not a well-formed, acceptable event."""


async def read_event(reader: asyncio.StreamReader, max_payload: int) -> Event | None:
    """Read one event; ``None`` at a clean end of stream."""
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
    try:
        header = json.loads(line)
    except ValueError as err:
        raise ProtocolError(f"event header is not JSON: {line[:80]!r}") from err
    if not isinstance(header, dict) or not isinstance(header.get("type"), str):
        raise ProtocolError(f"event header has no type: {line[:80]!r}")
    data = header.get("data") or {}
    if not isinstance(data, dict):
        raise ProtocolError(f"{header['type']}: data is not an object")
    data_length = _length(header, "data_length", max_payload)
    payload_length = _length(header, "payload_length", max_payload)
    try:
        if data_length:
            extra = json.loads(await reader.readexactly(data_length))
            if not isinstance(extra, dict):
                raise ProtocolError(f"{header['type']}: data is not an object")
            data.update(extra)
        payload = await reader.readexactly(payload_length) if payload_length else None
    except asyncio.IncompleteReadError as err:
        raise ProtocolError(f"{header['type']}: connection closed mid-event") from err
    except ValueError as err:
        raise ProtocolError(f"{header['type']}: data is not JSON") from err
    return Event(type=header["type"], data=data, payload=payload)


def _length(header: dict, key: str, max_payload: int) -> int:
    value = header.get(key) or 0
    if not isinstance(value, int) or value < 0:
        raise ProtocolError(f"{header['type']}: {key} {value!r} is not a size")
    if value > max_payload:
        raise ProtocolError(
            f"{header['type']}: {key} {value} exceeds the limit of {max_payload} bytes"
        )
    return value
