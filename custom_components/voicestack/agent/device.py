"""One Assist device as the voice modes see it, through the conversation agent.

Home Assistant tells the agent, per request, which device asks (``device_id``),
through which assist satellite entity (``satellite_id``), in which language and
context; ``begin`` takes them in. The wrapped agent is the entry's. ``notify``
tells the device's entities (``device_entities.py``) that its modes changed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import Context
from homeassistant.util import dt as dt_util


class AgentDevice:
    """``ModesDevice`` for one device key of an agent entry."""

    def __init__(
        self,
        entry: ConfigEntry,
        key: str,
        wrapped: str,
        changed: Callable[[], None],
    ) -> None:
        """No request yet: the default language, a fresh context.

        ``changed``: called whenever the modes or the last request change.
        """
        self._entry = entry
        self.key = key
        self.wrapped = wrapped
        self._changed = changed
        self.last_request: datetime | None = None
        self._context = Context()
        self._device_id: str | None = None
        self._satellite_id: str | None = None
        self._language = ""

    def begin(self, user_input: conversation.ConversationInput) -> None:
        """A request from this device starts: what HA says about it."""
        self._context = user_input.context
        self._device_id = user_input.device_id
        self._satellite_id = user_input.satellite_id
        self._language = user_input.language
        self.last_request = dt_util.utcnow()
        self._changed()

    @property
    def entry(self) -> ConfigEntry:
        """The agent's entry."""
        return self._entry

    @property
    def name(self) -> str:
        """The entry's title and the device key, for logs."""
        return f"{self._entry.title} ({self.key})"

    @property
    def context(self) -> Context:
        """The current request's context."""
        return self._context

    def device_id(self) -> str | None:
        """The asking device (None: a text client without one)."""
        return self._device_id

    def entity_id(self) -> str | None:
        """The assist satellite entity it asked through, if any."""
        return self._satellite_id

    def agent_id(self) -> str | None:
        """The wrapped agent."""
        return self.wrapped

    def language(self) -> str:
        """The request's language."""
        return self._language

    def notify(self) -> None:
        """The mode stack changed: the device's entities show it."""
        self._changed()
