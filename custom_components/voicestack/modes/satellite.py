"""A VoiceStack satellite as the voice modes see it (``ModesDevice`` + controls).

Everything comes from its hub: the pipeline chosen on its select gives the agent,
the language and the TTS engine whose voices the picker offers; the listen mode
is sent over its link (``voicestack-listen``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from homeassistant.components.tts.helper import get_engine_instance
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import CALLBACK_TYPE, Context, HomeAssistant

from voicestack_protocol import LISTEN, listen_event

from ..core.router import ListenMode, Voice
from ..hub import SatelliteHub


class SatelliteDevice:
    """``ModesDevice`` and ``SatelliteControls`` of one VoiceStack satellite."""

    def __init__(self, hass: HomeAssistant, hub: SatelliteHub) -> None:
        """Reads the hub per request (the pipeline select may change)."""
        self.hass = hass
        self.hub = hub

    @property
    def entry(self) -> ConfigEntry:
        """The satellite's entry."""
        return self.hub.entry

    @property
    def name(self) -> str:
        """The entry's title."""
        return self.hub.entry.title

    @property
    def context(self) -> Context:
        """The hub's current request context."""
        return self.hub.request_context

    @property
    def connected(self) -> bool:
        """The link is up."""
        return self.hub.connected

    def device_id(self) -> str | None:
        """The satellite's device."""
        return self.hub.device_id()

    def entity_id(self) -> str | None:
        """Its assist satellite entity."""
        return self.hub.satellite_entity_id()

    def agent_id(self) -> str | None:
        """The pipeline's conversation agent."""
        return self.hub.pipeline().conversation_engine

    def language(self) -> str:
        """The pipeline's conversation language."""
        return self.hub.pipeline().conversation_language

    def notify(self) -> None:
        """The hub tells the entities."""
        self.hub.notify()

    def async_subscribe_connection(
        self, listener: Callable[[bool], None]
    ) -> CALLBACK_TYPE:
        """The hub's connection subscription."""
        return self.hub.async_subscribe_connection(listener)

    async def list_voices(self) -> Sequence[Voice]:
        """The pipeline TTS engine's voices in its language, but the current one."""
        pipeline = self.hub.pipeline()
        engine = (
            get_engine_instance(self.hass, pipeline.tts_engine)
            if pipeline.tts_engine
            else None
        )
        if engine is None:
            return ()
        # A legacy provider may have no default language: then it offers no voices.
        language = pipeline.tts_language or engine.default_language
        voices = (
            engine.async_get_supported_voices(language) if language else None
        ) or []
        current = self.hub.tts_voice or pipeline.tts_voice
        return [
            Voice(voice.voice_id, voice.name)
            for voice in voices
            if voice.voice_id != current
        ]

    async def set_voice(self, voice: Voice) -> None:
        """Kept in the entry's options."""
        self.hub.set_tts_voice(voice.voice_id)

    async def set_listen_mode(self, mode: ListenMode) -> None:
        """Tell the satellite; one without the extension cannot listen always."""
        if not self.hub.link.supports(LISTEN):
            if mode is ListenMode.ALWAYS_LISTENING:
                raise RuntimeError("the satellite cannot listen without a wake word")
            return
        continuous = mode is ListenMode.ALWAYS_LISTENING
        await self.hub.link.send(listen_event(continuous=continuous))
