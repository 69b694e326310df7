"""Tests: voicestack-protocol, the events both ends share."""
