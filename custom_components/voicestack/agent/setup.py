"""Loading and unloading an agent entry (``__init__.py`` hands agent entries here).

An agent entry has no satellite to reach: it loads at once, with its deferred
queue, a router per device as devices ask (and at once for the devices that
had entities, ``device_entity.py``), its one ``conversation`` entity and the
devices' selects and sensors.

Any change of its options (the wrapped agent, the router's) reloads it, which
closes every device's frames without submitting.
"""

from __future__ import annotations

from typing import Final

from homeassistant.const import Platform
from homeassistant.core import HomeAssistant

from ..deferred_queue import DeferredQueueStore
from .config import CONF_WRAPPED_AGENT
from .device_entity import known_keys
from .entity import AgentConfigEntry
from .runtime import AgentRuntime

AGENT_PLATFORMS: Final = [Platform.CONVERSATION, Platform.SELECT, Platform.SENSOR]


async def async_setup_agent_entry(hass: HomeAssistant, entry: AgentConfigEntry) -> bool:
    """The runtime (with the known devices' routers), then the entities."""
    queue = DeferredQueueStore(hass, entry.entry_id, lambda: None)
    await queue.async_load()
    runtime = AgentRuntime(hass, entry, queue)
    entry.runtime_data = runtime
    for key in known_keys(hass, entry.entry_id):  # their selects work at once
        runtime.device(key, entry.options[CONF_WRAPPED_AGENT])
    entry.async_on_unload(runtime.close)
    entry.async_on_unload(entry.add_update_listener(_options_updated))
    await hass.config_entries.async_forward_entry_setups(entry, AGENT_PLATFORMS)
    return True


async def async_unload_agent_entry(
    hass: HomeAssistant, entry: AgentConfigEntry
) -> bool:
    """The entity goes; the routers close through ``async_on_unload``."""
    return await hass.config_entries.async_unload_platforms(entry, AGENT_PLATFORMS)


async def _options_updated(hass: HomeAssistant, entry: AgentConfigEntry) -> None:
    hass.config_entries.async_schedule_reload(entry.entry_id)
