"""Ask a Wyoming peer what it is (``describe`` -> ``info``)."""

from __future__ import annotations

import asyncio
import contextlib

from wyoming.event import Event, async_write_event
from wyoming.info import Describe, Info

from voicestack_protocol import MAX_HEADER_BYTES, ProtocolError, read_event

# The largest data or payload segment ``describe`` reads. An ``info`` is the only
# event that matters here, and it is small: a satellite's is a few KB, and even
# wyoming-piper's, which lists every voice it can download, is 86 KB (1.10.2).
DESCRIBE_MAX_PAYLOAD_BYTES = 1024 * 1024


class PeerUnreachableError(Exception):
    """The peer refused, dropped or never answered ``describe``."""


class NotWyomingError(Exception):
    """The peer answered, but not in Wyoming (JSON that is no Wyoming event)."""


# What ``Info.from_event`` raises on an ``info`` that is JSON but not Wyoming's
# shape (the reader, ``wire.read_event``, has already refused malformed events):
# a key of the wrong type -> KeyError/TypeError/AttributeError/ValueError, and
# nesting deeper than the parser goes -> RecursionError.
MALFORMED = (KeyError, TypeError, AttributeError, ValueError, RecursionError)


async def async_describe_event(host: str, port: int, timeout_s: float) -> Event:
    """Connect, send ``describe`` and return the peer's raw ``info`` event.

    Unlike ``Info.from_event`` the raw event keeps keys wyoming does not know,
    such as the satellite's ``voicestack`` block (see ``identity.py``).
    Events other than ``info`` that arrive first (a satellite may already be
    streaming) are skipped; the whole exchange is bounded by ``timeout_s``, and
    every event by ``MAX_HEADER_BYTES`` and ``DESCRIBE_MAX_PAYLOAD_BYTES``: the
    peer may be any device on the network that announces ``_wyoming._tcp``.
    """
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(timeout_s):
            reader, writer = await asyncio.open_connection(
                host, port, limit=MAX_HEADER_BYTES
            )
            await async_write_event(Describe().event(), writer)
            while (
                event := await read_event(reader, DESCRIBE_MAX_PAYLOAD_BYTES)
            ) is not None:
                if Info.is_type(event.type):
                    return event
    except (OSError, TimeoutError) as err:
        raise PeerUnreachableError(f"{host}:{port}: {err!r}") from err
    except ProtocolError as err:
        raise NotWyomingError(f"{host}:{port}: {err}") from err
    finally:
        if writer is not None:
            # Abort: a polite close could wait on a peer that stopped reading.
            writer.transport.abort()
            with contextlib.suppress(OSError):
                await writer.wait_closed()
    raise PeerUnreachableError(f"{host}:{port} closed the connection before info")
