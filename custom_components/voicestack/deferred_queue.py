"""The deferred queue: submissions saved for later, kept across restarts.

A frame whose destination is ``queue`` puts one entry here per submission (the
router's ``QueueTarget``). Entries are written with Home Assistant's ``Store``
before the satellite says "saved", so a restart loses nothing;
``voicestack.drain_queue`` returns them and empties the queue; a sensor shows its
length.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers.storage import Store

from .const import DOMAIN

STORAGE_VERSION = 1
MAX_ENTRIES = 1000  # a runaway automation must not fill the disk


class QueueFullError(Exception):
    """The queue holds ``MAX_ENTRIES``; drain it first."""


class DeferredQueueStore:
    """One satellite's queue, persisted per config entry."""

    def __init__(
        self, hass: HomeAssistant, entry_id: str, on_change: Callable[[], None]
    ) -> None:
        """Empty until ``async_load``."""
        self._store: Store[list[dict[str, Any]]] = Store(
            hass, STORAGE_VERSION, f"{DOMAIN}.{entry_id}.deferred"
        )
        self._entries: list[dict[str, Any]] = []
        self._lock = asyncio.Lock()
        self._on_change = on_change

    def __len__(self) -> int:
        """How many entries wait."""
        return len(self._entries)

    async def async_load(self) -> None:
        """Read what an earlier run left (nothing on a first start)."""
        self._entries = list(await self._store.async_load() or [])

    async def put(self, entry: dict[str, Any]) -> int:
        """Append ``entry`` and save it; the new length."""
        async with self._lock:
            if len(self._entries) >= MAX_ENTRIES:
                raise QueueFullError(f"the queue already holds {MAX_ENTRIES} entries")
            self._entries.append(entry)
            await self._store.async_save(self._entries)
            length = len(self._entries)
        self._on_change()
        return length

    async def drain(self) -> list[dict[str, Any]]:
        """Every entry, oldest first; the queue is empty (and saved so) afterwards."""
        async with self._lock:
            drained, self._entries = self._entries, []
            await self._store.async_save(self._entries)
        self._on_change()
        return drained

    async def async_remove(self) -> None:
        """The entry was deleted: delete the file too."""
        await self._store.async_remove()
