"""Pytest plugin: ready Home Assistant before any other plugin, where it exists.

pytest-homeassistant-custom-component 0.13.375 is the newest release; it was
built from Home Assistant 2026.10's test helpers. On 2026.11 two things differ
(both only in how the tests start, not in anything VoiceStack uses):

- 2026.11 makes ``import httpx`` resolve to ``httpx2`` when ``homeassistant`` is
  first imported, and refuses once something else imported ``httpx``; the
  plugin imports ``respx`` (and ``httpx``) first. So import ``homeassistant``
  here, before the plugin loads (``-p tests.ha_first`` in pyproject.toml).
- ``_clear_logger_overwrites`` moved from ``logger`` to ``logger.helpers``.

Both shims apply only where needed; on the satellite's Python without Home
Assistant this plugin does nothing. Drop them with the first plugin release
built for 2026.11.
"""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("homeassistant") is not None:
    import homeassistant.components.logger as ha_logger

    if not hasattr(ha_logger, "_clear_logger_overwrites"):
        from homeassistant.components.logger import helpers as ha_logger_helpers

        ha_logger._clear_logger_overwrites = ha_logger_helpers._clear_logger_overwrites
