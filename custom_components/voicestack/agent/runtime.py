"""What a loaded agent entry holds (``entry.runtime_data``): one router per device.

Each device that talks to the agent gets its own ``VoiceModes`` (frames, timers,
a confirmation waiting for its yes) the first time it asks, keyed by
``device_key``. All devices of the entry share its options, its notes file and
its deferred queue. At most ``MAX_DEVICES`` routers live at once; the one asked
least recently closes (without submitting) to make room.

A route no request caused (a confirmation that expired, a query submitted on
silence) cannot be said to a device VoiceStack does not drive: it waits and is
acted on (said, and the agent asked if it says so) before that device's next
request.

Making a router adds the device's entities (``device_entities.py``); closing
one to make room leaves them unavailable until the device asks again.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Final

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant

from ..core.router.route import Route
from ..deferred_queue import DeferredQueueStore
from ..modes.voice_modes import VoiceModes
from .device import AgentDevice
from .device_entities import DeviceEntities

MAX_DEVICES: Final = 64
TEXT_KEY: Final = "text"  # requests that name no device (a text client, the API)


def device_key(user_input: conversation.ConversationInput) -> str:
    """Whose router handles the request: the device, else the satellite, else text."""
    return user_input.device_id or user_input.satellite_id or TEXT_KEY


@dataclass(slots=True)
class DeviceModes:
    """One device's router and the routes waiting for its next request."""

    device: AgentDevice
    modes: VoiceModes
    pending: list[Route] = field(default_factory=list)

    def take_pending(self) -> list[Route]:
        """The routes that waited (handed out once)."""
        routes, self.pending = self.pending, []
        return routes


class AgentRuntime:
    """The routers of one agent entry, per device."""

    def __init__(
        self, hass: HomeAssistant, entry: ConfigEntry, queue: DeferredQueueStore
    ) -> None:
        """No device has asked yet."""
        self.hass = hass
        self.entry = entry
        self.queue = queue
        self._devices: OrderedDict[str, DeviceModes] = OrderedDict()
        self.entities = DeviceEntities()

    @property
    def devices(self) -> dict[str, DeviceModes]:
        """The devices with a router now (least recently asked first)."""
        return dict(self._devices)

    def get(self, key: str) -> DeviceModes | None:
        """The router of ``key`` if it has one now."""
        return self._devices.get(key)

    def for_request(
        self, user_input: conversation.ConversationInput, wrapped: str
    ) -> DeviceModes:
        """The router of the device asking (made on its first request)."""
        found = self.device(device_key(user_input), wrapped)
        found.device.begin(user_input)
        return found

    def device(self, key: str, wrapped: str) -> DeviceModes:
        """The router of ``key``, made if it has none; now the most recent."""
        found = self._devices.get(key)
        if found is None:
            found = self._add(key, wrapped)
        self._devices.move_to_end(key)
        return found

    def _add(self, key: str, wrapped: str) -> DeviceModes:
        while len(self._devices) >= MAX_DEVICES:
            old_key, oldest = self._devices.popitem(last=False)
            self.entities.changed(old_key)
            self.entry.async_create_background_task(
                self.hass, oldest.modes.close(), "voicestack agent router closed"
            )
        device = AgentDevice(
            self.entry, key, wrapped, lambda: self.entities.changed(key)
        )
        entry = DeviceModes(device, VoiceModes(self.hass, device, self.queue))

        async def later(route: Route) -> None:
            entry.pending.append(route)
            device.notify()

        entry.modes.async_subscribe_routes(later)
        self._devices[key] = entry
        self.entities.device_made(key)
        return entry

    async def close(self) -> None:
        """Unload: every router closes without submitting."""
        devices = list(self._devices.values())
        self._devices.clear()
        for found in devices:
            await found.modes.close()
