"""Sensors: announcement metrics, voice-mode figures, empty transcripts, barge-ins."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypedDict, cast

from homeassistant.components.sensor import (
    SensorDeviceClass,
    SensorEntity,
    SensorEntityDescription,
    SensorStateClass,
)
from homeassistant.const import EntityCategory, UnitOfTime
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.typing import StateType

from .agent.config import is_agent_entry
from .agent.runtime import AgentRuntime
from .agent.sensor import async_setup_agent_sensors
from .announce.satellites import SatelliteAnnouncements
from .barge_in.control import BargeInControl
from .conversation.sessions import Conversations
from .core.announce import MetricsSnapshot
from .core.conversation.follow_up import EndReason
from .entity import VoiceStackEntity
from .hub import SatelliteHub
from .modes.voice_modes import VoiceModes
from .runtime import VoiceStackConfigEntry

PARALLEL_UPDATES = 0


@dataclass(frozen=True, kw_only=True)
class MetricDescription(SensorEntityDescription):
    """A sensor reading one figure of the satellite's metrics."""

    value: Callable[[MetricsSnapshot], StateType | datetime]


def _when(snapshot: MetricsSnapshot) -> datetime | None:
    at = snapshot.last_spoken_at
    return None if at is None else datetime.fromtimestamp(at, UTC)


class _Kind(TypedDict, total=False):
    """What a kind of sensor (counter, latency) sets in its descriptions."""

    device_class: SensorDeviceClass
    entity_category: EntityCategory
    entity_registry_enabled_default: bool
    native_unit_of_measurement: str
    state_class: SensorStateClass
    suggested_display_precision: int


# Counters and latencies are for looking into a problem, not for acting on: off
# until a user enables them, so a satellite adds only the entities people use.
# Every figure is in the entry's diagnostics either way (the announcements' also
# in /api/voicestack/metrics).
DIAGNOSTIC: _Kind = {
    "entity_category": EntityCategory.DIAGNOSTIC,
    "entity_registry_enabled_default": False,
}
COUNTER: _Kind = {"state_class": SensorStateClass.TOTAL_INCREASING, **DIAGNOSTIC}
LATENCY: _Kind = {
    "device_class": SensorDeviceClass.DURATION,
    "native_unit_of_measurement": UnitOfTime.SECONDS,
    "state_class": SensorStateClass.MEASUREMENT,
    "suggested_display_precision": 2,
    **DIAGNOSTIC,
}
METRICS: tuple[MetricDescription, ...] = (
    MetricDescription(
        key="announcement_queue",
        translation_key="announcement_queue",
        state_class=SensorStateClass.MEASUREMENT,
        value=lambda s: s.queued,
    ),
    MetricDescription(
        key="announcements_received",
        translation_key="announcements_received",
        value=lambda s: s.received,
        **COUNTER,
    ),
    MetricDescription(
        key="announcements_spoken",
        translation_key="announcements_spoken",
        value=lambda s: s.spoken,
        **COUNTER,
    ),
    MetricDescription(
        key="announcements_coalesced",
        translation_key="announcements_coalesced",
        value=lambda s: s.coalesced,
        **COUNTER,
    ),
    MetricDescription(
        key="announcements_dropped",
        translation_key="announcements_dropped",
        value=lambda s: s.dropped_total,
        **COUNTER,
    ),
    MetricDescription(
        key="announcement_interrupts",
        translation_key="announcement_interrupts",
        value=lambda s: s.interrupts,
        **COUNTER,
    ),
    MetricDescription(
        key="announcement_latency_p50",
        translation_key="announcement_latency_p50",
        value=lambda s: s.latency_p50_s,
        **LATENCY,
    ),
    MetricDescription(
        key="announcement_latency_p95",
        translation_key="announcement_latency_p95",
        value=lambda s: s.latency_p95_s,
        **LATENCY,
    ),
    MetricDescription(
        key="last_announcement",
        translation_key="last_announcement",
        device_class=SensorDeviceClass.TIMESTAMP,
        value=_when,
    ),
)


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One sensor per figure and satellite.

    An agent entry's sensors are its devices' (``agent/sensor.py``).
    """
    if is_agent_entry(entry):
        async_setup_agent_sensors(
            cast("AgentRuntime", entry.runtime_data), async_add_entities
        )
        return
    runtime = entry.runtime_data
    async_add_entities(
        [
            *(AnnouncementMetric(runtime.announcements, d) for d in METRICS),
            *(ModesSensor(runtime.hub, runtime.modes, d) for d in MODE_SENSORS),
            FollowUpSensor(runtime.hub, runtime.conversations),
            *(
                BargeInSensor(runtime.hub, runtime.barge_in, d)
                for d in BARGE_IN_SENSORS
            ),
        ]
    )


class AnnouncementMetric(VoiceStackEntity, SensorEntity):
    """Updated whenever an announcement is received, said or dropped."""

    entity_description: MetricDescription

    def __init__(
        self, announcements: SatelliteAnnouncements, description: MetricDescription
    ) -> None:
        """``description`` says which figure."""
        self.entity_description = description
        self.announcements = announcements
        super().__init__(announcements.hub)

    @property
    def available(self) -> bool:
        """Counted also while the satellite is offline (messages wait then)."""
        return self.announcements.active

    @property
    def native_value(self) -> StateType | datetime:
        """The figure now."""
        return self.entity_description.value(self.announcements.announcer.snapshot())

    @property
    def extra_state_attributes(self) -> dict[str, int] | None:
        """Drops by reason, on the dropped sensor."""
        if self.entity_description.key != "announcements_dropped":
            return None
        dropped = self.announcements.announcer.snapshot().dropped
        return {str(reason): n for reason, n in dropped.items()}


@dataclass(frozen=True, kw_only=True)
class ModesDescription(SensorEntityDescription):
    """A sensor reading one figure of the satellite's voice modes."""

    value: Callable[[SatelliteHub, VoiceModes], int]


