"""An agent device's voice mode select (the select platform of an agent entry).

The same select as a VoiceStack satellite's (``modes/mode_select.py``), minus
what a device VoiceStack does not drive cannot do: always listening (its
microphone waits for its own wake word) and the voice picker (its TTS voice is
its pipeline's). Selecting says nothing (Home Assistant gives an agent no way
to speak to a device on its own); the device's next request meets the mode.
"""

from __future__ import annotations

from homeassistant.core import callback
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from ..core.router import MODES, ListenMode
from ..modes.mode_select import VoiceModeSelect
from ..modes.voice_modes import VoiceModes
from .device_entity import AgentDeviceEntity, Placement, async_add_device_entities
from .runtime import AgentRuntime

AGENT_MODES = tuple(
    mode
    for mode in MODES
    if mode not in (ListenMode.ALWAYS_LISTENING.value, "voice_picker")
)


@callback
def async_setup_agent_selects(
    runtime: AgentRuntime, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Each device's select, as its router is made."""
    async_add_device_entities(
        runtime,
        lambda key, placed: [AgentModeSelect(runtime, key, placed)],
        async_add_entities,
    )


class AgentModeSelect(AgentDeviceEntity, VoiceModeSelect):
    """One agent device's voice mode."""

    def __init__(self, runtime: AgentRuntime, key: str, placed: Placement) -> None:
        """The modes such a device can use."""
        super().__init__(runtime, key, placed)
        self._attr_options = list(AGENT_MODES)

    @property
    def voice_modes(self) -> VoiceModes | None:
        """The device's router, while it has one."""
        found = self.found
        return None if found is None else found.modes
