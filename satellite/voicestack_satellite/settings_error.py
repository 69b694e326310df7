"""The one error a bad option raises (settings.py and compat.py alike)."""

from __future__ import annotations


class SettingsError(ValueError):
    """A bad option value, with a message fit for the command line."""
