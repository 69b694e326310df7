"""VoiceStack's extra Wyoming events (see docs/protocol.md).

The satellite stays a standard Wyoming satellite: a peer learns that these events
are understood from the ``voicestack`` key of ``info``, and the satellite sends its
own extension events only to a peer that asked for them with ``voicestack-hello``.
"""

from __future__ import annotations

import logging
from typing import Any, Final

_LOGGER = logging.getLogger(__name__)

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

# In audio-start (peer -> satellite), echoed in played and voicestack-progress:
# the peer's id of the stream; played also says how it ended (STATE).
STREAM: Final = "stream"
STATE: Final = "state"  # played (to its end) | flushed (dropped before it)
MAX_STREAM_ID: Final = 64  # characters

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


def peer_stream_id(data: dict[str, Any], fallback: str) -> str:
    """The stream id a peer gave in ``audio-start``, or ``fallback``.

    A stock peer gives none; an id that is not a printable string of at most
    ``MAX_STREAM_ID`` characters is replaced too (with a warning), so what is
    echoed back is always safe to log and compare.
    """
    value = data.get(STREAM)
    if value is None:
        return fallback
    if (
        isinstance(value, str)
        and 0 < len(value) <= MAX_STREAM_ID
        and value.isprintable()
    ):
        return value
    _LOGGER.warning(
        "Ignoring audio-start stream id %.80r (not a printable string of 1 to %d "
        "characters); reporting the stream as %s",
        value,
        MAX_STREAM_ID,
        fallback,
    )
    return fallback
