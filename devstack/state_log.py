"""The one log of assist_satellite states, as Home Assistant wrote them.

Tests ask it for the sequence of states and whether an answer finished; the demo
and the benchmarks ask when an entity entered a state. Times are wall-clock
seconds (``time.time()``), the clock the satellite reports its own states in.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
import time

from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import Event, EventStateChangedData, callback


@dataclass(slots=True)
class SatelliteStateLog:
    """State changes of assist_satellite entities: (time, entity id, state)."""

    changes: list[tuple[float, str, str]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @callback
    def record(self, event: Event[EventStateChangedData]) -> None:
        """Listener for ``state_changed``."""
        new = event.data["new_state"]
        if new is not None and new.domain == "assist_satellite":
            self.changes.append((time.time(), new.entity_id, new.state))
            self.changed.set()

    def first(self, entity_id: str, state: str, after: float) -> float | None:
        """When ``entity_id`` first entered ``state`` after ``after``."""
        return next(
            (
                at
                for at, eid, s in self.changes
                if eid == entity_id and s == state and at >= after
            ),
            None,
        )

    def names(self) -> list[str]:
        """States in order, repeats collapsed."""
        names: list[str] = []
        for _at, _entity_id, state in self.changes:
            if not names or names[-1] != state:
                names.append(state)
        return names

    def last_entered(self, state: str) -> float:
        """When an entity last entered ``state``."""
        return max(at for at, _entity_id, s in self.changes if s == state)

    def answered(self) -> bool:
        """An entity responded and is idle again."""
        names = self.names()
        return (
            AssistSatelliteState.RESPONDING in names
            and names[-1] == AssistSatelliteState.IDLE
        )
