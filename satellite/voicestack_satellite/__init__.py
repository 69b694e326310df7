"""voicestack-satellite: a Wyoming satellite for a Raspberry Pi with a USB mic."""

__version__ = "0.1.0"
