"""The voice mode select of one device, a VoiceStack satellite's or an agent device's.

It shows the frame on top, or the listen mode when none is open, with the
whole stack in its attributes. Choosing a listen mode closes every frame;
choosing a frame opens it (or brings it to the top), as if the words had been
said. ``confirm`` only opens by itself, when an action needs a yes.
"""

from __future__ import annotations

from homeassistant.components.select import SelectEntity, SelectEntityDescription
from homeassistant.exceptions import ServiceValidationError

from ..const import DOMAIN
from .voice_modes import VoiceModes


class VoiceModeSelect(SelectEntity):
    """The mode of the router ``voice_modes`` gives (the subclass says whose)."""

    entity_description = SelectEntityDescription(key="mode", translation_key="mode")

    @property
    def voice_modes(self) -> VoiceModes | None:
        """The device's voice modes now (None: it has no router)."""
        raise NotImplementedError

    @property
    def current_option(self) -> str | None:
        """The router's mode."""
        modes = self.voice_modes
        return None if modes is None else modes.router.mode

    @property
    def extra_state_attributes(self) -> dict[str, object] | None:
        """The whole stack, base first, and the listen mode."""
        if (modes := self.voice_modes) is None:
            return None
        state = modes.router.state()
        return {"stack": list(state.stack), "listen_mode": str(state.listen_mode)}

    async def async_select_option(self, option: str) -> None:
        """Push or pop frames; a satellite says the result."""
        if option == "confirm":
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="confirm_not_selectable"
            )
        modes = self.voice_modes
        if modes is not None:  # (Home Assistant does not select unavailable ones)
            await modes.request(modes.router.select_mode(option))
