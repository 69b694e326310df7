"""An agent device's sensors (the sensor platform of an agent entry).

- ``gathered_text``: characters the open query, dictation or inventory holds
  (0: none open), as on a VoiceStack satellite.
- ``last_request`` (diagnostic): when the device last asked through the agent.
- ``waiting_replies`` (diagnostic): what waits to be said before its next
  answer (a confirmation that expired; see ``runtime.py``).

The diagnostic ones are off until a user enables them: they are for looking
into a problem, not for acting on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypedDict

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.const import EntityCategory
from homeassistant.core import callback
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .device_entity import AgentDeviceEntity, Placement, async_add_device_entities
from .runtime import AgentRuntime, DeviceModes


@dataclass(frozen=True, kw_only=True)
class AgentSensorDescription(SensorEntityDescription):
    """A sensor reading one figure of a device's router."""

    value: Callable[[DeviceModes], int | datetime | None]


class _Diagnostic(TypedDict):
    """For looking into a problem: off until a user enables it."""

    entity_category: EntityCategory
    entity_registry_enabled_default: bool


DIAGNOSTIC: _Diagnostic = {
    "entity_category": EntityCategory.DIAGNOSTIC,
    "entity_registry_enabled_default": False,
}
SENSORS: tuple[AgentSensorDescription, ...] = (
    AgentSensorDescription(
        key="gathered_text",
        translation_key="gathered_text",
        state_class=SensorStateClass.MEASUREMENT,
        value=lambda found: found.modes.router.state().gathered_chars,
    ),
    AgentSensorDescription(
        key="last_request",
        translation_key="last_request",
        device_class=SensorDeviceClass.TIMESTAMP,
        value=lambda found: found.device.last_request,
        **DIAGNOSTIC,
    ),
    AgentSensorDescription(
        key="waiting_replies",
        translation_key="waiting_replies",
        state_class=SensorStateClass.MEASUREMENT,
        value=lambda found: len(found.pending),
        **DIAGNOSTIC,
    ),
)


@callback
def async_setup_agent_sensors(
    runtime: AgentRuntime, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Each device's sensors, as its router is made."""
    async_add_device_entities(
        runtime,
        lambda key, placed: [AgentSensor(runtime, key, placed, d) for d in SENSORS],
        async_add_entities,
    )


class AgentSensor(AgentDeviceEntity, SensorEntity):
    """One figure of an agent device's router."""

    entity_description: AgentSensorDescription

    def __init__(
        self,
        runtime: AgentRuntime,
        key: str,
        placed: Placement,
        description: AgentSensorDescription,
    ) -> None:
        """``description`` says which figure."""
        self.entity_description = description
        super().__init__(runtime, key, placed)

    @property
    def native_value(self) -> int | datetime | None:
        """The figure now."""
        found = self.found
        return None if found is None else self.entity_description.value(found)

    @property
    def extra_state_attributes(self) -> dict[str, str] | None:
        """The mode the gathered text belongs to."""
        found = self.found
        if found is None or self.entity_description.key != "gathered_text":
            return None
        return {"mode": found.modes.router.mode}
