"""An agent entry's options: the wrapped agent, and the router's forms.

The same router forms as a satellite's (``options_flow.py``: modes, vocabulary,
shortcuts, conversations: the follow-up loop, ``follow_up.py``); the
announcer, recording and voice forms are a satellite's and are not offered.
"""

from __future__ import annotations

from typing import Any, Final

from homeassistant.config_entries import ConfigFlowResult

from ..options_flow import VoiceStackOptionsFlow
from .config import CONF_WRAPPED_AGENT, wrapped_agent_errors, wrapped_agent_schema

AGENT_MENU: Final = ("agent", "modes", "vocabulary", "shortcuts", "conversations")


class AgentOptionsFlow(VoiceStackOptionsFlow):
    """Edit an agent entry's wrapped agent and router options."""

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The agent's menu."""
        return self.async_show_menu(step_id="init", menu_options=list(AGENT_MENU))

    async def async_step_agent(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick another agent to wrap; VoiceStack's own agent is refused."""
        errors = wrapped_agent_errors(self.hass, user_input)
        if user_input is not None and not errors:
            return self._save({CONF_WRAPPED_AGENT: user_input[CONF_WRAPPED_AGENT]})
        return self.async_show_form(
            step_id="agent",
            data_schema=wrapped_agent_schema(user_input or self.config_entry.options),
            errors=errors,
        )
