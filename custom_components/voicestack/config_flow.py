"""Config flow: add a satellite once it answers ``describe`` as a satellite.

The user step is a menu: a satellite (``satellite``), or the VoiceStack
conversation agent (``agent``: pick the agent it wraps; see ``agent/``). A flow
started with an address (not from the UI) goes straight to the satellite.

A satellite is known by the id in the ``voicestack`` block of its ``info`` (so a
satellite that moves to a new address is recognised and its entry updated), or by
its address when it is a stock Wyoming satellite without that block. A satellite
serves one Home Assistant connection, so one already set up in the built-in
Wyoming integration is refused until it is removed there.
"""

from __future__ import annotations

import logging
from typing import Any

from homeassistant.config_entries import (
    SOURCE_IGNORE,
    SOURCE_RECONFIGURE,
    ConfigEntry,
    ConfigFlow,
    ConfigFlowResult,
    OptionsFlow,
)
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import callback
from homeassistant.data_entry_flow import AbortFlow
from homeassistant.helpers.service_info.zeroconf import ZeroconfServiceInfo
import voluptuous as vol

from .agent.config import (
    AGENT_TITLE,
    CONF_KIND,
    CONF_WRAPPED_AGENT,
    KIND_AGENT,
    is_agent_entry,
    wrapped_agent_errors,
    wrapped_agent_schema,
)
from .agent.options import AgentOptionsFlow
from .const import DEFAULT_PORT, DESCRIBE_TIMEOUT_S, DOMAIN
from .core.identity import Identity, address_unique_id, async_identify
from .core.wyoming_info import NotWyomingError, PeerUnreachableError
from .options_flow import VoiceStackOptionsFlow

_LOGGER = logging.getLogger(__name__)

WYOMING_DOMAIN = "wyoming"

STEP_USER_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_HOST): str,
        vol.Required(CONF_PORT, default=DEFAULT_PORT): vol.All(
            vol.Coerce(int), vol.Range(min=1, max=65535)
        ),
    }
)


class NotASatelliteError(Exception):
    """The peer answered, but as a Wyoming server without a satellite block."""


