"""Per satellite: mute, recording requests, and barge-in's three switches.

Mute: the satellite stops listening for the wake word until unmuted. Record
requests: every request's audio and what became of it is kept for the debug
panel (off by default: it keeps what people said, on disk). Barge-in: speech
may interrupt an answer; the voice gate tells the enrolled user from the TV;
echo cancellation keeps the answer from interrupting itself (off: the mic is
gated while the speaker is loud instead). See docs/barge-in.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from homeassistant.components.switch import SwitchEntity, SwitchEntityDescription
from homeassistant.const import STATE_OFF, STATE_ON, EntityCategory
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.helpers.restore_state import RestoreEntity

from .barge_in.control import BargeInControl
from .entity import VoiceStackSettingEntity
from .hub import SatelliteHub
from .recording.recorder import RequestRecorder
from .runtime import VoiceStackConfigEntry

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """A mute, a record and the barge-in switches per satellite."""
    runtime = entry.runtime_data
    async_add_entities(
        [
            MuteSwitch(runtime.hub),
            RecordRequestsSwitch(runtime.hub, runtime.recorder),
            *(
                BargeInSwitch(runtime.hub, runtime.barge_in, description)
                for description in BARGE_IN_SWITCHES
            ),
        ]
    )


class MuteSwitch(VoiceStackSettingEntity, SwitchEntity, RestoreEntity):
    """Muted survives restarts and reconnects (the hub re-applies it)."""

    entity_description = SwitchEntityDescription(
        key="mute", translation_key="mute", entity_category=EntityCategory.CONFIG
    )

    async def async_added_to_hass(self) -> None:
        """Restore the last state."""
        await super().async_added_to_hass()
        state = await self.async_get_last_state()
        if state is not None and state.state == STATE_ON:
            await self.hub.async_set_muted(True)

    @property
    def is_on(self) -> bool:
        """Muted."""
        return self.hub.muted

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Mute."""
        await self.hub.async_set_muted(True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Unmute."""
        await self.hub.async_set_muted(False)


class RecordRequestsSwitch(VoiceStackSettingEntity, SwitchEntity, RestoreEntity):
    """Record every request (off by default); survives restarts."""

    entity_description = SwitchEntityDescription(
        key="record_requests",
        translation_key="record_requests",
        entity_category=EntityCategory.CONFIG,
    )

    def __init__(self, hub: SatelliteHub, recorder: RequestRecorder) -> None:
        """Turn ``recorder`` on and off."""
        super().__init__(hub)
        self._recorder = recorder

    async def async_added_to_hass(self) -> None:
        """Restore the last state."""
        await super().async_added_to_hass()
        state = await self.async_get_last_state()
        self._recorder.enabled = state is not None and state.state == STATE_ON

    @property
    def is_on(self) -> bool:
        """Requests are recorded."""
        return self._recorder.enabled

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Record from the next request on."""
        self._recorder.enabled = True
        self.async_write_ha_state()

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Record no more requests (the one running is still saved)."""
        self._recorder.enabled = False
        self.async_write_ha_state()


@dataclass(frozen=True, kw_only=True)
class BargeInSwitchDescription(SwitchEntityDescription):
    """A switch over one ``BargeInSettings`` field (all on by default)."""

    setting: str


# The gate that tells who talks is the *voice* gate (a speaker is what plays);
# its key, and so its unique id, keeps the first name, so installed switches stay.
BARGE_IN_SWITCHES = tuple(
    BargeInSwitchDescription(
        key=key,
        translation_key=translation_key,
        entity_category=EntityCategory.CONFIG,
        setting=setting,
    )
    for key, translation_key, setting in (
        ("barge_in", "barge_in", "enabled"),
        ("speaker_gate", "voice_gate", "gate"),
        ("echo_cancellation", "echo_cancellation", "echo_cancel"),
    )
)


class BargeInSwitch(VoiceStackSettingEntity, SwitchEntity, RestoreEntity):
    """One barge-in setting; survives restarts; the satellite hears it at once."""

    entity_description: BargeInSwitchDescription

    def __init__(
        self,
        hub: SatelliteHub,
        control: BargeInControl,
        description: BargeInSwitchDescription,
    ) -> None:
        """Switch ``description.setting`` of ``control``."""
        self.entity_description = description
        super().__init__(hub)
        self._control = control

    async def async_added_to_hass(self) -> None:
        """Restore the last state (on when there is none)."""
        await super().async_added_to_hass()
        state = await self.async_get_last_state()
        if state is not None and state.state in (STATE_ON, STATE_OFF):
            self._control.update(
                **{self.entity_description.setting: state.state == STATE_ON}
            )

    @property
    def is_on(self) -> bool:
        """The setting is on."""
        return bool(getattr(self._control.settings, self.entity_description.setting))

    async def async_turn_on(self, **kwargs: Any) -> None:
        """Turn the setting on."""
        self._set(True)

    async def async_turn_off(self, **kwargs: Any) -> None:
        """Turn the setting off."""
        self._set(False)

    def _set(self, on: bool) -> None:
        self._control.update(**{self.entity_description.setting: on})
        self.async_write_ha_state()