MODE_SENSORS: tuple[ModesDescription, ...] = (
    # Characters the open query, dictation or inventory holds (0: none open): a
    # dashboard shows dictation progress, an automation can warn before a long
    # dictation is lost to an abort.
    ModesDescription(
        key="gathered_text",
        translation_key="gathered_text",
        state_class=SensorStateClass.MEASUREMENT,
        value=lambda _hub, modes: modes.router.state().gathered_chars,
    ),
    # Entries waiting in the deferred queue (``voicestack.drain_queue`` empties it).
    ModesDescription(
        key="deferred_queue",
        translation_key="deferred_queue",
        state_class=SensorStateClass.MEASUREMENT,
        value=lambda _hub, modes: len(modes.queue),
    ),
    # Requests whose speech-to-text found no words: a wake word set off by the TV,
    # a mic too far away. Counted since Home Assistant started.
    ModesDescription(
        key="empty_transcripts",
        translation_key="empty_transcripts",
        value=lambda hub, _modes: hub.empty_transcripts,
        **COUNTER,
    ),
)


class ModesSensor(VoiceStackEntity, SensorEntity):
    """A voice-mode figure; kept in Home Assistant, so available while offline."""

    entity_description: ModesDescription

    def __init__(
        self, hub: SatelliteHub, modes: VoiceModes, description: ModesDescription
    ) -> None:
        """``description`` says which figure."""
        self.entity_description = description
        self.modes = modes
        super().__init__(hub)

    @property
    def available(self) -> bool:
        """Frames stay open and the queue stays kept while the satellite is away."""
        return True

    @property
    def native_value(self) -> int:
        """The figure now."""
        return self.entity_description.value(self.hub, self.modes)

    @property
    def extra_state_attributes(self) -> dict[str, str] | None:
        """The mode the gathered text belongs to."""
        if self.entity_description.key != "gathered_text":
            return None
        return {"mode": self.modes.router.mode}


class FollowUpSensor(VoiceStackEntity, SensorEntity):
    """The follow-up session: "turn 2 of 3" while one is open, else "idle".

    Its attributes count how sessions ended, by reason, since Home Assistant
    started: why the assistant stopped listening is never a mystery.
    """

    entity_description = SensorEntityDescription(
        key="follow_up", translation_key="follow_up"
    )

    def __init__(self, hub: SatelliteHub, conversations: Conversations) -> None:
        """Shows ``conversations``' loop."""
        self.conversations = conversations
        super().__init__(hub)

    @property
    def available(self) -> bool:
        """Kept in Home Assistant: meaningful while the satellite is away too."""
        return True

    @property
    def native_value(self) -> str:
        """``turn 2 of 3`` or ``idle``."""
        return self.conversations.loop.status.text

    @property
    def extra_state_attributes(self) -> dict[str, object]:
        """The open session, the mode, and every end reason's count."""
        status = self.conversations.loop.status
        return {
            "session_id": status.session_id,
            "mode": str(status.mode),
            "buffering": self.conversations.buffer.buffering,
            "fragments_dropped": self.conversations.fragments_dropped,
            **{
                f"ended_{reason}": self.conversations.ends[reason]
                for reason in EndReason
            },
        }


# Barge-in counters since Home Assistant started: how often speech paused an
# answer, and how each pause ended (core/barge_in_policy's BargeInKind).
BARGE_IN_SENSORS: tuple[SensorEntityDescription, ...] = tuple(
    SensorEntityDescription(
        key=f"barge_in_{counter}", translation_key=f"barge_in_{counter}", **COUNTER
    )
    for counter in ("pauses", "checks", "resumes", "stops", "silences", "timeouts")
)


class BargeInSensor(VoiceStackEntity, SensorEntity):
    """One barge-in counter; kept in Home Assistant, so available while offline."""

    def __init__(
        self,
        hub: SatelliteHub,
        control: BargeInControl,
        description: SensorEntityDescription,
    ) -> None:
        """``description`` says which counter."""
        self.entity_description = description
        self._control = control
        super().__init__(hub)

    async def async_added_to_hass(self) -> None:
        """Follow the barge-in records too."""
        await super().async_added_to_hass()
        self.async_on_remove(self._control.async_add_listener(self._hub_changed))

    @property
    def available(self) -> bool:
        """Counted in Home Assistant."""
        return True

    @property
    def native_value(self) -> int:
        """The count now."""
        return self._control.counters[
            self.entity_description.key.removeprefix("barge_in_")
        ]
