"""The "Voice debug" panel in Home Assistant's sidebar (admins only).

Its web component (``frontend/voicestack-debug-panel.js``) is served from the
integration's own folder at ``/voicestack_static/``: nothing comes from a CDN.
A static path cannot be unregistered, so it is registered once per hass (from
``async_setup``); the panel is shown while at least one satellite is set up:
added with the first entry, removed with the last (entries set up and unloaded
concurrently are counted by id, not by asking which are loaded).

Home Assistant keeps panels in ``hass.data`` whether or not its frontend is
loaded yet, so ``frontend`` and ``panel_custom`` are only after-dependencies:
the panel appears once the frontend runs, and a Home Assistant without it (the
tests, a headless install) still sets satellites up.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from homeassistant.components import frontend, panel_custom
from homeassistant.components.http import StaticPathConfig
from homeassistant.core import HomeAssistant, callback
from homeassistant.util.hass_dict import HassKey

from ..const import DOMAIN

__all__ = [
    "PANEL_URL_PATH",
    "async_add_debug_panel",
    "async_remove_debug_panel",
    "async_setup_debug_panel_files",
]

PANEL_URL_PATH: Final = "voicestack-debug"
PANEL_COMPONENT: Final = "voicestack-debug-panel"
PANEL_TITLE: Final = "Voice debug"
PANEL_ICON: Final = "mdi:waveform"
STATIC_URL: Final = "/voicestack_static"
MODULE_URL: Final = f"{STATIC_URL}/{PANEL_COMPONENT}.js"
FRONTEND_DIR: Final = Path(__file__).parent.parent / "frontend"
# The entries that keep the panel in the sidebar.
DATA_PANEL_USERS: HassKey[set[str]] = HassKey(f"{DOMAIN}_debug_panel_users")


async def async_setup_debug_panel_files(hass: HomeAssistant) -> None:
    """Serve ``frontend/`` at ``/voicestack_static`` (once per hass).

    Not cached by browsers: an update of the integration must show the new panel
    without a hard reload.
    """
    await hass.http.async_register_static_paths(
        [StaticPathConfig(STATIC_URL, str(FRONTEND_DIR), cache_headers=False)]
    )


async def async_add_debug_panel(hass: HomeAssistant, entry_id: str) -> None:
    """Entry ``entry_id`` is set up: show the panel if it is the first."""
    users = hass.data.setdefault(DATA_PANEL_USERS, set())
    first = not users
    users.add(entry_id)
    if first:
        await panel_custom.async_register_panel(
            hass,
            frontend_url_path=PANEL_URL_PATH,
            webcomponent_name=PANEL_COMPONENT,
            sidebar_title=PANEL_TITLE,
            sidebar_icon=PANEL_ICON,
            module_url=MODULE_URL,
            require_admin=True,
        )


@callback
def async_remove_debug_panel(hass: HomeAssistant, entry_id: str) -> None:
    """Entry ``entry_id`` is unloaded: remove the panel if it was the last."""
    users = hass.data.get(DATA_PANEL_USERS, set())
    if entry_id not in users:
        return
    users.discard(entry_id)
    if not users:
        frontend.async_remove_panel(hass, PANEL_URL_PATH, warn_if_unknown=False)
