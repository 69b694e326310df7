"""The voice loop of one satellite: wake word → STT → router → agent → speech.

Home Assistant's pipeline runs only the STT stage (so its debug view, VAD and
STT engine selection stay as users know them); the transcript then passes the
routing hook, the conversation agent answers, and the answer is spoken sentence
by sentence through the satellite's Speaker.

The request's audio waits in a ``RequestAudio``, bounded in bytes and in time
(``core/request_audio.py``): a peer at the satellite's address that streams
without end cannot grow Home Assistant's memory, nor hold a request open.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import logging
from typing import TYPE_CHECKING, Any

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import (
    Pipeline,
    PipelineEvent,
    PipelineEventType,
    PipelineStage,
)
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from wyoming.asr import Transcript
from wyoming.error import Error
from wyoming.event import Event
from wyoming.pipeline import PipelineStage as WyomingStage, RunPipeline
from wyoming.vad import VoiceStopped
from wyoming.wake import Detection

from . import compat
from .const import EVENT_UTTERANCE, FOLLOW_UP_TIMEOUT_S, MODE_LISTEN_TIMEOUT_S
from .core.clock import Clock, LoopClock
from .core.protocol import LISTEN, listen_event
from .core.request_audio import RequestAudio
from .core.router.normalize import hear
from .core.routing import Route, Utterance
from .core.sentences import split_sentences
from .core.speaker import Playback
from .core.wav import Pcm
from .hub import SatelliteHub
from .speech_output import start_synthesis, synthesize_sentences

if TYPE_CHECKING:
    from .assist_satellite import VoiceStackSatellite

_LOGGER = logging.getLogger(__name__)
# Home Assistant's pipeline error when speech-to-text returned no text at all.
STT_NO_TEXT = "stt-no-text-recognized"


class VoiceLoop:
    """Runs one request at a time for one satellite."""

    def __init__(
        self, hass: HomeAssistant, hub: SatelliteHub, satellite: VoiceStackSatellite
    ) -> None:
        """Idle until the satellite sends ``run-pipeline``."""
        self.hass = hass
        self.hub = hub
        self.satellite = satellite
        self.clock: Clock = LoopClock(hass.loop)  # the request's deadline runs on it
        self._audio: RequestAudio | None = None
        self._task: asyncio.Task[None] | None = None
        self._transcript: str | None = None
        self._wake_word: str | None = None
        self._listen_until = 0.0  # loop time a listen window we opened closes

    # -- from the satellite -------------------------------------------------------

    @callback
    def on_run_pipeline(self, run: RunPipeline) -> None:
        """A wake word (or listen-now) started a request: run it."""
        self.cancel()
        audio = self._audio = RequestAudio(self.clock, self._audio_limit)
        if run.start_stage is not WyomingStage.WAKE:
            audio.start_deadline()
        self._transcript = None
        self._wake_word = run.wake_word_name
        self._listen_until = 0.0  # a window that started this request is used up
        self.hub.set_assist_in_progress(True)
        if self.hub.modes is not None:
            # Speech is coming in: an open query must not submit meanwhile.
            self.hub.modes.router.hold_timer()
        self._task = self.hub.entry.async_create_background_task(
            self.hass,
            self._run(run, audio),
            f"voicestack {self.hub.satellite_id} request",
        )

    @property
    def audio(self) -> RequestAudio | None:
        """The audio of the current (or last) request, with its counters."""
        return self._audio

    @callback
    def on_audio(self, audio: bytes) -> None:
        """Audio of the running request."""
        if self._audio is not None:
            self._audio.put(audio)

    @callback
    def on_audio_stop(self) -> None:
        """The satellite ended the request's audio."""
        if self._audio is not None:
            self._audio.end()

    @callback
    def on_no_speech(self) -> None:
        """The satellite heard nobody speak: drop the request.

        Speech-to-text would otherwise make words up from the silence (whisper
        does: "Thank you so much for watching!").
        """
        if self._task is None or self._task.done():
            return
        _LOGGER.warning("%s: nothing heard after the wake word", self.hub.entry.title)
        self.cancel()
        self._send(Error(text="nothing heard", code="no-speech").event())
        self.satellite.tts_response_finished()

    @callback
    def cancel(self) -> None:
        """Drop the running request (new wake word, lost link, unload)."""
        if self._audio is not None:
            self._audio.close()
            self._audio = None
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self.hub.set_assist_in_progress(False)

    # -- from Home Assistant's pipeline -------------------------------------------

    @callback
    def on_pipeline_event(self, event: PipelineEvent) -> None:
        """Tell the satellite what the STT stage found."""
        data = event.data or {}
        if event.type is PipelineEventType.WAKE_WORD_END:
            if detected := data.get("wake_word_output"):
                self._wake_word = detected.get("wake_word_id")
                self._send(Detection(name=self._wake_word).event())
                if self._audio is not None:
                    self._audio.start_deadline()
        elif event.type is PipelineEventType.STT_VAD_END:
            if self._audio is not None:
                self._audio.close()  # the pipeline reads no more of it
            self._send(VoiceStopped().event())
        elif event.type is PipelineEventType.STT_END:
            self._transcript = (data.get("stt_output") or {}).get("text", "")
            self._send(Transcript(text=self._transcript).event())
        elif event.type is PipelineEventType.ERROR:
            if data.get("code") == STT_NO_TEXT:
                self._transcript = ""  # an empty transcript, not a failure
            _LOGGER.warning(
                "%s: %s (%s)",
                self.hub.entry.title,
                data.get("message"),
                data.get("code"),
            )
            self._send(
                Error(text=str(data.get("message")), code=data.get("code")).event()
            )

    # -- the request --------------------------------------------------------------

    @callback
    def _audio_limit(self, reason: str) -> None:
        """A limit of ``RequestAudio`` ended the audio: end it like end of speech."""
        _LOGGER.warning(
            "%s: request audio ended at its limit: %s", self.hub.entry.title, reason
        )
        self._send(VoiceStopped().event())

    async def _run(self, run: RunPipeline, audio: RequestAudio) -> None:
        # HA's own pipeline readies the agent while STT listens; ours stops after
        # STT, so do the same here (a cold agent costs up to a second otherwise).
        pipeline = self.satellite.pipeline()
        self.hub.entry.async_create_background_task(
            self.hass,
            conversation.async_prepare_agent(
                self.hass, pipeline.conversation_engine, pipeline.conversation_language
            ),
            "voicestack prepare agent",
        )
        try:
            await compat.accept_pipeline_from_satellite(
                self.satellite,
                audio.chunks(),
                # A stock satellite without its own wake word streams from the
                # wake stage: HA's wake word engine listens first.
                start_stage=(
                    PipelineStage.WAKE_WORD
                    if run.start_stage is WyomingStage.WAKE
                    else PipelineStage.STT
                ),
                end_stage=PipelineStage.STT,
                wake_word_phrase=self._wake_phrase(run.wake_word_name),
                context=self.satellite.new_request_context(),
            )
            if self.satellite.question_pending:
                # The answer to ``ask_question`` went to its caller (HA's base
                # class took it from the STT result), not to the router.
                _LOGGER.debug("%s: answer to a question", self.hub.entry.title)
            elif self._transcript is not None and not hear(self._transcript).real:
                self._nothing_recognized(self._transcript)
            elif self._transcript:
                await self._respond(self._transcript)
        except HomeAssistantError as err:
            _LOGGER.warning("%s: request failed: %s", self.hub.entry.title, err)
            await self.hub.link.send(
                Error(text=str(err), code="request-failed").event()
            )
            self.satellite.tts_response_finished()
        finally:
            audio.close()  # nothing reads it any more: drop what still comes
            self.hub.set_assist_in_progress(False)
            if self.hub.modes is not None:
                self.hub.modes.router.resume_timer()

    def _wake_phrase(self, name: str | None) -> str | None:
        """The phrase of wake word ``name`` as the satellite's ``info`` gives it."""
        for program in self.hub.identity.info.wake:
            for model in program.models:
                if model.name == name:
                    return model.phrase or name
        return name

    async def _respond(self, text: str) -> None:
        """Route the transcript, then act on the route."""
        utterance = Utterance(
            text=text,
            satellite_id=self.hub.satellite_id,
            wake_word=self._wake_word,
            conversation_id=self.satellite.conversation_id,
        )
        route = await self.hub.router(utterance)
        _LOGGER.debug(
            "%s: %r handled by frame %s, rule %s: %s [%s]",
            self.hub.entry.title,
            text,
            route.frame,
            route.rule,
            route.reason,
            "; ".join(route.trace),
        )
        self._fire_utterance(utterance, route)
        await self.act(route)

    async def act(self, route: Route) -> None:
        """Say what the route says, ask the agent if it says so, listen on if asked.

        Also for decisions no utterance caused (a query submitted on silence).
        """
        pipeline = self.satellite.pipeline()
        self.satellite.set_state(AssistSatelliteState.PROCESSING)
        speech, follow_up = route.speak or "", False
        if route.agent_text is not None:
            result = await self._converse(pipeline, route.agent_text)
            answer = result.response.speech.get("plain", {}).get("speech", "")
            speech = f"{speech} {answer}".strip()
            follow_up = result.continue_conversation
        await self.say(pipeline, speech)
        timeout = (
            FOLLOW_UP_TIMEOUT_S
            if follow_up
            else MODE_LISTEN_TIMEOUT_S
            if route.listen and not self.hub.always_listening
            else None
        )
        await self._listen(timeout)

    async def _listen(self, window_s: float | None) -> None:
        """Open the mic for ``window_s``, or close a window opened earlier.

        A window left open after its frame closed (a query submitted on
        silence) would send whatever is said next to the agent unasked.
        """
        if not self.hub.link.supports(LISTEN):
            return
        now = self.hass.loop.time()
        if window_s is None and now >= self._listen_until:
            return
        self._listen_until = now + (window_s or 0.0)
        await self.hub.link.send(listen_event(timeout=window_s or 0))

    async def _converse(
        self, pipeline: Pipeline, text: str
    ) -> conversation.ConversationResult:
        result = await conversation.async_converse(
            self.hass,
            text=text,
            conversation_id=self.satellite.conversation_id,
            context=self.satellite.request_context(),
            language=pipeline.conversation_language,
            agent_id=pipeline.conversation_engine,
            device_id=self.satellite.device_id,
            satellite_id=self.satellite.entity_id,
            extra_system_prompt=self.satellite.take_start_prompt(),
        )
        self.satellite.conversation_id = result.conversation_id
        return result

    async def say(
        self, pipeline: Pipeline, text: str, preamble: Pcm | None = None
    ) -> Playback:
        """Speak ``text`` through the Speaker; the entity is responding meanwhile.

        ``preamble`` (a preannounce sound) plays first, in the same turn.
        """
        sentences = split_sentences(text)
        if not sentences:
            self.satellite.tts_response_finished()
            return Playback(outcome="empty")
        self.satellite.set_state(AssistSatelliteState.RESPONDING)
        speech = synthesize_sentences(self.hass, pipeline, sentences, self.hub.voice)
        try:
            playback = await self.hub.speaker.speak(
                speech if preamble is None else after_preamble(preamble, speech)
            )
        finally:
            self.satellite.tts_response_finished()
        _LOGGER.debug(
            "%s: spoke %d sentence(s), %.1f s, %s",
            self.hub.entry.title,
            len(playback.sentences),
            playback.seconds,
            playback.outcome,
        )
        return playback

    def prefetch(self, text: str) -> None:
        """Synthesize the first sentence of ``text`` ahead of time.

        It lands in Home Assistant's TTS cache: a lone announcement waits out
        the merge window anyway, and is then said at once.
        """
        if sentences := split_sentences(text):
            try:
                start_synthesis(
                    self.hass, self.satellite.pipeline(), sentences[0], self.hub.voice
                )
            except HomeAssistantError as err:
                _LOGGER.debug("No prefetch: %s", err)

    def _nothing_recognized(self, text: str) -> None:
        """Speech-to-text found no words ("", "[BLANK_AUDIO]"): count and tell."""
        self.hub.empty_transcripts += 1
        _LOGGER.info("%s: nothing recognized (%r)", self.hub.entry.title, text)
        self.hass.bus.async_fire(
            EVENT_UTTERANCE,
            {
                **self._utterance_data(text),
                "outcome": "empty",
                "frame": None,
                "rule": None,
                "reason": "speech-to-text found no words",
                "trace": [],
                "listen": False,
                "sent_to_agent": False,
            },
        )
        self.hub.notify()

    def _utterance_data(self, text: str) -> dict[str, Any]:
        return {
            "entity_id": self.satellite.entity_id,
            "device_id": self.satellite.device_id,
            "text": text,
            "wake_word": self._wake_word,
            "conversation_id": self.satellite.conversation_id,
        }

    def _fire_utterance(self, utterance: Utterance, route: Route) -> None:
        self.hass.bus.async_fire(
            EVENT_UTTERANCE,
            {
                **self._utterance_data(utterance.text),
                "outcome": "routed",
                "frame": route.frame,
                "rule": route.rule,
                "reason": route.reason,
                "trace": list(route.trace),
                "listen": route.listen,
                "sent_to_agent": route.agent_text is not None,
            },
        )

    def _send(self, event: Event) -> None:
        self.hub.entry.async_create_background_task(
            self.hass, self.hub.link.send(event), "voicestack send"
        )


async def after_preamble(
    preamble: Pcm, parts: AsyncIterator[tuple[str, Pcm]]
) -> AsyncIterator[tuple[str, Pcm]]:
    """``preamble`` (no text), then ``parts``."""
    yield "", preamble
    async for part in parts:
        yield part
