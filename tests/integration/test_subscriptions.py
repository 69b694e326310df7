"""The glue's subscriptions: each remover removes once, and an unload leaves none."""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant

from custom_components.voicestack.subscriptions import Subscribers
from devstack import speech
from devstack.satellite import satellite
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack

SATELLITE = "assist_satellite.test_satellite"


def test_a_subscriber_may_leave_while_being_told_and_leaves_once() -> None:
    heard: list[str] = []
    subscribers = Subscribers[str]()
    remove_first = subscribers.add("first")
    subscribers.add("second")

    for name in subscribers:
        heard.append(name)
        remove_first()  # while the others are being told
    remove_first()  # a second time: nothing happens

    assert heard == ["first", "second"]
    assert list(subscribers) == ["second"]
    assert len(subscribers) == 1


async def test_unloading_an_entry_leaves_no_subscriber_behind(
    hass: HomeAssistant, tmp_path: Path
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with AsyncExitStack() as stack:
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(wav))
        )
        entry = await add_voicestack(hass, stack, sat)
        await wait_for(lambda: hass.states.get(SATELLITE).state == "idle", 10, "up")
        runtime = runtime_of(entry)
        hub = runtime.hub
        loaded = (
            len(hub._event_listeners),
            len(hub._connection_listeners),
            len(runtime.speech._subscribers),
            len(runtime.modes._route_handlers),
        )

        assert await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_block_till_done()

        assert entry.state is ConfigEntryState.NOT_LOADED
        # While loaded: the entity, the local announce requests and barge-in
        # hear events; the entity hears the connection and speech; the
        # entity, the modes, the announcements and barge-in follow the
        # connection.
        assert loaded == (3, 4, 1, 1)
        assert len(hub._event_listeners) == 0
        assert len(hub._connection_listeners) == 0
        assert len(hub._listeners) == 0
        assert len(runtime.speech._subscribers) == 0
        assert len(runtime.modes._route_handlers) == 0
