"""Who a Wyoming peer is: its ``info`` plus the VoiceStack block, and a stable id.

A voicestack-satellite adds ``"voicestack": {"id", "protocol", "sends", "accepts"}``
to its ``info`` event (docs/protocol.md). ``Info.from_event`` drops keys wyoming
does not know, so the block is read from the raw event here. A stock Wyoming
satellite has no block; it is recognised by its address instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wyoming.event import Event
from wyoming.info import Info, Satellite

from .wyoming_info import MALFORMED, NotWyomingError, async_describe_event

INFO_KEY = "voicestack"


@dataclass(frozen=True, slots=True)
class VoiceStackBlock:
    """The ``voicestack`` block of a satellite's ``info``."""

    id: str
    protocol: int
    sends: tuple[str, ...]
    accepts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Identity:
    """What a peer said about itself, and the id Home Assistant knows it by."""

    info: Info
    voicestack: VoiceStackBlock | None
    unique_id: str

    @property
    def satellite(self) -> Satellite | None:
        """The ``satellite`` block; ``None`` for servers such as Piper or Whisper."""
        return self.info.satellite


def voicestack_block(info_data: Mapping[str, Any] | None) -> VoiceStackBlock | None:
    """Read the ``voicestack`` block from an ``info`` event's data.

    ``None`` when it is missing or unusable (no non-empty string ``id``), so such
    a peer is treated like a stock Wyoming satellite.
    """
    block = (info_data or {}).get(INFO_KEY)
    if not isinstance(block, Mapping):
        return None
    satellite_id = block.get("id")
    if not isinstance(satellite_id, str) or not satellite_id.strip():
        return None
    protocol = block.get("protocol")
    return VoiceStackBlock(
        id=satellite_id.strip(),
        protocol=protocol if isinstance(protocol, int) else 0,
        sends=_names(block.get("sends")),
        accepts=_names(block.get("accepts")),
    )


def address_unique_id(host: str, port: int) -> str:
    """The id of a satellite without a VoiceStack id: where it listens."""
    host = host.strip().lower()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # IPv6
    return f"{host}:{port}"


def identify(host: str, port: int, info_event: Event) -> Identity:
    """Build the identity of the peer at ``host``:``port`` from its ``info`` event.

    Raises ``NotWyomingError`` when the ``info`` is not one wyoming can read.
    """
    if not isinstance(info_event.data, Mapping):
        raise NotWyomingError(f"{host}:{port}: info data is not an object")
    try:
        info = Info.from_event(info_event)
    except MALFORMED as err:
        raise NotWyomingError(f"{host}:{port}: {type(err).__name__}: {err}") from err
    block = voicestack_block(info_event.data)
    return Identity(
        info=info,
        voicestack=block,
        unique_id=block.id if block else address_unique_id(host, port),
    )


async def async_identify(host: str, port: int, timeout_s: float) -> Identity:
    """Ask the peer ``describe``.

    Raises ``PeerUnreachableError`` or ``NotWyomingError`` like it and ``identify``.
    """
    return identify(host, port, await async_describe_event(host, port, timeout_s))


def _names(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(item for item in value if isinstance(item, str))
