"""The VoiceStack conversation agent: the voice modes for any Assist device.

A config entry of kind ``agent`` adds one ``conversation`` entity that a user
picks in any Assist pipeline. It wraps the agent chosen in the entry's options
and runs one voice-mode router per device (``runtime.py``), keyed by what Home
Assistant passes (``device_key``).
"""
