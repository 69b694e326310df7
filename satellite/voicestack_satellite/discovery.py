"""Announce the satellite on zeroconf (``_wyoming._tcp.local.``), as Home Assistant finds it.

A second satellite with the same name on the network (the shipped satellite.toml
says "Kitchen") is announced as "Kitchen-2" instead of ending in a crash loop
under systemd. python-zeroconf renames when its cache holds the name; its own
probe asks with the unicast-response bit, and the answer goes to port 5353 of
the asking host, where every zeroconf process on that host listens: with two
satellites on one host the kernel hands it to either, so the second may never
hear that its name is taken. Before registering, the satellite therefore asks
once by multicast, which every process hears, and lets the answers fill the
cache the probe checks. All of it takes about 2 s, so it runs beside the
satellite's start rather than before its mic loop (``announce_in_background``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any

ZEROCONF_TYPE = "_wyoming._tcp.local."
MDNS_ADDRESS = "224.0.0.251"
# How long the multicast question's answers may take: responders delay answers
# about shared records (PTR) by 20-120 ms (RFC 6762 section 6), and a busy
# satellite answers later still. It is asked twice, because a responder skips a
# record it multicast less than a second before.
NAMES_IN_USE_WAIT_S = 1.0
_DNS_QUERY_FLAGS = 0x0000  # a standard query (QR bit clear)
_DNS_TYPE_PTR = 12
_DNS_CLASS_IN = 1  # without the unicast-response bit: answered by multicast

_LOGGER = logging.getLogger("voicestack_satellite")


def announce_in_background(name: str, host: str, port: int) -> asyncio.Task[Any]:
    """Start announcing ``name``; give the task to ``withdraw`` on the way out."""
    return asyncio.create_task(_announce(name, host, port), name="zeroconf")


async def withdraw(announcing: asyncio.Task[Any]) -> None:
    """Stop announcing: the announcement is withdrawn, or never finishes."""
    announcing.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        aiozc = await announcing
        if aiozc is not None:
            await aiozc.async_close()


async def _announce(name: str, host: str, port: int) -> Any | None:
    """Announce ``name`` at ``host:port``; the AsyncZeroconf, or None on failure.

    A failure (no zeroconf package, no multicast) is logged, never fatal: the
    satellite can still be added by host and port.
    """
    try:
        from zeroconf import Error as ZeroconfError  # noqa: PLC0415
        from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf  # noqa: PLC0415
    except ImportError as err:
        _LOGGER.warning("Zeroconf discovery unavailable: %s", err)
        return None
    aiozc: AsyncZeroconf | None = None
    try:
        address = _lan_address() if host in ("0.0.0.0", "") else host  # noqa: S104
        info = AsyncServiceInfo(
            ZEROCONF_TYPE,
            f"{name}.{ZEROCONF_TYPE}",
            addresses=[socket.inet_aton(address)],
            port=port,
        )
        aiozc = AsyncZeroconf()
        await _hear_names_in_use(aiozc.zeroconf)
        await aiozc.async_register_service(info, allow_name_change=True)
    except (OSError, ZeroconfError, asyncio.CancelledError) as err:
        if aiozc is not None:
            await aiozc.async_close()
        if isinstance(err, asyncio.CancelledError):
            raise
        _LOGGER.warning("Zeroconf discovery unavailable: %s", err)
        return None
    _LOGGER.info("Announced on zeroconf as %s", info.name)
    return aiozc


async def _hear_names_in_use(zeroconf: Any) -> None:
    """Ask by multicast which satellites are announced; their answers fill the cache."""
    # zeroconf exports both without listing them in __all__.
    from zeroconf import (  # type: ignore[attr-defined]  # noqa: PLC0415
        DNSOutgoing,
        DNSQuestion,
    )

    query = DNSOutgoing(_DNS_QUERY_FLAGS)
    query.add_question(DNSQuestion(ZEROCONF_TYPE, _DNS_TYPE_PTR, _DNS_CLASS_IN))
    for _ in range(2):
        zeroconf.async_send(query)
        await asyncio.sleep(NAMES_IN_USE_WAIT_S / 2)


def _lan_address() -> str:
    """The address other hosts reach this one at (the multicast route's source)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.setblocking(False)
        probe.connect((MDNS_ADDRESS, 1))
        return str(probe.getsockname()[0])
