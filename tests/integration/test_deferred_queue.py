"""The deferred queue's store: durable, bounded, drained oldest first."""

from __future__ import annotations

from homeassistant.core import HomeAssistant
import pytest

from custom_components.voicestack import deferred_queue
from custom_components.voicestack.deferred_queue import (
    DeferredQueueStore,
    QueueFullError,
)


async def test_entries_survive_a_new_store_and_drain_oldest_first(
    hass: HomeAssistant,
) -> None:
    changes: list[None] = []
    queue = DeferredQueueStore(hass, "entry1", lambda: changes.append(None))
    await queue.async_load()
    assert await queue.put({"text": "first"}) == 1
    assert await queue.put({"text": "second"}) == 2

    again = DeferredQueueStore(hass, "entry1", lambda: None)
    await again.async_load()

    assert len(again) == 2
    assert await again.drain() == [{"text": "first"}, {"text": "second"}]
    assert len(again) == 0
    assert len(changes) == 2
    after_drain = DeferredQueueStore(hass, "entry1", lambda: None)
    await after_drain.async_load()
    assert len(after_drain) == 0


async def test_a_full_queue_refuses_rather_than_drops(
    hass: HomeAssistant, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deferred_queue, "MAX_ENTRIES", 2)
    queue = DeferredQueueStore(hass, "entry2", lambda: None)
    await queue.async_load()
    await queue.put({"text": "one"})
    await queue.put({"text": "two"})

    with pytest.raises(QueueFullError, match="already holds 2 entries"):
        await queue.put({"text": "three"})

    assert [entry["text"] for entry in await queue.drain()] == ["one", "two"]


async def test_removing_the_entry_deletes_the_file(hass: HomeAssistant) -> None:
    queue = DeferredQueueStore(hass, "entry3", lambda: None)
    await queue.async_load()
    await queue.put({"text": "one"})

    await queue.async_remove()
    fresh = DeferredQueueStore(hass, "entry3", lambda: None)
    await fresh.async_load()

    assert len(fresh) == 0
