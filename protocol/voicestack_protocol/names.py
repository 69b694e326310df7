"""Every VoiceStack event's name, and the fields and limits both ends share.

Defined here once: the integration and the satellite import them, so the two
ends cannot disagree on a name or a bound (docs/protocol.md describes each).
"""

from __future__ import annotations

from typing import Final

PROTOCOL_VERSION: Final = 1
INFO_KEY: Final = "voicestack"  # the block a voicestack-satellite adds to ``info``

# satellite -> peer
PREROLL: Final = "voicestack-preroll"  # {samples, rate, cut, start?}: buffered audio
PROGRESS: Final = "voicestack-progress"  # {stream, played, total, state}
NO_SPEECH: Final = "voicestack-no-speech"  # {}: the request ended with nobody speaking
# {id, message, priority?, category?, source?, dedup_key?, ttl?}: a line from the
# satellite's local announce socket, for Home Assistant's announcer; sent only to
# a peer whose hello lists it in ``accepts``
ANNOUNCE: Final = "voicestack-announce"
BARGE_IN: Final = "voicestack-barge-in"  # {stream, played, onset}: speech paused it
# {stream, person, score, seconds, verdict?, normalized?, closest?, cohort?}:
# the voice gate's verdict
VOICE: Final = "voicestack-voice"
VOICEPRINT: Final = "voicestack-voiceprint"  # {id, embedding, seconds} | {id, error}

# peer -> satellite
# {protocol, end_of_speech_s?, accepts?}: send me your events (``accepts``: the
# ones that need asking for by name, ASKED_FOR)
HELLO: Final = "voicestack-hello"
PAUSE: Final = "voicestack-pause"  # {}: pause playback within one block
RESUME: Final = "voicestack-resume"  # {offset?}: resume, optionally at a sample
FLUSH: Final = "voicestack-flush"  # {}: drop queued playback now
# {timeout}: open the mic without a wake word once (0 closes the window);
# {continuous: bool}: stream every speech segment as a request (always listening)
LISTEN: Final = "voicestack-listen"
# {enabled, min_speech_s, echo_cancel, threshold, voiceprints}: barge-in settings;
# until one says enabled, speech never pauses playback
BARGE_IN_CONFIG: Final = "voicestack-barge-in-config"
BARGE_IN_REQUEST: Final = "voicestack-barge-in-request"  # {stream}: the user spoke
ENROLL: Final = "voicestack-enroll"  # {id, max_s}: record a phrase, answer VOICEPRINT

SATELLITE_EVENTS: Final = (
    PREROLL,
    PROGRESS,
    NO_SPEECH,
    ANNOUNCE,
    BARGE_IN,
    VOICE,
    VOICEPRINT,
)
PEER_EVENTS: Final = (
    HELLO,
    PAUSE,
    RESUME,
    FLUSH,
    LISTEN,
    BARGE_IN_CONFIG,
    BARGE_IN_REQUEST,
    ENROLL,
)
# Satellite events a voicestack-satellite sends only to a peer that names them
# in its hello's ``accepts``: the ones Home Assistant handles.
ASKED_FOR: Final = (ANNOUNCE,)

# In audio-start (peer -> satellite), echoed in played and voicestack-progress:
# the peer's id of the stream; both also say how far it got (STATE).
STREAM: Final = "stream"
STATE: Final = "state"
PLAYING: Final = "playing"  # voicestack-progress only: still going
PLAYED: Final = "played"  # played to its end
FLUSHED: Final = "flushed"  # dropped before its end
PROGRESS_STATES: Final = (PLAYING, PLAYED, FLUSHED)
MAX_STREAM_ID: Final = 64  # characters
# In audio-start: speech may pause this stream (a voice response, not an announcement).
BARGE_IN_FIELD: Final = "barge_in"

END_OF_SPEECH_S: Final = (0.1, 3.0)  # the range a hello may ask for, in seconds
MAX_LISTEN_S: Final = 60.0  # the longest listen window a peer may open
DEFAULT_LISTEN_S: Final = 5.0  # a listen without timeout or continuous

# The optional fields of ANNOUNCE, as voicestack.announce names them, and the
# priorities it knows (the integration's ``Priority``; tests/core pins them).
ANNOUNCE_OPTIONAL: Final = ("priority", "category", "source", "dedup_key", "ttl")
ANNOUNCE_PRIORITIES: Final = ("critical", "high", "normal", "low")
MAX_REQUEST_ID: Final = 64  # characters of an ANNOUNCE's or an ENROLL's id

MIN_SPEECH_S: Final = (0.1, 2.0)  # the range BARGE_IN_CONFIG's min_speech_s may take
EMBEDDING_SIZE: Final = 256  # floats in a voiceprint (GE2E)
MAX_VOICEPRINTS: Final = 50  # entries in BARGE_IN_CONFIG's voiceprints
MAX_PERSON: Final = 100  # characters of an enrolled person's name
ENROLL_MAX_S: Final = (1.0, 30.0)  # the range ENROLL's max_s may take
VOICEPRINT_ERRORS: Final = ("no_speech", "too_short", "unavailable", "cancelled")
VOICE_VERDICTS: Final = ("enrolled", "unsure", "other")
MAX_NORMALIZED: Final = 1000.0  # an s-norm beyond this is no score
COHORT_STATS: Final = ("enrolled_mean", "enrolled_std", "test_mean", "test_std")
# The optional fields of VOICEPRINT that say how the phrase was heard, and the
# ranges they may take.
HEARD_RANGES: Final[dict[str, tuple[float, float]]] = {
    "level_dbfs": (-200.0, 10.0),
    "snr_db": (-200.0, 200.0),
    "cohort_mean": (-1.0, 1.0),
    "cohort_std": (0.0, 2.0),
}
