"""Constants shared by the VoiceStack integration."""

from typing import Final

from homeassistant.const import Platform

DOMAIN: Final = "voicestack"
DEFAULT_PORT: Final = 10700
# How long the config flow and setup wait for a satellite to answer `describe`.
DESCRIBE_TIMEOUT_S: Final = 5.0
PLATFORMS: Final = [
    Platform.ASSIST_SATELLITE,
    Platform.BINARY_SENSOR,
    Platform.NUMBER,
    Platform.SELECT,
    Platform.SENSOR,
    Platform.SWITCH,
]
# The action every announcement goes through (automations, the satellite's socket).
SERVICE_ANNOUNCE: Final = "announce"
# Fired for every transcript, with the routing decision.
EVENT_UTTERANCE: Final = "voicestack_utterance"
# Fired for every change of an announcement's fate (queued, started, finished…).
EVENT_ANNOUNCEMENT: Final = "voicestack_announcement"
# Fired for every turn of a follow-up session (transcript, route, answer, why it ended).
EVENT_TURN: Final = "voicestack_turn"
# Fired when a follow-up session ends, with why (max turns, silence, stop word…).
EVENT_SESSION_ENDED: Final = "voicestack_session_ended"
# Fired for every dictation delivered to the ``event`` destination.
EVENT_DICTATION: Final = "voicestack_dictation"
# A voice response was paused, resumed or stopped by speech (barge-in).
EVENT_BARGE_IN: Final = "voicestack_barge_in"
# Recorded requests (the debug panel): how many each satellite keeps, and the
# most its recordings may take on disk (options; the oldest go first).
CONF_RECORDINGS_KEEP: Final = "recordings_keep"
CONF_RECORDINGS_MAX_MB: Final = "recordings_max_mb"
DEFAULT_RECORDINGS_KEEP: Final = 20
DEFAULT_RECORDINGS_MAX_MB: Final = 100
RECORDINGS_KEEP_RANGE: Final = (1, 500)
RECORDINGS_MAX_MB_RANGE: Final = (1, 2000)