class VoiceStackConfigFlow(ConfigFlow, domain=DOMAIN):
    """Handle adding a VoiceStack (or stock Wyoming) satellite."""

    VERSION = 1
    # 1.2: notes only in <config>/voicestack/; 1.3: Longest message bounded
    MINOR_VERSION = 3  # (migration.py)

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: ConfigEntry) -> OptionsFlow:
        """A satellite's options, or an agent's (a shorter menu)."""
        if is_agent_entry(config_entry):
            return AgentOptionsFlow()
        return VoiceStackOptionsFlow()

    def __init__(self) -> None:
        """Nothing discovered yet."""
        self._host: str | None = None
        self._port: int | None = None
        self._name: str | None = None

    # -- user -------------------------------------------------------------------

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Add a satellite or the conversation agent (an address: a satellite)."""
        if user_input is not None:
            return await self.async_step_satellite(user_input)
        return self.async_show_menu(step_id="user", menu_options=["satellite", "agent"])

    async def async_step_agent(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick the agent to wrap; VoiceStack's own agent is refused."""
        errors = wrapped_agent_errors(self.hass, user_input)
        if user_input is not None and not errors:
            return self.async_create_entry(
                title=AGENT_TITLE,
                data={CONF_KIND: KIND_AGENT},
                options={CONF_WRAPPED_AGENT: user_input[CONF_WRAPPED_AGENT]},
            )
        return self.async_show_form(
            step_id="agent",
            data_schema=wrapped_agent_schema(user_input or {}),
            errors=errors,
        )

    async def async_step_satellite(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for host and port; create the entry once a satellite answers."""
        errors: dict[str, str] = {}
        if user_input is not None:
            host, port = _address(user_input)
            identity = await self._async_identify_form_input(host, port, errors)
            if identity is not None:
                await self.async_set_unique_id(
                    identity.unique_id, raise_on_progress=False
                )
                self._abort_if_unique_id_configured(
                    updates={CONF_HOST: host, CONF_PORT: port}
                )
                self._abort_if_owned_by_wyoming(host, port)
                return self.async_create_entry(
                    title=_title(identity, host, port),
                    data={CONF_HOST: host, CONF_PORT: port},
                )
        return self.async_show_form(
            step_id="satellite",
            data_schema=self.add_suggested_values_to_schema(
                STEP_USER_SCHEMA, user_input
            ),
            errors=errors,
        )

    # -- zeroconf ---------------------------------------------------------------

    async def async_step_zeroconf(
        self, discovery_info: ZeroconfServiceInfo
    ) -> ConfigFlowResult:
        """A ``_wyoming._tcp`` service: offer it if it is a satellite.

        Piper, Whisper and openWakeWord announce the same service type, so the
        peer is asked what it is before anything is shown.
        """
        _LOGGER.debug("Zeroconf discovery: %s", discovery_info)
        if discovery_info.port is None:
            return self.async_abort(reason="no_port")
        host, port = discovery_info.host, discovery_info.port
        # Already set up at this address: nothing to learn, leave the peer alone.
        self._abort_if_address_used_by_other_entry(host, port)
        try:
            identity = await _async_identify_satellite(host, port)
        except PeerUnreachableError as err:
            _LOGGER.debug("Discovered peer did not answer: %s", err)
            return self.async_abort(reason="cannot_connect")
        except (NotASatelliteError, NotWyomingError) as err:
            _LOGGER.debug("Discovered peer is not a satellite: %s", err)
            return self.async_abort(reason="not_a_satellite")

        await self.async_set_unique_id(identity.unique_id)
        self._abort_if_unique_id_configured(updates={CONF_HOST: host, CONF_PORT: port})
        self._abort_if_owned_by_wyoming(host, port)

        self._host, self._port = host, port
        self._name = _title(identity, host, port)
        self.context["title_placeholders"] = {"name": self._name}
        return await self.async_step_zeroconf_confirm()

    async def async_step_zeroconf_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Let the user confirm adding the discovered satellite."""
        assert self._host is not None
        assert self._port is not None
        assert self._name is not None
        if user_input is not None:
            return self.async_create_entry(
                title=self._name, data={CONF_HOST: self._host, CONF_PORT: self._port}
            )
        return self.async_show_form(
            step_id="zeroconf_confirm",
            description_placeholders={
                "name": self._name,
                "host": self._host,
                "port": str(self._port),
            },
        )

    # -- reconfigure ------------------------------------------------------------

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Change where the satellite is reached; it must stay the same satellite."""
        entry = self._get_reconfigure_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            host, port = _address(user_input)
            identity = await self._async_identify_form_input(host, port, errors)
            if identity is not None:
                self._abort_if_owned_by_wyoming(host, port)
                return await self._async_finish_reconfigure(identity, host, port)
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                STEP_USER_SCHEMA, user_input or entry.data
            ),
            description_placeholders={"name": entry.title},
            errors=errors,
        )

    async def _async_finish_reconfigure(
        self, identity: Identity, host: str, port: int
    ) -> ConfigFlowResult:
        """Point the entry at ``host``:``port`` if it is the same satellite."""
        entry = self._get_reconfigure_entry()
        await self.async_set_unique_id(identity.unique_id, raise_on_progress=False)
        # Entries made before satellites had ids have none to compare with.
        unverifiable = entry.unique_id in (
            None,
            address_unique_id(entry.data[CONF_HOST], entry.data[CONF_PORT]),
        )
        if not unverifiable:
            # A VoiceStack id proves who answers: it has to be the same one.
            self._abort_if_unique_id_mismatch(
                description_placeholders={
                    "name": entry.title,
                    "found": _title(identity, host, port),
                }
            )
            return self.async_update_reload_and_abort(
                entry, data_updates={CONF_HOST: host, CONF_PORT: port}
            )
        # A stock satellite was only known by its address, which is what changes
        # (or the entry had no id): take the new id unless another entry has it.
        owner = self.hass.config_entries.async_entry_for_domain_unique_id(
            DOMAIN, identity.unique_id
        )
        if owner is not None and owner.entry_id != entry.entry_id:
            raise AbortFlow("already_configured")
        return self.async_update_reload_and_abort(
            entry,
            unique_id=identity.unique_id,
            data_updates={CONF_HOST: host, CONF_PORT: port},
        )

    # -- shared checks ----------------------------------------------------------

    async def _async_identify_form_input(
        self, host: str, port: int, errors: dict[str, str]
    ) -> Identity | None:
        """Describe the satellite a form points at; a problem goes into ``errors``."""
        self._abort_if_address_used_by_other_entry(host, port)
        try:
            return await _async_identify_satellite(host, port)
        except PeerUnreachableError as err:
            _LOGGER.debug("Satellite did not answer: %s", err)
            errors["base"] = "cannot_connect"
        except (NotASatelliteError, NotWyomingError) as err:
            _LOGGER.debug("Not a satellite: %s", err)
            errors["base"] = "not_a_satellite"
        return None

    def _abort_if_address_used_by_other_entry(self, host: str, port: int) -> None:
        """Abort ``already_configured`` if another entry uses ``host``:``port``.

        The entry being reconfigured does not count: it may keep its address.
        """
        current = (
            self._get_reconfigure_entry().entry_id
            if self.source == SOURCE_RECONFIGURE
            else None
        )
        for entry in self._async_current_entries(include_ignore=False):
            if entry.entry_id != current and _same_address(entry.data, host, port):
                raise AbortFlow("already_configured")

    def _abort_if_owned_by_wyoming(self, host: str, port: int) -> None:
        """Abort ``owned_by_wyoming`` if the Wyoming integration has this address.

        A satellite serves one Home Assistant connection; two integrations
        connecting to it would take it from each other.
        """
        for entry in self.hass.config_entries.async_entries(WYOMING_DOMAIN):
            if entry.source != SOURCE_IGNORE and _same_address(entry.data, host, port):
                raise AbortFlow(
                    "owned_by_wyoming",
                    description_placeholders={
                        "title": entry.title,
                        "host": host,
                        "port": str(port),
                    },
                )


async def _async_identify_satellite(host: str, port: int) -> Identity:
    """Describe the peer; raise unless it answers as a satellite."""
    identity = await async_identify(host, port, DESCRIBE_TIMEOUT_S)
    if identity.satellite is None:
        raise NotASatelliteError(f"{host}:{port}")
    return identity


def _address(user_input: dict[str, Any]) -> tuple[str, int]:
    return user_input[CONF_HOST].strip(), int(user_input[CONF_PORT])


def _same_address(data: Any, host: str, port: int) -> bool:
    """Whether entry ``data`` points at ``host``:``port`` (host case-insensitive)."""
    other_host, other_port = data.get(CONF_HOST), data.get(CONF_PORT)
    return (
        isinstance(other_host, str)
        and other_host.strip().lower() == host.lower()
        and other_port == port
    )


def _title(identity: Identity, host: str, port: int) -> str:
    """The satellite's own name, else its address."""
    satellite = identity.satellite
    if satellite is not None and satellite.name:
        return satellite.name
    return f"{host}:{port}"
