"""The base of an agent device's entities, and where they show (``placement``).

A key that is a registered device (a Voice PE, a stock Wyoming satellite) shows
its entities on that device's page, through ``Entity.device_entry``: Home
Assistant core's way to put a helper's entity on another integration's device
(the device keeps its own config entry; a ``device_info`` with that device's
identifiers is deprecated in 2026.11 and would add our entry to it). The
``text`` key (requests that name no device: typed Assist, the API) shows them
on the agent's own device. A key that names no registered device (a satellite
entity without a device, an id an API caller made up) gets none: every assist
satellite Home Assistant ships has a device, and a device made per unknown id
would collect junk devices. Its modes work all the same.

An entity on another integration's device is removed with that device (Home
Assistant would keep it, without a device). An entity is available while its
device has a router: not after the router closed to make room for another
device (``MAX_DEVICES``), until it asks again. When the entry loads (a restart,
a reload after new options), each device that had entities gets a fresh router
at once (``known_keys``): its select shows, and sets, the mode its next request
meets before it has asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.helpers.device_registry import DeviceInfo
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from ..const import DOMAIN
from .runtime import TEXT_KEY, AgentRuntime, DeviceModes


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one key's entities show: another integration's device, or our own."""

    device_id: str | None = None
    info: DeviceInfo | None = None


def placement(hass: HomeAssistant, entry_id: str, key: str) -> Placement | None:
    """The device ``key``'s entities show on (None: they are not made)."""
    if key == TEXT_KEY:
        return Placement(info=DeviceInfo(identifiers={(DOMAIN, entry_id)}))
    devices = dr.async_get(hass)
    device = devices.async_get(key)
    if device is None:  # a satellite's entity id: its device, if it has one
        registered = er.async_get(hass).async_get(key)
        if registered is not None and registered.device_id is not None:
            device = devices.async_get(registered.device_id)
    return None if device is None else Placement(device_id=device.id)


def unique_id(entry_id: str, key: str, description_key: str) -> str:
    """``<entry>-<key>-<description key>`` (description keys have no ``-``)."""
    return f"{entry_id}-{key}-{description_key}"


def known_keys(hass: HomeAssistant, entry_id: str) -> list[str]:
    """The device keys that had a mode select in this entry (the registry keeps it)."""
    keys = []
    for registered in er.async_entries_for_config_entry(er.async_get(hass), entry_id):
        rest = registered.unique_id.removeprefix(f"{entry_id}-")
        key, _, description_key = rest.rpartition("-")
        if registered.domain == "select" and description_key == "mode" and key:
            keys.append(key)
    return keys


@callback
def async_add_device_entities(
    runtime: AgentRuntime,
    make: Callable[[str, Placement], Iterable[Entity]],
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """A platform's entities (``make``) for each device that has a place to show them.

    Added as each device's router is made, from now on.
    """

    def entities(key: str) -> Iterable[Entity]:
        placed = placement(runtime.hass, runtime.entry.entry_id, key)
        return [] if placed is None else make(key, placed)

    runtime.entities.add_platform(entities, async_add_entities)


class AgentDeviceEntity(Entity):
    """One device key's entity of an agent entry."""

    _attr_has_entity_name = True
    _attr_should_poll = False

    def __init__(self, runtime: AgentRuntime, key: str, placed: Placement) -> None:
        """Keyed on the entry, the device key and the description."""
        self.runtime = runtime
        self.key = key
        self._attr_unique_id = unique_id(
            runtime.entry.entry_id, key, self.entity_description.key
        )
        if placed.device_id is not None:
            self.device_entry = dr.async_get(runtime.hass).async_get(placed.device_id)
        self._attr_device_info = placed.info
        self._placed_on_device = placed.device_id is not None

    @property
    def found(self) -> DeviceModes | None:
        """The device's router now (None: closed to make room)."""
        return self.runtime.get(self.key)

    @property
    def available(self) -> bool:
        """While the device has a router."""
        return self.found is not None

    async def async_added_to_hass(self) -> None:
        """Follow the device's router."""
        await super().async_added_to_hass()
        entities = self.runtime.entities
        self.async_on_remove(entities.async_listen(self.key, self._changed))

    @callback
    def async_registry_entry_updated(self) -> None:
        """Its device was removed: Home Assistant keeps the entity without one.

        The key's entities go then (the disabled ones too), once Home Assistant
        is done updating them all.
        """
        registered = self.registry_entry
        if self._placed_on_device and registered and registered.device_id is None:
            self.hass.loop.call_soon(self._remove_key_entities)

    @callback
    def _remove_key_entities(self) -> None:
        self.runtime.entities.forget(self.key)
        registry = er.async_get(self.hass)
        entry_id = self.runtime.entry.entry_id
        prefix = unique_id(entry_id, self.key, "")
        for registered in er.async_entries_for_config_entry(registry, entry_id):
            if registered.unique_id.startswith(prefix):
                registry.async_remove(registered.entity_id)

    @callback
    def _changed(self) -> None:
        self.async_write_ha_state()
