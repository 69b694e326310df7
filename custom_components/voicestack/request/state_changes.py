"""Which entities a request changed, told by Home Assistant's contexts.

Whatever acts for a request (the default agent's intents, an LLM agent's
intent tools, a service it calls) writes states in the request's context, or in
one whose parent it is. Watching the state changes while the agent answers
tells whether the turn changed something, whichever agent it was: an LLM
agent's response does not list what its tools did.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from homeassistant.const import EVENT_STATE_CHANGED
from homeassistant.core import (
    Context,
    Event,
    EventStateChangedData,
    HomeAssistant,
    callback,
)


@contextmanager
def states_changed_in(hass: HomeAssistant, context: Context) -> Iterator[list[str]]:
    """The entity ids whose state ``context`` (or a child of it) changed meanwhile."""
    changed: list[str] = []

    @callback
    def on_change(event: Event[EventStateChangedData]) -> None:
        if context.id in (event.context.id, event.context.parent_id):
            changed.append(event.data["entity_id"])

    remove = hass.bus.async_listen(EVENT_STATE_CHANGED, on_change)
    try:
        yield changed
    finally:
        remove()
