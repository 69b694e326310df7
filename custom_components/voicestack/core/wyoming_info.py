"""Ask a Wyoming peer what it is (``describe`` -> ``info``)."""

from __future__ import annotations

import asyncio

from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.info import Describe, Info


class PeerUnreachableError(Exception):
    """The peer refused, dropped or never answered ``describe``."""


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
                    if Info.is_type(event.type):
                        return event
    except (OSError, TimeoutError) as err:
        raise PeerUnreachableError(f"{host}:{port}: {err!r}") from err
    raise PeerUnreachableError(f"{host}:{port} closed the connection before info")
