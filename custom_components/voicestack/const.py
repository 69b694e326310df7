"""Constants shared by the VoiceStack integration."""

from typing import Final

DOMAIN: Final = "voicestack"
DEFAULT_PORT: Final = 10700
# How long the config flow waits for a satellite to answer `describe`.
DESCRIBE_TIMEOUT_S: Final = 5.0
