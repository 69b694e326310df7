"""VoiceStack's extra Wyoming events (see docs/protocol.md).

Stock peers ignore unknown event types and unknown ``info`` keys, so the satellite
stays a standard Wyoming satellite. A peer learns that these events are understood
from the ``voicestack`` key of ``info``.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1

# satellite -> peer
PREROLL: Final = "voicestack-preroll"  # {samples, rate}: audio prepended before the cut
PROGRESS: Final = "voicestack-progress"  # {stream, played, total, state}

# peer -> satellite
PAUSE: Final = "voicestack-pause"  # {} pause playback within one block
RESUME: Final = "voicestack-resume"  # {offset?}: resume, optionally at a sample offset
FLUSH: Final = "voicestack-flush"  # {} drop queued playback now
LISTEN: Final = "voicestack-listen"  # {timeout}: open the mic without a wake word

SATELLITE_EVENTS: Final = (PREROLL, PROGRESS)
PEER_EVENTS: Final = (PAUSE, RESUME, FLUSH, LISTEN)


def info_block(satellite_id: str) -> dict[str, object]:
    """What ``info`` carries under ``voicestack``: a stable id and the extensions."""
    return {
        "id": satellite_id,
        "protocol": PROTOCOL_VERSION,
        "sends": list(SATELLITE_EVENTS),
        "accepts": list(PEER_EVENTS),
    }
