"""VoiceStack's extra Wyoming events (see docs/protocol.md).

The satellite stays a standard Wyoming satellite: a peer learns that these events
are understood from the ``voicestack`` key of ``info``, and the satellite sends its
own extension events only to a peer that asked for them with ``voicestack-hello``.
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1

# satellite -> peer
PREROLL: Final = "voicestack-preroll"  # {samples, rate}: audio prepended before the cut
PROGRESS: Final = "voicestack-progress"  # {stream, played, total, state}
NO_SPEECH: Final = "voicestack-no-speech"  # {}: the request ended with nobody speaking

# peer -> satellite
HELLO: Final = "voicestack-hello"  # {protocol}: send me the satellite -> peer events
PAUSE: Final = "voicestack-pause"  # {} pause playback within one block
RESUME: Final = "voicestack-resume"  # {offset?}: resume, optionally at a sample offset
FLUSH: Final = "voicestack-flush"  # {} drop queued playback now
# {timeout}: open the mic without a wake word once; {continuous: bool}: stream
# every speech segment as a request (always-listening mode) until told otherwise
LISTEN: Final = "voicestack-listen"

SATELLITE_EVENTS: Final = (PREROLL, PROGRESS, NO_SPEECH)
PEER_EVENTS: Final = (HELLO, PAUSE, RESUME, FLUSH, LISTEN)


def info_block(satellite_id: str) -> dict[str, object]:
    """What ``info`` carries under ``voicestack``: a stable id and the extensions."""
    return {
        "id": satellite_id,
        "protocol": PROTOCOL_VERSION,
        "sends": list(SATELLITE_EVENTS),
        "accepts": list(PEER_EVENTS),
    }
