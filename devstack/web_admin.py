"""An administrator a browser logs in as, on a real Home Assistant's login page.

The debug panel's browser tests and scripts/make_screenshots.py share it: a
Home Assistant that is onboarded (so its web UI opens on the login page, not on
onboarding) and a user of Home Assistant's own auth provider in the admin group.
"""

from __future__ import annotations

from typing import Any

from homeassistant.auth.const import GROUP_ID_ADMIN
from homeassistant.auth.providers.homeassistant import HassAuthProvider
from homeassistant.core import HomeAssistant

USERNAME, PASSWORD = "admin", "a long admin password"
# The onboarding store of a Home Assistant whose owner finished onboarding.
ONBOARDED: dict[str, Any] = {
    "version": 4,
    "minor_version": 1,
    "key": "onboarding",
    "data": {"done": ["user", "core_config", "analytics", "integration"]},
}


async def add_admin(hass: HomeAssistant, provider: HassAuthProvider) -> None:
    """An administrator who logs in with ``USERNAME`` and ``PASSWORD``."""
    provider.data.add_auth(USERNAME, PASSWORD)
    await provider.data.async_save()
    user = await hass.auth.async_create_user("Admin", group_ids=[GROUP_ID_ADMIN])
    credentials = await provider.async_get_or_create_credentials({"username": USERNAME})
    await hass.auth.async_link_user(user, credentials)
