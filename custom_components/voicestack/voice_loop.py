"""The voice loop of one satellite: wake word → STT → router → agent → speech.

Home Assistant's pipeline runs only the STT stage (so its debug view, VAD and
STT engine selection stay as users know them); the transcript then passes the
satellite's router, the conversation agent answers, and the answer is said
sentence by sentence through ``SpeechOutput``.

One request is one ``core.turn.Turn``: its audio waits in a ``RequestAudio``,
bounded in bytes and in time (``core/request_audio.py``), so a peer at the
satellite's address that streams without end cannot grow Home Assistant's
memory, nor hold a request open. What to say back and whether to listen on is
decided there too (``reply_for``); this module runs it with Home Assistant's
pipeline and agent, and reaches the entity only through ``SatellitePort``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable
import logging
from typing import Any, Protocol

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import (
    Pipeline,
    PipelineEvent,
    PipelineEventType,
    PipelineStage,
)
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import Context, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from wyoming.asr import Transcript
from wyoming.error import Error
from wyoming.event import Event
from wyoming.pipeline import PipelineStage as WyomingStage, RunPipeline
from wyoming.vad import VoiceStopped
from wyoming.wake import Detection

from .const import EVENT_UTTERANCE
from .core.clock import Clock, LoopClock
from .core.protocol import LISTEN, listen_event
from .core.request_audio import RequestAudio
from .core.router.normalize import hear
from .core.router.route import Route, Utterance
from .core.turn import ListenWindow, Turn, reply_for, wake_phrase
from .hub import SatelliteHub
from .modes import VoiceModes
from .speech_output import SpeechOutput

_LOGGER = logging.getLogger(__name__)
# Home Assistant's pipeline error when speech-to-text returned no text at all.
STT_NO_TEXT = "stt-no-text-recognized"


class SatellitePort(Protocol):
    """What the voice loop needs of the assist satellite entity, and no more.

    The entity is the only code that touches Home Assistant's
    ``AssistSatelliteEntity``; the voice loop sees it through this.
    """

    @property
    def entity_id(self) -> str:
        """The entity's id (events, the agent's ``satellite_id``)."""

    @property
    def question_pending(self) -> bool:
        """``ask_question`` waits for the next transcript (it is the caller's)."""

    @property
    def conversation_id(self) -> str | None:
        """The conversation follow-ups continue."""

    def continue_conversation(self, conversation_id: str | None) -> None:
        """Follow-ups continue ``conversation_id`` (None: a new one)."""

    def take_start_prompt(self) -> str | None:
        """What ``start_conversation`` asked the agent to know (once)."""

    async def run_stt(
        self,
        audio: AsyncIterable[bytes],
        *,
        start_stage: PipelineStage,
        wake_word_phrase: str | None,
        context: Context,
    ) -> None:
        """Run Home Assistant's pipeline from ``start_stage`` through STT."""

    def set_state(self, state: AssistSatelliteState) -> None:
        """Idle, listening, processing or responding."""

    def tts_response_finished(self) -> None:
        """The request is over (nothing more will be said)."""


class VoiceLoop:
    """Runs one turn at a time for one satellite."""

    def __init__(
        self,
        hass: HomeAssistant,
        hub: SatelliteHub,
        modes: VoiceModes,
        speech: SpeechOutput,
        satellite: SatellitePort,
    ) -> None:
        """Idle until the satellite sends ``run-pipeline``."""
        self.hass = hass
        self.hub = hub
        self.modes = modes
        self.speech = speech
        self.satellite = satellite
        self.clock: Clock = LoopClock(hass.loop)  # the request's deadline runs on it
        self._turn: Turn | None = None
        self._task: asyncio.Task[None] | None = None
        self._window = ListenWindow(self.clock)

    # -- from the satellite -------------------------------------------------------

    @callback
    def on_run_pipeline(self, run: RunPipeline) -> None:
        """A wake word (or listen-now) started a request: run it."""
        self.cancel()
        turn = self._turn = Turn(
            self.clock, self._audio_limit, wake_word=run.wake_word_name
        )
        if run.start_stage is not WyomingStage.WAKE:
            turn.audio.start_deadline()
        self._window.used()
        self.hub.set_assist_in_progress(True)
        # Speech is coming in: an open query must not submit meanwhile.
        self.modes.router.hold_timer()
        self._task = self.hub.entry.async_create_background_task(
            self.hass,
            self._run(run, turn),
            f"voicestack {self.hub.satellite_id} request",
        )

    @property
    def audio(self) -> RequestAudio | None:
        """The audio of the current (or last) request, with its counters."""
        return self._turn.audio if self._turn is not None else None

    @callback
    def on_audio(self, audio: bytes) -> None:
        """Audio of the running request."""
        if self._turn is not None:
            self._turn.audio.put(audio)

    @callback
    def on_audio_stop(self) -> None:
        """The satellite ended the request's audio."""
        if self._turn is not None:
            self._turn.audio.end()

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
        if self._turn is not None:
            self._turn.end()
            self._turn = None
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self.hub.set_assist_in_progress(False)

    # -- from Home Assistant's pipeline -------------------------------------------

    @callback
    def on_pipeline_event(self, event: PipelineEvent) -> None:
        """Tell the satellite what the STT stage found."""
        data = event.data or {}
        turn = self._turn
        if event.type is PipelineEventType.WAKE_WORD_END:
            if (detected := data.get("wake_word_output")) and turn is not None:
                turn.woken(detected.get("wake_word_id"))
                self._send(Detection(name=turn.wake_word).event())
        elif event.type is PipelineEventType.STT_VAD_END:
            if turn is not None:
                turn.end()  # the pipeline reads no more of its audio
            self._send(VoiceStopped().event())
        elif event.type is PipelineEventType.STT_END:
            text = (data.get("stt_output") or {}).get("text", "")
            if turn is not None:
                turn.heard(text)
            self._send(Transcript(text=text).event())
        elif event.type is PipelineEventType.ERROR:
            if data.get("code") == STT_NO_TEXT and turn is not None:
                turn.heard("")  # an empty transcript, not a failure
            _LOGGER.warning(
                "%s: %s (%s)",
                self.hub.entry.title,
                data.get("message"),
                data.get("code"),
            )
            self._send(
                Error(text=str(data.get("message")), code=data.get("code")).event()
            )

    # -- the turn -----------------------------------------------------------------

    @callback
    def _audio_limit(self, reason: str) -> None:
        """A limit of ``RequestAudio`` ended the audio: end it like end of speech."""
        _LOGGER.warning(
            "%s: request audio ended at its limit: %s", self.hub.entry.title, reason
        )
        self._send(VoiceStopped().event())

    async def _run(self, run: RunPipeline, turn: Turn) -> None:
        # HA's own pipeline readies the agent while STT listens; ours stops after
        # STT, so do the same here (a cold agent costs up to a second otherwise).
        pipeline = self.hub.pipeline()
        self.hub.entry.async_create_background_task(
            self.hass,
            conversation.async_prepare_agent(
                self.hass, pipeline.conversation_engine, pipeline.conversation_language
            ),
            "voicestack prepare agent",
        )
        try:
            await self.satellite.run_stt(
                turn.audio.chunks(),
                # A stock satellite without its own wake word streams from the
                # wake stage: HA's wake word engine listens first.
                start_stage=(
                    PipelineStage.WAKE_WORD
                    if run.start_stage is WyomingStage.WAKE
                    else PipelineStage.STT
                ),
                wake_word_phrase=wake_phrase(
                    self.hub.identity.info.wake, run.wake_word_name
                ),
                context=self.hub.new_request_context(),
            )
            if self.satellite.question_pending:
                # The answer to ``ask_question`` went to its caller (HA's base
                # class took it from the STT result), not to the router.
                _LOGGER.debug("%s: answer to a question", self.hub.entry.title)
            elif turn.transcript is not None and not hear(turn.transcript).real:
                self._nothing_recognized(turn)
            elif turn.transcript:
                await self._respond(turn)
        except HomeAssistantError as err:
            _LOGGER.warning("%s: request failed: %s", self.hub.entry.title, err)
            await self.hub.link.send(
                Error(text=str(err), code="request-failed").event()
            )
            self.satellite.tts_response_finished()
        finally:
            turn.end()  # nothing reads its audio any more: drop what still comes
            self.hub.set_assist_in_progress(False)
            self.modes.router.resume_timer()

    async def _respond(self, turn: Turn) -> None:
        """Route the transcript, then act on the route."""
        assert turn.transcript is not None
        utterance = Utterance(
            text=turn.transcript,
            satellite_id=self.hub.satellite_id,
            wake_word=turn.wake_word,
            conversation_id=self.satellite.conversation_id,
        )
        route = await self.modes.router(utterance)
        _LOGGER.debug(
            "%s: %r handled by frame %s, rule %s: %s [%s]",
            self.hub.entry.title,
            turn.transcript,
            route.frame,
            route.rule,
            route.reason,
            "; ".join(route.trace),
        )
        self._fire_utterance(turn, route)
        await self.act(route)

    async def act(self, route: Route) -> None:
        """Say what the route says, ask the agent if it says so, listen on if asked.

        Also for decisions no utterance caused (a query submitted on silence).
        """
        self.satellite.set_state(AssistSatelliteState.PROCESSING)
        if route.agent_text is not None:
            result = await self._converse(self.hub.pipeline(), route.agent_text)
            reply = reply_for(
                route,
                answer=result.response.speech.get("plain", {}).get("speech", ""),
                agent_continues=result.continue_conversation,
                always_listening=self.modes.always_listening,
            )
        else:
            reply = reply_for(route, always_listening=self.modes.always_listening)
        await self.speech.say(reply.speech)
        await self._listen(reply.listen_s)

    async def _listen(self, window_s: float | None) -> None:
        """Open the mic for ``window_s``, or close a window opened earlier."""
        if not self.hub.link.supports(LISTEN):
            return
        timeout = self._window.request(window_s)
        if timeout is not None:
            await self.hub.link.send(listen_event(timeout=timeout))

    async def _converse(
        self, pipeline: Pipeline, text: str
    ) -> conversation.ConversationResult:
        result = await conversation.async_converse(
            self.hass,
            text=text,
            conversation_id=self.satellite.conversation_id,
            context=self.hub.request_context,
            language=pipeline.conversation_language,
            agent_id=pipeline.conversation_engine,
            device_id=self.hub.device_id(),
            satellite_id=self.satellite.entity_id,
            extra_system_prompt=self.satellite.take_start_prompt(),
        )
        self.satellite.continue_conversation(result.conversation_id)
        return result

    def _nothing_recognized(self, turn: Turn) -> None:
        """Speech-to-text found no words ("", "[BLANK_AUDIO]"): count and tell."""
        self.hub.empty_transcripts += 1
        _LOGGER.info(
            "%s: nothing recognized (%r)", self.hub.entry.title, turn.transcript
        )
        self.hass.bus.async_fire(
            EVENT_UTTERANCE,
            {
                **self._utterance_data(turn),
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

    def _utterance_data(self, turn: Turn) -> dict[str, Any]:
        return {
            "entity_id": self.satellite.entity_id,
            "device_id": self.hub.device_id(),
            "text": turn.transcript,
            "wake_word": turn.wake_word,
            "conversation_id": self.satellite.conversation_id,
        }

    def _fire_utterance(self, turn: Turn, route: Route) -> None:
        self.hass.bus.async_fire(
            EVENT_UTTERANCE,
            {
                **self._utterance_data(turn),
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
