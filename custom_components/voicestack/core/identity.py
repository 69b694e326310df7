"""Who a Wyoming peer is: its ``info`` plus the VoiceStack block, and a stable id.

A voicestack-satellite adds ``"voicestack": {"id", "protocol", "sends", "accepts"}``
to its ``info`` event (docs/protocol.md). ``Info.from_event`` drops keys wyoming
does not know, so the block is read from the raw event here. A stock Wyoming
satellite has no block; it is recognised by its address instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from wyoming.event import Event
from wyoming.info import Info, Satellite

from voicestack_protocol import InfoBlock, parse_info

from .wyoming_info import MALFORMED, NotWyomingError, async_describe_event


@dataclass(frozen=True, slots=True)
class Identity:
    """What a peer said about itself, and the id Home Assistant knows it by."""

    info: Info
    voicestack: InfoBlock | None
    unique_id: str

    @property
    def satellite(self) -> Satellite | None:
        """The ``satellite`` block; ``None`` for servers such as Piper or Whisper."""
        return self.info.satellite


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
    block = parse_info(info_event.data)
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
