"""VoiceStack's Home Assistant-free core.

Nothing under this package imports ``homeassistant``: router, announcer, turn loop,
barge-in logic and the file lock take a clock and callbacks, so they are tested
fast and exactly without Home Assistant.
"""
