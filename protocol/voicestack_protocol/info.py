"""The ``voicestack`` block of a satellite's ``info``: who it is, what it speaks.

A peer learns from it that the satellite understands VoiceStack's events; a
stock Wyoming satellite has none, which is not an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .checks import is_int
from .names import INFO_KEY, PEER_EVENTS, PROTOCOL_VERSION, SATELLITE_EVENTS


@dataclass(frozen=True, slots=True)
class InfoBlock:
    """The ``voicestack`` block of a satellite's ``info``."""

    id: str
    protocol: int
    sends: tuple[str, ...]
    accepts: tuple[str, ...]
    voiceprint: bool = False  # its voice gate can run (barge-in verdicts)
    hold: bool = False  # it keeps an answer paused through a held request


def info_block(
    satellite_id: str, voiceprint: bool = False, *, hold: bool = False
) -> dict[str, object]:
    """What ``info`` carries under ``INFO_KEY``: a stable id and the extensions.

    ``voiceprint``: the voice gate can run (barge-in verdicts, enrollment);
    ``hold``: a ``voicestack-barge-in-request`` with ``hold`` keeps the answer
    paused (older satellites flush it, so a peer resumes "not sure" instead).
    """
    return {
        "id": satellite_id,
        "protocol": PROTOCOL_VERSION,
        "sends": list(SATELLITE_EVENTS),
        "accepts": list(PEER_EVENTS),
        "voiceprint": voiceprint,
        "hold": hold,
    }


def parse_info(info_data: Mapping[str, Any] | None) -> InfoBlock | None:
    """Read the ``voicestack`` block from an ``info`` event's data.

    ``None`` when it is missing or unusable (no non-empty string ``id``): such a
    peer is a stock Wyoming satellite, which is not an error. A block with a
    protocol that is not a number reads as protocol 0, so it gets the repair
    issue of a satellite on another protocol version.
    """
    block = (info_data or {}).get(INFO_KEY)
    if not isinstance(block, Mapping):
        return None
    satellite_id = block.get("id")
    if not isinstance(satellite_id, str) or not satellite_id.strip():
        return None
    protocol = block.get("protocol")
    return InfoBlock(
        id=satellite_id.strip(),
        protocol=protocol if is_int(protocol) else 0,
        sends=_names(block.get("sends")),
        accepts=_names(block.get("accepts")),
        voiceprint=block.get("voiceprint") is True,
        hold=block.get("hold") is True,
    )


def _names(value: object) -> tuple[str, ...]:
    if not isinstance(value, list | tuple):
        return ()
    return tuple(item for item in value if isinstance(item, str))
