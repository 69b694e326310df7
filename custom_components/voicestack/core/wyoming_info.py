"""Ask a Wyoming peer what it is (``describe`` -> ``info``)."""

from __future__ import annotations

import asyncio

from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.info import Describe, Info


class PeerUnreachableError(Exception):
    """The peer refused, dropped or never answered ``describe``."""


class NotWyomingError(Exception):
    """The peer answered, but not in Wyoming (JSON that is no Wyoming event)."""


# What wyoming's reader and ``Info.from_event`` raise on JSON that is not a
# Wyoming event. wyoming 1.10.2's ``async_read_event`` turns ValueError (bad
# JSON, a header line over the stream limit) into ``None`` itself, but a header
# that is valid JSON of the wrong shape escapes it: no "type" -> KeyError, not
# an object -> AttributeError, a non-numeric length -> TypeError; "data" that
# is not an object -> AttributeError/TypeError/ValueError; nesting deeper than
# the parser goes -> RecursionError.
MALFORMED = (KeyError, TypeError, AttributeError, ValueError, RecursionError)


async def async_describe_event(host: str, port: int, timeout_s: float) -> Event:
    """Connect, send ``describe`` and return the peer's raw ``info`` event.

    Unlike ``Info.from_event`` the raw event keeps keys wyoming does not know,
    such as the satellite's ``voicestack`` block (see ``identity.py``).
    Events other than ``info`` that arrive first (a satellite may already be
    streaming) are skipped; the whole exchange is bounded by ``timeout_s``.
    """
    try:
        async with asyncio.timeout(timeout_s):
            async with AsyncTcpClient(host, port) as client:
                await client.write_event(Describe().event())
                while (event := await client.read_event()) is not None:
                    if not isinstance(event.type, str):
                        raise NotWyomingError(
                            f"{host}:{port}: event type {event.type!r}"
                        )
                    if Info.is_type(event.type):
                        return event
    except (OSError, TimeoutError) as err:
        raise PeerUnreachableError(f"{host}:{port}: {err!r}") from err
    except MALFORMED as err:
        raise NotWyomingError(f"{host}:{port}: {type(err).__name__}: {err}") from err
    raise PeerUnreachableError(f"{host}:{port} closed the connection before info")
