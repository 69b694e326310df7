"""Config flow: add a satellite by host and port after it answers ``describe``."""

from __future__ import annotations

import logging
from typing import Any

from homeassistant.config_entries import ConfigFlow, ConfigFlowResult
from homeassistant.const import CONF_HOST, CONF_PORT
import voluptuous as vol

from .const import DEFAULT_PORT, DESCRIBE_TIMEOUT_S, DOMAIN
from .core.wyoming_info import PeerUnreachableError, async_describe

_LOGGER = logging.getLogger(__name__)

STEP_USER_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_HOST): str,
        vol.Required(CONF_PORT, default=DEFAULT_PORT): vol.All(
            vol.Coerce(int), vol.Range(min=1, max=65535)
        ),
    }
)


class VoiceStackConfigFlow(ConfigFlow, domain=DOMAIN):
    """Handle adding a VoiceStack satellite."""

    VERSION = 1

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for host and port; create the entry once a satellite answers."""
        errors: dict[str, str] = {}
        if user_input is not None:
            self._async_abort_entries_match(
                {CONF_HOST: user_input[CONF_HOST], CONF_PORT: user_input[CONF_PORT]}
            )
            try:
                info = await async_describe(
                    user_input[CONF_HOST], user_input[CONF_PORT], DESCRIBE_TIMEOUT_S
                )
            except PeerUnreachableError as err:
                _LOGGER.debug("Satellite did not answer: %s", err)
                errors["base"] = "cannot_connect"
            else:
                if info.satellite is None:
                    errors["base"] = "not_a_satellite"
                else:
                    return self.async_create_entry(
                        title=info.satellite.name, data=user_input
                    )
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(
                STEP_USER_SCHEMA, user_input
            ),
            errors=errors,
        )
