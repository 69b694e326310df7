"""Each agent device's entities: added when its router is made.

A device that talks through the agent gets its mode select and sensors the
first time it asks (``AgentRuntime`` makes its router and calls ``device_made``).
The select and sensor platforms hand their ``async_add_entities`` here
(``add_platform``) and it stays in the entry's runtime data, so entities are
added long after the platforms were set up, as Home Assistant's dynamic
platforms do. Where they show: ``device_entity.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from homeassistant.core import CALLBACK_TYPE, callback
from homeassistant.helpers.entity import Entity

from ..subscriptions import Subscribers

type EntityFactory = Callable[[str], Iterable[Entity]]
type AddEntities = Callable[[Iterable[Entity]], None]


class DeviceEntities:
    """The platforms' adders, which keys have entities, and who to tell of changes."""

    def __init__(self) -> None:
        """No platform yet, no device yet."""
        self._platforms: list[tuple[EntityFactory, AddEntities]] = []
        self._made: set[str] = set()  # keys whose entities were added
        self._listeners: dict[str, Subscribers[CALLBACK_TYPE]] = {}

    @callback
    def add_platform(self, factory: EntityFactory, add: AddEntities) -> None:
        """A platform is set up: its entities for every device so far, and later."""
        self._platforms.append((factory, add))
        for key in self._made:
            add(factory(key))

    @callback
    def device_made(self, key: str) -> None:
        """``key`` has a router now: its entities are added once, else updated."""
        if key in self._made:
            self.changed(key)
            return
        self._made.add(key)
        for factory, add in self._platforms:
            add(factory(key))

    @callback
    def changed(self, key: str) -> None:
        """``key``'s router changed (or closed): its entities write their state."""
        for listener in self._listeners.get(key, ()):
            listener()

    @callback
    def async_listen(self, key: str, listener: CALLBACK_TYPE) -> CALLBACK_TYPE:
        """Call ``listener`` on every change of ``key``; the remover."""
        return self._listeners.setdefault(key, Subscribers()).add(listener)

    @callback
    def forget(self, key: str) -> None:
        """``key``'s entities were removed with its device: made again if it asks."""
        self._made.discard(key)
