"""The development stack: real engines, speech, Home Assistant and satellites on loopback.

Tests, ``scripts/demo`` and the benchmarks build on it; it imports nothing from
``tests``. Modules that the satellite's own tests use (``speech``, ``servers``,
``satellite``, ``spoken_request``, ``waiting``) import nothing from Home Assistant,
so they run on the satellite's Python 3.11 too.
"""
