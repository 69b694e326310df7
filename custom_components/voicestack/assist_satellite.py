"""The satellite as Home Assistant sees it: an Assist satellite entity.

Matches HA's own Wyoming satellite (wake words, pipeline and VAD selects,
announce) and goes further: responses are spoken sentence by sentence, all audio
goes through one Speaker (announcements queue instead of failing with "busy"),
follow-up questions listen without a wake word.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import logging

from homeassistant.components import tts
from homeassistant.components.assist_pipeline import (
    Pipeline,
    PipelineEvent,
    PipelineEventType,
    async_get_pipeline,
)
from homeassistant.components.assist_satellite import (
    AssistSatelliteAnnouncement,
    AssistSatelliteConfiguration,
    AssistSatelliteEntity,
    AssistSatelliteEntityDescription,
    AssistSatelliteEntityFeature,
    AssistSatelliteWakeWord,
)
from homeassistant.components.assist_satellite.const import PREANNOUNCE_URL
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from wyoming.audio import AudioChunk, AudioStop
from wyoming.event import Event
from wyoming.pipeline import RunPipeline
from wyoming.wake import Detect

from .announcements import DATA_ANNOUNCER
from .const import DOMAIN, FOLLOW_UP_TIMEOUT_S
from .core.speaker import Playback
from .core.wav import Pcm
from .entity import VoiceStackEntity
from .hub import DEFAULT_END_OF_SPEECH_S, SatelliteHub, VoiceStackConfigEntry
from .speech_output import TTS_OPTIONS, read_stream
from .voice_loop import LISTEN_EVENT, NO_SPEECH_EVENT, VoiceLoop

_LOGGER = logging.getLogger(__name__)

PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    entry: VoiceStackConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """One Assist satellite per entry."""
    async_add_entities([VoiceStackSatellite(hass, entry.runtime_data)])


class VoiceStackSatellite(VoiceStackEntity, AssistSatelliteEntity):
    """A VoiceStack (or stock Wyoming) satellite."""

    entity_description = AssistSatelliteEntityDescription(key="assist_satellite")
    _attr_name = None
    _attr_supported_features = (
        AssistSatelliteEntityFeature.ANNOUNCE
        | AssistSatelliteEntityFeature.START_CONVERSATION
    )

    def __init__(self, hass: HomeAssistant, hub: SatelliteHub) -> None:
        """The voice loop starts with the first ``run-pipeline``."""
        super().__init__(hub)
        self.voice = VoiceLoop(hass, hub, self)

    async def async_added_to_hass(self) -> None:
        """Receive the satellite's events."""
        await super().async_added_to_hass()
        self.hub.satellite = self
        self.hub.on_satellite_event = self._on_satellite_event
        self.hub.on_link_lost = self._on_link_lost
        self.hub.say = self._say
        self.hub.prefetch = self.voice.prefetch
        self.hub.end_of_speech_s = self._resolve_vad_sensitivity
        self.hub.send_hello()

    async def async_will_remove_from_hass(self) -> None:
        """Stop any request; the hub outlives the entity during unload."""
        self.hub.satellite = None
        self.hub.on_satellite_event = lambda _event: None
        self.hub.on_link_lost = lambda: None
        self.hub.say = None
        self.hub.prefetch = lambda _text: None
        self.hub.end_of_speech_s = lambda: DEFAULT_END_OF_SPEECH_S
        self.voice.cancel()
        await super().async_will_remove_from_hass()

    # -- satellite events -------------------------------------------------------

    @callback
    def _on_satellite_event(self, event: Event) -> None:
        if RunPipeline.is_type(event.type):
            self.voice.on_run_pipeline(RunPipeline.from_event(event))
        elif AudioChunk.is_type(event.type):
            self.voice.on_audio(AudioChunk.from_event(event).audio)
        elif AudioStop.is_type(event.type):
            self.voice.on_audio_stop()
        elif event.type == NO_SPEECH_EVENT:
            self.voice.on_no_speech()

    @callback
    def _on_link_lost(self) -> None:
        self.voice.cancel()
        self.set_state(AssistSatelliteState.IDLE)

    @callback
    def on_pipeline_event(self, event: PipelineEvent) -> None:
        """The STT stage's events go to the voice loop."""
        if event.type is PipelineEventType.STT_END:
            # The run ends after STT, but the request goes on: keep the state
            # until the response has been played (HA checks this flag).
            self._run_has_tts = True
        self.voice.on_pipeline_event(event)

    # -- what the voice loop needs ------------------------------------------------

    def pipeline(self) -> Pipeline:
        """The pipeline selected for this satellite (or the preferred one)."""
        return async_get_pipeline(self.hass, self._resolve_pipeline())

    @property
    def conversation_id(self) -> str | None:
        """The conversation follow-ups continue."""
        return self._conversation_id

    @conversation_id.setter
    def conversation_id(self, value: str | None) -> None:
        self._conversation_id = value

    def request_context(self) -> Context:
        """The context of the current request."""
        return self._context or Context()

    @property
    def device_id(self) -> str | None:
        """The satellite's device."""
        return self.registry_entry.device_id if self.registry_entry else None

    @callback
    def set_state(self, state: AssistSatelliteState) -> None:
        """Idle, listening, processing or responding."""
        self._set_state(state)

    # -- Home Assistant's satellite interface ------------------------------------

    @property
    def pipeline_entity_id(self) -> str | None:
        """The pipeline select."""
        return self.hub.entity_id("select", "pipeline")

    @property
    def vad_sensitivity_entity_id(self) -> str | None:
        """The VAD sensitivity select."""
        return self.hub.entity_id("select", "vad_sensitivity")

    @property
    def tts_options(self) -> dict[str, str]:
        """Announcements come as WAV at the engine's rate; the satellite resamples."""
        return dict(TTS_OPTIONS)

    @callback
    def async_get_configuration(self) -> AssistSatelliteConfiguration:
        """Wake words the satellite offers and those active."""
        info = self.hub.identity.info
        models = [m for program in info.wake for m in program.models]
        satellite = info.satellite
        return AssistSatelliteConfiguration(
            available_wake_words=[
                AssistSatelliteWakeWord(
                    id=m.name,
                    wake_word=m.phrase or m.name,
                    trained_languages=m.languages,
                )
                for m in models
            ],
            active_wake_words=list(satellite.active_wake_words or [])
            if satellite
            else [],
            max_active_wake_words=(satellite.max_active_wake_words or 1)
            if satellite
            else 1,
        )

    async def async_set_configuration(
        self, config: AssistSatelliteConfiguration
    ) -> None:
        """Change the active wake words (``detect``)."""
        if not await self.hub.link.send(Detect(names=config.active_wake_words).event()):
            raise HomeAssistantError(
                translation_domain=DOMAIN, translation_key="not_connected"
            )
        satellite = self.hub.identity.info.satellite
        if satellite is not None:
            satellite.active_wake_words = list(config.active_wake_words)

    async def _say(self, text: str) -> Playback:
        """An announcement: sentence-streamed through the Speaker."""
        return await self.voice.say(self.pipeline(), text)

    async def async_internal_announce(
        self,
        message: str | None = None,
        media_id: str | None = None,
        preannounce: bool = True,
        preannounce_media_id: str = PREANNOUNCE_URL,
    ) -> None:
        """Text goes through the announcer (queued and merged, never "busy").

        Media without text is played directly through the Speaker (it waits its
        turn there); the preannounce sound is not played.
        """
        if message and not media_id and self.hub.announcer is not None:
            self.hass.data[DATA_ANNOUNCER].announce(
                message,
                source=f"{self.entity_id} announce",
                targets=[self.hub.satellite_id],
            )
            return
        await super().async_internal_announce(
            message,
            media_id,
            preannounce=False,
            preannounce_media_id=preannounce_media_id,
        )

    async def async_announce(self, announcement: AssistSatelliteAnnouncement) -> None:
        """Play the announcement through the Speaker (waits its turn)."""
        await self._play_announcement(announcement)

    async def async_start_conversation(
        self, start_announcement: AssistSatelliteAnnouncement
    ) -> None:
        """Ask, then listen without a wake word for the answer."""
        await self._play_announcement(start_announcement)
        if not self.hub.link.supports(LISTEN_EVENT):
            raise HomeAssistantError(
                translation_domain=DOMAIN, translation_key="listen_not_supported"
            )
        await self.hub.link.send(Event(LISTEN_EVENT, {"timeout": FOLLOW_UP_TIMEOUT_S}))

    async def _play_announcement(
        self, announcement: AssistSatelliteAnnouncement
    ) -> None:
        if announcement.tts_token is None:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="media_not_supported",
                translation_placeholders={"media_id": announcement.original_media_id},
            )
        stream = tts.async_get_stream(self.hass, announcement.tts_token)
        if stream is None:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="media_not_supported",
                translation_placeholders={"media_id": announcement.original_media_id},
            )
        pcm = await read_stream(stream)

        async def parts() -> AsyncIterator[tuple[str, Pcm]]:
            yield announcement.message, pcm

        await self.hub.speaker.speak(parts())
