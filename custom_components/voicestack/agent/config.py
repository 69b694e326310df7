"""What an agent entry stores, and which wrapped agents it refuses.

The entry's data says it is an agent entry (``kind: agent``); its options hold
the wrapped agent (an agent id or a ``conversation`` entity id) and the router's
options, as a satellite's do. A VoiceStack agent cannot wrap a VoiceStack agent:
every request would go round until the recursion limit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er, selector
import voluptuous as vol

from ..const import DOMAIN

CONF_KIND: Final = "kind"
KIND_AGENT: Final = "agent"
CONF_WRAPPED_AGENT: Final = "wrapped_agent"
AGENT_TITLE: Final = "VoiceStack conversation agent"


def is_agent_entry(entry: ConfigEntry) -> bool:
    """The entry is a conversation agent, not a satellite."""
    return entry.data.get(CONF_KIND) == KIND_AGENT


def wrapped_agent_schema(current: Mapping[str, Any]) -> vol.Schema:
    """One field: the agent to wrap (HA's own agent picker)."""
    default = current.get(CONF_WRAPPED_AGENT, conversation.HOME_ASSISTANT_AGENT)
    return vol.Schema(
        {
            vol.Required(
                CONF_WRAPPED_AGENT, default=default
            ): selector.ConversationAgentSelector()
        }
    )


def wrapped_agent_errors(
    hass: HomeAssistant, user_input: Mapping[str, Any] | None
) -> dict[str, str]:
    """The form's errors for the agent picked (none: it can be wrapped).

    ``own_agent``: a VoiceStack agent; ``agent_not_found``: no such agent now.
    """
    if user_input is None:
        return {}
    agent_id = str(user_input[CONF_WRAPPED_AGENT])
    entity = er.async_get(hass).async_get(agent_id)
    if entity is not None and entity.platform == DOMAIN:
        return {CONF_WRAPPED_AGENT: "own_agent"}
    if conversation.async_get_agent(hass, agent_id) is None:
        return {CONF_WRAPPED_AGENT: "agent_not_found"}
    return {}
