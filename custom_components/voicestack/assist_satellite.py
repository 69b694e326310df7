"""The satellite as Home Assistant sees it: an Assist satellite entity.

Matches HA's own Wyoming satellite (wake words, pipeline and VAD selects,
announce) and goes further: responses are spoken sentence by sentence, all audio
goes through one Speaker (announcements queue instead of failing with "busy"),
follow-up questions listen without a wake word.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator
import logging
from typing import Any

from homeassistant.components import intent, media_source, tts
from homeassistant.components.assist_pipeline import (
    PipelineEvent,
    PipelineEventType,
    PipelineStage,
)
from homeassistant.components.assist_satellite import (
    AssistSatelliteAnnouncement,
    AssistSatelliteAnswer,
    AssistSatelliteConfiguration,
    AssistSatelliteEntity,
    AssistSatelliteEntityDescription,
    AssistSatelliteEntityFeature,
    AssistSatelliteWakeWord,
)
from homeassistant.components.assist_satellite.const import PREANNOUNCE_URL
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.components.media_player import async_process_play_media_url
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from wyoming.audio import AudioChunk, AudioStop
from wyoming.event import Event
from wyoming.pipeline import RunPipeline
from wyoming.wake import Detect

from voicestack_protocol import LISTEN, NO_SPEECH, PREROLL, listen_event

from . import compat
from .announce.media_audio import async_decode_media
from .const import DOMAIN
from .core.conversation.follow_up import EndReason, Session
from .core.conversation.turn import FOLLOW_UP_TIMEOUT_S
from .core.wav import Pcm
from .entity import VoiceStackEntity
from .request.loop import VoiceLoop
from .request.speech_output import TTS_OPTIONS, Speaking, after_preamble, read_stream
from .runtime import SatelliteRuntime, VoiceStackConfigEntry
from .text_limits import cut_prompt, cut_spoken
from .timers import timer_event

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

    def __init__(self, hass: HomeAssistant, runtime: SatelliteRuntime) -> None:
        """The voice loop starts with the first ``run-pipeline``."""
        super().__init__(runtime.hub)
        self.runtime = runtime
        self.voice_loop = VoiceLoop(
            hass,
            runtime.hub,
            modes=runtime.modes,
            speech=runtime.speech,
            conversations=runtime.conversations,
            satellite=self,
            recorder=runtime.recorder,
        )
        # ``ask_question`` waits for the next transcript: it is an answer for the
        # caller, not a command for the router and agent.
        self.question_pending = False
        # What ``start_conversation`` told the agent; the next agent call takes it.
        self._start_prompt: str | None = None

    async def async_added_to_hass(self) -> None:
        """Receive the satellite's events, its connection, what is being said."""
        await super().async_added_to_hass()
        runtime = self.runtime
        self.async_on_remove(runtime.hub.async_subscribe_events(self._on_event))
        self.async_on_remove(
            runtime.hub.async_subscribe_connection(self._on_connection)
        )
        self.async_on_remove(runtime.speech.async_subscribe(self._on_speaking))
        self.async_on_remove(runtime.modes.async_subscribe_routes(self.voice_loop.act))
        self.async_on_remove(
            runtime.conversations.async_subscribe_ended(self._on_session_ended)
        )
        self.async_on_remove(
            runtime.conversations.async_subscribe_flush(self.voice_loop.on_flush)
        )
        self.async_on_remove(self.voice_loop.close)
        if self.device_id is not None:
            # "Set a timer for 2 minutes": HA's timer intents need a device that
            # handles timers; the satellite shows, rings and cancels them.
            self.async_on_remove(
                intent.async_register_timer_handler(
                    self.hass, self.device_id, self._on_timer
                )
            )

    # -- satellite events -------------------------------------------------------

    @callback
    def _on_event(self, event: Event) -> None:
        if RunPipeline.is_type(event.type):
            self.voice_loop.on_run_pipeline(RunPipeline.from_event(event))
        elif AudioChunk.is_type(event.type):
            self.voice_loop.on_audio(AudioChunk.from_event(event).audio)
        elif AudioStop.is_type(event.type):
            self.voice_loop.on_audio_stop()
        elif event.type == NO_SPEECH:
            self.voice_loop.on_no_speech()
        elif event.type == PREROLL:
            self.voice_loop.on_preroll(event)

    @callback
    def _on_connection(self, connected: bool) -> None:
        """A lost satellite takes its request with it."""
        if not connected:
            self.voice_loop.close()
            self.set_state(AssistSatelliteState.IDLE)

    @callback
    def _on_session_ended(self, _session: Session, _reason: EndReason) -> None:
        """The session's conversation ends with it (the next wake word starts anew)."""
        self.continue_conversation(None)

    @callback
    def _on_speaking(self, news: Speaking) -> None:
        """Responding while text is said; the request ends with it."""
        if news is Speaking.STARTED:
            self.set_state(AssistSatelliteState.RESPONDING)
        else:
            self.tts_response_finished()

    @callback
    def on_pipeline_event(self, event: PipelineEvent) -> None:
        """The STT stage's events go to the voice loop."""
        if event.type is PipelineEventType.STT_END and not self.question_pending:
            # The run ends after STT, but the request goes on: keep the state
            # until the response has been played.
            self.expect_response_after_run()
        self.voice_loop.on_pipeline_event(event)

    @callback
    def _on_timer(
        self, event_type: intent.TimerEventType, timer: intent.TimerInfo
    ) -> None:
        """Forward HA's timer events to the satellite (dropped while offline)."""
        if self.hub.connected:
            self.hub.send_soon(timer_event(event_type, timer))

    # -- what the voice loop needs (``SatellitePort``) ---------------------------

    @property
    def conversation_id(self) -> str | None:
        """The conversation follow-ups continue."""
        return compat.conversation_id(self)

    def continue_conversation(self, conversation_id: str | None) -> None:
        """Follow-ups continue ``conversation_id`` (None: a new one)."""
        compat.set_conversation_id(self, conversation_id)

    def take_start_prompt(self) -> str | None:
        """What ``start_conversation`` asked the agent to know (once)."""
        prompt, self._start_prompt = self._start_prompt, None
        return prompt

    async def run_stt(
        self,
        audio: AsyncIterable[bytes],
        *,
        start_stage: PipelineStage,
        wake_word_phrase: str | None,
        context: Context,
    ) -> None:
        """Run Home Assistant's pipeline from ``start_stage`` through STT."""
        await compat.accept_pipeline_from_satellite(
            self,
            audio,
            start_stage=start_stage,
            end_stage=PipelineStage.STT,
            wake_word_phrase=wake_word_phrase,
            context=context,
        )

    @property
    def device_id(self) -> str | None:
        """The satellite's device."""
        return self.registry_entry.device_id if self.registry_entry else None

    @callback
    def set_state(self, state: AssistSatelliteState) -> None:
        """Idle, listening, processing or responding."""
        compat.set_satellite_state(self, state)

    @callback
    def expect_response_after_run(self) -> None:
        """Keep the state past the STT-only run's end: a response follows."""
        compat.expect_response_after_run(self)

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

    async def async_internal_announce(
        self,
        message: str | None = None,
        media_id: str | None = None,
        preannounce: bool = True,
        preannounce_media_id: str = PREANNOUNCE_URL,
    ) -> None:
        """Never "busy": text goes through the announcer, media waits its turn.

        Returns once the message or media was played (or dropped), as HA's
        contract says. The preannounce sound plays first, in the same turn.
        Text is queued and merged like ``voicestack.announce``; media (with or
        without a message to show) is played by the Speaker when the turn of
        whatever plays or waits before it is over. HA's base class would refuse
        either while another announcement plays.
        """
        source = f"{self.entity_id} announce"
        message = self._cut(message, source)
        if not (message or media_id):
            return
        preamble = (
            await async_decode_media(
                self.hass, await self._media_url(preannounce_media_id)
            )
            if preannounce and preannounce_media_id
            else None
        )
        if not media_id:
            await self.runtime.announcements.announce_and_wait(
                message, source=source, preamble=preamble
            )
            return
        media = await async_decode_media(self.hass, await self._media_url(media_id))
        await self.runtime.speech.play(message, media, preamble)

    async def async_internal_start_conversation(
        self,
        start_message: str | None = None,
        start_media_id: str | None = None,
        extra_system_prompt: str | None = None,
        preannounce: bool = True,
        preannounce_media_id: str = PREANNOUNCE_URL,
    ) -> None:
        """Keep the prompt for the agent: VoiceStack calls the agent itself.

        HA hands it to the pipeline's conversation stage, which VoiceStack's
        STT-only runs never reach.
        """
        start_message = self._cut(start_message, f"{self.entity_id} conversation")
        if extra_system_prompt is not None:
            extra_system_prompt = cut_prompt(extra_system_prompt, self.entity_id)
        self._start_prompt = (
            extra_system_prompt
            if extra_system_prompt is not None
            else start_message or None
        )
        try:
            await super().async_internal_start_conversation(
                start_message,
                start_media_id,
                extra_system_prompt,
                preannounce,
                preannounce_media_id,
            )
        except BaseException:
            self._start_prompt = None
            raise

    async def async_internal_ask_question(
        self,
        question: str | None = None,
        question_media_id: str | None = None,
        preannounce: bool = True,
        preannounce_media_id: str = PREANNOUNCE_URL,
        answers: list[dict[str, Any]] | None = None,
    ) -> AssistSatelliteAnswer | None:
        """The spoken answer goes back to the caller, not to the router or agent."""
        question = self._cut(question, f"{self.entity_id} question")
        self.question_pending = True
        try:
            return await super().async_internal_ask_question(
                question, question_media_id, preannounce, preannounce_media_id, answers
            )
        finally:
            self.question_pending = False

    async def async_start_conversation(
        self, start_announcement: AssistSatelliteAnnouncement
    ) -> None:
        """Ask, then listen without a wake word for the answer."""
        if not self.hub.link.supports(LISTEN):
            raise HomeAssistantError(
                translation_domain=DOMAIN, translation_key="listen_not_supported"
            )
        await self._play_announcement(start_announcement)
        await self.hub.link.send(listen_event(timeout=FOLLOW_UP_TIMEOUT_S))

    async def _play_announcement(
        self, announcement: AssistSatelliteAnnouncement
    ) -> None:
        """Preannounce sound, then the TTS stream or the decoded media."""
        preamble = (
            await async_decode_media(self.hass, announcement.preannounce_media_id)
            if announcement.preannounce_media_id
            else None
        )
        stream = (
            tts.async_get_stream(self.hass, announcement.tts_token)
            if announcement.tts_token is not None
            else None
        )
        pcm = (
            await read_stream(stream)
            if stream is not None
            else await async_decode_media(self.hass, announcement.media_id)
        )

        async def parts() -> AsyncIterator[tuple[str, Pcm]]:
            yield announcement.message, pcm

        await self.hub.speaker.play(
            parts() if preamble is None else after_preamble(preamble, parts())
        )

    def _cut(self, message: str | None, source: str) -> str:
        """A message to say, cut to the satellite's *Longest message* first."""
        limit = self.runtime.announcements.announcer.options.max_message_length
        return cut_spoken(message or "", limit, source)

    async def _media_url(self, media_id: str) -> str:
        """A media-source id or URL as a URL ffmpeg (or the local file map) takes."""
        if media_source.is_media_source_id(media_id):
            media_id = (
                await media_source.async_resolve_media(self.hass, media_id, None)
            ).url
        return async_process_play_media_url(self.hass, media_id)
