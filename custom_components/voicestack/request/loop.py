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
from collections.abc import AsyncIterable, Callable
from dataclasses import dataclass, replace
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
from homeassistant.helpers import intent
from wyoming.asr import Transcript
from wyoming.error import Error
from wyoming.event import Event
from wyoming.pipeline import PipelineStage as WyomingStage, RunPipeline
from wyoming.vad import VoiceStopped
from wyoming.wake import Detection

from voicestack_protocol import LISTEN, listen_event

from ..conversation.agent_stream import AnswerText, converse_streaming, prepare_agent
from ..conversation.sessions import Conversations
from ..core.clock import Clock, LoopClock
from ..core.conversation.follow_up import Session
from ..core.conversation.turn import ListenWindow, Turn, reply_for, wake_phrase
from ..core.no_speech import EmptyReason, emptiness
from ..core.recording.recording import EndOfSpeech, Outcome
from ..core.request_audio import RequestAudio
from ..core.router.normalize import hear
from ..core.router.route import Route, Utterance
from ..hub import SatelliteHub
from ..logbook import log_empty_request
from ..modes.voice_modes import VoiceModes
from ..recording.recorder import RequestRecorder
from .events import VoiceEvents
from .speculation import SPECULATE_AFTER_S, Speculation
from .speech_input import transcribe
from .speech_output import SpeechOutput
from .state_changes import states_changed_in

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

    def expect_response_after_run(self) -> None:
        """Keep the state past the STT-only run's end: a response follows."""

    def tts_response_finished(self) -> None:
        """The request is over (nothing more will be said)."""


@dataclass(frozen=True, slots=True)
class HeldAnswer:
    """An answer paused, with the turn that says it, while a request is checked."""

    turn: Turn | None
    task: asyncio.Task[None] | None  # None: no turn of ours says it


class VoiceLoop:
    """Runs one turn at a time for one satellite."""

    def __init__(
        self,
        hass: HomeAssistant,
        hub: SatelliteHub,
        *,
        modes: VoiceModes,
        speech: SpeechOutput,
        conversations: Conversations,
        satellite: SatellitePort,
        recorder: RequestRecorder,
    ) -> None:
        """Idle until the satellite sends ``run-pipeline``; ``recorder`` records."""
        self.hass = hass
        self.hub = hub
        self.modes = modes
        self.speech = speech
        self.conversations = conversations
        self.follow_up = conversations.loop
        self.satellite = satellite
        self.recorder = recorder
        self.events = VoiceEvents(hass, hub, conversations, satellite)
        self._session: Session | None = None  # the running turn's session
        self._fragment_task: asyncio.Task[None] | None = None
        self._fragments = 0  # real fragments in the buffer now
        self.clock: Clock = LoopClock(hass.loop)  # the request's deadline runs on it
        self._turn: Turn | None = None
        self._task: asyncio.Task[None] | None = None
        # The running turn's pipeline run (its STT stage) and speculation.
        self._stt: asyncio.Task[None] | None = None
        self._speculation: Speculation | None = None
        self._window = ListenWindow(self.clock)

    # -- from the satellite -------------------------------------------------------

    @callback
    def on_run_pipeline(self, run: RunPipeline) -> None:
        """A wake word (or listen-now) started a request: run it."""
        woken = run.wake_word_name is not None or run.start_stage is WyomingStage.WAKE
        held = self._held_answer()
        if held is None and not woken and self._wants_fragments():
            self._start_fragment()
            return
        if held is None or held.task is None:
            self.cancel()
        turn = self._turn = Turn(
            self.clock, self._audio_limit, wake_word=run.wake_word_name, woken=woken
        )
        self.recorder.begin(turn, self.clock, self.satellite.entity_id, run)
        self._speculation = self._speculate(run)
        # Always listening, every speech segment is a request: sessions are the
        # voice modes' (a query frame), not the follow-up loop's.
        self._session = (
            None
            if self.modes.always_listening
            else self.follow_up.begin_turn(woken=woken)
        )
        if run.start_stage is not WyomingStage.WAKE:
            turn.audio.start_deadline()
        self._window.used()
        self.hub.set_assist_in_progress(True)
        # Speech is coming in: an open query must not submit meanwhile.
        self.modes.router.hold_timer()
        self._task = self.hub.entry.async_create_background_task(
            self.hass,
            self._run(run, turn, held),
            f"voicestack {self.hub.satellite_id} request",
        )
        self.recorder.follow(turn, self._task)

    @property
    def audio(self) -> RequestAudio | None:
        """The audio of the current (or last) request, with its counters."""
        return self._turn.audio if self._turn is not None else None

    @callback
    def on_preroll(self, event: Event) -> None:
        """The satellite's ``voicestack-preroll``: where the recording's cut is."""
        if self._turn is not None:
            self.recorder.preroll(self._turn, event)

    @callback
    def on_audio(self, audio: bytes) -> None:
        """Audio of the running request (and of its recording, if recorded)."""
        if (turn := self._turn) is not None:
            if self._speculation is not None and not turn.audio.ended:
                self._speculation.feed(audio)
            turn.audio.put(audio)
            if turn.recording is not None:
                turn.recording.add_audio(audio)

    @callback
    def on_audio_stop(self) -> None:
        """The satellite ended the request's audio.

        If a speculation holds all of it, the pipeline is cancelled and its
        audio ends only once it is gone: the engine never gets the audio's end,
        so it does not transcribe it again (Home Assistant's Wyoming STT uploads
        from a task of its own, which would still send it).
        """
        if self._turn is not None:
            if (
                (stt := self._stt) is not None
                and not stt.done()
                and not self._turn.audio.ended
                and not self.satellite.question_pending
                and self._speculation is not None
                and self._speculation.take()
            ):
                # The run ends after STT, but the request goes on (as at STT_END).
                self.satellite.expect_response_after_run()
                stt.cancel()
            else:
                self._turn.audio.end()
            self.recorder.stream_ended(self._turn, EndOfSpeech.ENDPOINTER)

    @callback
    def on_no_speech(self) -> None:
        """The satellite heard nobody speak after the wake word: drop the request.

        Speech-to-text would otherwise make words up from the silence (whisper
        does: "Thanks."), and the agent would answer them. The satellite's
        word holds even when Home Assistant's VAD heard speech start: that VAD
        hears the TV that set off the false wake as speech too; the satellite
        measures speech against the room's sound before the wake word.
        """
        turn = self._turn
        self.recorder.no_speech(turn)
        if turn is None or self._task is None or self._task.done():
            return
        self._nothing_recognized(turn, EmptyReason.NO_SPEECH)
        self.cancel()
        self.follow_up.nothing_heard()
        self.satellite.tts_response_finished()

    @callback
    def cancel(self) -> None:
        """Drop the running request (new wake word, lost link, unload)."""
        if self._speculation is not None:
            self._speculation.drop()
            self._speculation = None
        if self._turn is not None:
            self._turn.end()
            self.recorder.finish(self._turn, Outcome.CANCELLED)
            self._turn = None
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None
        self.hub.set_assist_in_progress(False)

    @callback
    def close(self) -> None:
        """The link is lost or the entity goes: the request and the session end."""
        self.cancel()
        if self._fragment_task is not None:
            self._fragment_task.cancel()
        self.follow_up.cancel()

    # -- from Home Assistant's pipeline -------------------------------------------

    @callback
    def on_pipeline_event(self, event: PipelineEvent) -> None:
        """Tell the satellite what the STT stage found."""
        data = event.data or {}
        turn = self._turn
        self.recorder.pipeline_event(turn, event)
        if event.type is PipelineEventType.WAKE_WORD_END:
            if (detected := data.get("wake_word_output")) and turn is not None:
                turn.woken(detected.get("wake_word_id"))
                self._send(Detection(name=turn.wake_word).event())
        elif event.type is PipelineEventType.STT_VAD_START:
            if turn is not None:
                turn.speech_heard = True
        elif event.type is PipelineEventType.STT_VAD_END:
            if turn is not None:
                turn.end()  # the pipeline reads no more of its audio
                if turn.speech_heard is None:  # it gave up waiting for speech
                    turn.speech_heard = False
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
        self.recorder.ended_by(self._turn, EndOfSpeech.MAX_LENGTH)
        self._send(VoiceStopped().event())

    def _held_answer(self) -> HeldAnswer | None:
        """The answer a request now starting was said over, if it is held.

        The voice gate was not sure whose voice it was: the answer stays
        paused, and its turn (if a turn of ours says it) runs on, until this
        request is checked.
        """
        if not self.speech.barge_in.checking:
            return None
        task = self._task if self._task is not None and not self._task.done() else None
        return HeldAnswer(self._turn if task else None, task)

    async def _run(self, run: RunPipeline, turn: Turn, held: HeldAnswer | None) -> None:
        # HA's own pipeline readies the agent while STT listens; ours stops after
        # STT, so do the same here (a cold agent costs up to a second otherwise).
        pipeline = self.hub.pipeline()
        self.hub.entry.async_create_background_task(
            self.hass,
            prepare_agent(
                self.hass, pipeline.conversation_engine, pipeline.conversation_language
            ),
            "voicestack prepare agent",
        )
        try:
            await self._speech_to_text(run, turn)
            if held is not None and not await self._settle(turn, held):
                return
            if self.satellite.question_pending:
                # The answer to ``ask_question`` went to its caller (HA's base
                # class took it from the STT result), not to the router.
                _LOGGER.debug("%s: answer to a question", self.hub.entry.title)
                self.recorder.note(turn, Outcome.QUESTION)
                self.follow_up.cancel()
            elif turn.transcript is not None and (
                reason := emptiness(turn.transcript, turn.speech_heard)
            ):
                self._nothing_recognized(turn, reason)
                self.follow_up.nothing_heard()
            elif turn.transcript and self._is_stop(turn):
                await self._stop_session(turn)
            elif turn.transcript:
                await self._respond(turn)
        except HomeAssistantError as err:
            _LOGGER.warning("%s: request failed: %s", self.hub.entry.title, err)
            self.recorder.note(turn, Outcome.FAILED)
            await self.hub.link.send(
                Error(text=str(err), code="request-failed").event()
            )
            self.satellite.tts_response_finished()
        finally:
            turn.end()  # nothing reads its audio any more: drop what still comes
            if self._task is asyncio.current_task():  # not replaced, not handed back
                self.hub.set_assist_in_progress(False)
            self.modes.router.resume_timer()

    async def _settle(self, turn: Turn, held: HeldAnswer) -> bool:
        """Whether the request said over the ``held`` answer goes on.

        A command for this home (or a stop phrase) is the user's: the answer is
        flushed and the request goes on. Anything else (the TV, a remark) is
        not: the answer plays on from its sentence, and its turn is the
        running one again.
        """
        text = turn.transcript or ""
        command = (
            bool(text)
            and not emptiness(text, turn.speech_heard)
            and (
                self.follow_up.is_stop(text)
                or await self.modes.resolver.is_command(text)
            )
        )
        self.speech.barge_in.checked(command)
        _LOGGER.debug(
            "%s: %r over a held answer, command: %s",
            self.hub.entry.title,
            text,
            command,
        )
        if command:
            if held.task is not None:  # the answer was flushed: its turn is over
                held.task.cancel()
                await asyncio.wait([held.task])
            self.hub.set_assist_in_progress(True)
            return True
        self.recorder.note(turn, Outcome.RESUMED)
        self.events.unrouted(turn, "resumed", "not sure whose voice, and no command")
        self._turn, self._task = held.turn, held.task
        self.satellite.set_state(AssistSatelliteState.RESPONDING)
        return False

    def _speculate(self, run: RunPipeline) -> Speculation | None:
        """A speculation for this request, if it may have one.

        Not when Home Assistant's wake word engine listens first (the audio
        starts before the command), nor for ``ask_question``'s answer (Home
        Assistant's entity takes it from the pipeline's own STT result).
        """
        if (
            not SPECULATE_AFTER_S
            or run.start_stage is WyomingStage.WAKE
            or self.satellite.question_pending
        ):
            return None
        return Speculation(self.hass, self.hub, SPECULATE_AFTER_S)

    async def _speech_to_text(self, run: RunPipeline, turn: Turn) -> None:
        """Run the pipeline's STT stage, or take the speculation's transcript.

        ``on_audio_stop`` cancels the pipeline when a speculation holds all of
        the request's audio; its transcript then goes where the pipeline's
        would (``on_pipeline_event``), so what follows is the same.
        """
        stt = self._stt = self.hub.entry.async_create_background_task(
            self.hass,
            self.satellite.run_stt(
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
            ),
            f"voicestack {self.hub.satellite_id} speech-to-text",
        )
        try:
            await asyncio.wait([stt])
        finally:
            stt.cancel()  # this request was cancelled: its pipeline goes too
            self._stt = None
            turn.audio.end()  # the pipeline is gone (see on_audio_stop)
        speculation = self._speculation
        if not stt.cancelled():
            if speculation is not None:
                speculation.drop()  # the pipeline's transcript came first
            stt.result()  # what the pipeline raised
            return
        if speculation is None or (taken := speculation.taken) is None:
            raise asyncio.CancelledError  # Home Assistant cancelled its pipeline
        try:
            text = await taken
        except HomeAssistantError as err:
            _LOGGER.warning(
                "%s: speculative transcript failed (%s): transcribing it all",
                self.hub.entry.title,
                err,
            )
            text = await transcribe(self.hass, self.hub.pipeline(), speculation.audio())
        _LOGGER.debug("%s: speculative transcript %r", self.hub.entry.title, text)
        if not text:  # nothing follows: idle, as at the end of an empty run
            self.satellite.set_state(AssistSatelliteState.IDLE)
        self.on_pipeline_event(
            PipelineEvent(PipelineEventType.STT_END, {"stt_output": {"text": text}})
            if text
            else PipelineEvent(
                PipelineEventType.ERROR,
                {"code": STT_NO_TEXT, "message": "No text recognized"},
            )
        )

    async def _respond(self, turn: Turn) -> None:
        """Route the transcript, then act on the route."""
        assert turn.transcript is not None
        utterance = Utterance(
            text=turn.transcript,
            satellite_id=self.hub.satellite_id,
            wake_word=turn.wake_word,
            conversation_id=self.satellite.conversation_id,
        )
        with self.recorder.stage(turn, "route"):
            route = await self.modes.router(utterance)
        self.recorder.routed(turn, route)
        _LOGGER.debug(
            "%s: %r handled by frame %s, rule %s: %s [%s]",
            self.hub.entry.title,
            turn.transcript,
            route.frame,
            route.rule,
            route.reason,
            "; ".join(route.trace),
        )
        self.events.routed(turn, route)
        await self._act(route, turn)

    async def act(self, route: Route) -> None:
        """Say what a route no utterance caused says (a query submitted on silence).

        It is no turn of a follow-up session: the session's window stays as it is.
        """
        await self._act(route, None)

    async def _act(self, route: Route, turn: Turn | None) -> None:
        """Say what the route says, ask the agent if it says so, listen on if asked.

        The reply is spoken as it is written: an agent that streams its answer
        is heard from its first sentence on (``agent_stream``).
        """
        self.satellite.set_state(AssistSatelliteState.PROCESSING)
        answer, asked_back, result = "", False, None
        text = AnswerText(route.speak)
        speaking = self.hub.entry.async_create_background_task(
            self.hass,
            self.speech.say_stream(text.pieces(), response=True),
            f"voicestack {self.hub.satellite_id} reply",
        )
        try:
            with states_changed_in(self.hass, self.hub.request_context) as changed:
                if route.agent_text is not None:
                    with self.recorder.stage(turn, "agent"):
                        result = await self._converse(
                            self.hub.pipeline(),
                            route.agent_text,
                            self._conversation_id(turn),
                            text.on_delta,
                        )
                    self.recorder.answered(turn, result)
                    answer = result.response.speech.get("plain", {}).get("speech", "")
                    asked_back = result.continue_conversation
            session = self._session if turn is not None else None
            # At the turn limit an answer's question would go unheard: say so.
            closing = self.follow_up.closing(answer, asked_back) if session else ""
            text.finish(
                reply_for(route, answer=answer, closing=closing).speech,
                reply_for(replace(route, speak=None), closing=closing).speech,
            )
            with self.recorder.stage(turn, "speech"):
                playback = await speaking
        finally:
            speaking.cancel()
        speech = text.text
        self.recorder.said(turn, speech, playback)
        follow_up_s = self.follow_up.answered(asked_back) if session else None
        reply = reply_for(
            route,
            answer=answer,
            follow_up_s=follow_up_s,
            always_listening=self.modes.always_listening,
        )
        if follow_up_s is not None and _changed_something(route, result, changed):
            self.conversations.buffer.arm()  # what follows may finish the thought
        if turn is not None and session is not None:
            self.events.turn(turn, session, route, speech, reply.listen_s)
        await self._listen(reply.listen_s)

    def _is_stop(self, turn: Turn) -> bool:
        """Whether the turn is a stop phrase said in a follow-up window.

        Only in a session's second turn or later, a window the follow-up loop
        opened: right after a wake word "stop" is a command (it stops the
        music), and in a voice mode's window ("Say yes or no") "no thanks" is
        the mode's answer.
        """
        return (
            self._session is not None
            and self._session.turn > 1
            and turn.transcript is not None
            and self.follow_up.is_stop(turn.transcript)
        )

    async def _stop_session(self, turn: Turn) -> None:
        """The user ended the session: nothing goes to the agent, nothing is said."""
        session = self._session
        assert session is not None
        self.follow_up.stop()
        _LOGGER.debug("%s: %r ends the session", self.hub.entry.title, turn.transcript)
        self.recorder.note(turn, Outcome.STOPPED)
        self.events.unrouted(turn, "stopped", "a stop word ends the follow-up session")
        self.events.turn(turn, session, None, "", None)
        await self._listen(None)
        await self.speech.say("")

    def _conversation_id(self, turn: Turn | None) -> str | None:
        """The conversation this agent call continues (the memory policy's).

        The first turn of a session no wake word started answers a conversation
        Home Assistant opened (``start_conversation``): it continues that one.
        """
        session = self._session
        if turn is not None and session is not None and session.turn == 1:
            if not turn.by_wake_word:
                return self.satellite.conversation_id
            return None
        return self.follow_up.conversation_id()

    async def _listen(self, window_s: float | None) -> None:
        """Open the mic for ``window_s``, or close a window opened earlier."""
        if not self.hub.link.supports(LISTEN):
            return
        timeout = self._window.request(window_s)
        if timeout is not None:
            await self.hub.link.send(listen_event(timeout=timeout))

    async def _converse(
        self,
        pipeline: Pipeline,
        text: str,
        conversation_id: str | None,
        on_delta: Callable[[conversation.ChatLog, dict[str, Any]], None],
    ) -> conversation.ConversationResult:
        """Ask the pipeline's agent; what it streams goes to ``on_delta`` at once."""
        request = conversation.ConversationInput(
            text=text,
            context=self.hub.request_context,
            conversation_id=conversation_id,
            device_id=self.hub.device_id(),
            satellite_id=self.satellite.entity_id,
            language=pipeline.conversation_language,
            agent_id=pipeline.conversation_engine,
            extra_system_prompt=self.satellite.take_start_prompt(),
        )
        result = await converse_streaming(self.hass, request, on_delta)
        self.follow_up.remember(result.conversation_id)
        self.satellite.continue_conversation(result.conversation_id)
        return result

    def _nothing_recognized(self, turn: Turn, reason: EmptyReason) -> None:
        """Nothing was said (``reason``): count and tell; nothing acts, nothing is said."""
        self.hub.empty_transcripts += 1
        self.recorder.note(turn, Outcome.EMPTY, reason)
        _LOGGER.info(
            "%s: empty request, %s (%r)",
            self.hub.entry.title,
            reason,
            turn.transcript,
        )
        self.events.unrouted(turn, "empty", reason)
        log_empty_request(self.hass, self.satellite.entity_id, reason)
        self.hub.notify()

    # -- fragments after an action (post-action debounce) ---------------------------

    def _wants_fragments(self) -> bool:
        """The last turn changed something and its window is open: fragments."""
        return (
            self.conversations.buffer.armed
            and self.follow_up.status.open
            and self.hub.link.supports(LISTEN)
        )

    def _start_fragment(self) -> None:
        """A fragment streams in: keep the window open for the next one.

        It is transcribed on its own (``speech_input``), so the next fragment
        may stream while this one is transcribed; they join the buffer in order.
        """
        turn = self._turn = Turn(
            self.clock, self._audio_limit, wake_word=None, woken=False
        )
        self._speculation = None  # fragments go to speech-to-text whole
        self.recorder.begin(turn, self.clock, self.satellite.entity_id)
        turn.audio.start_deadline()
        session = self.follow_up.status.session_id
        self.follow_up.hold()
        self.conversations.buffer.hold()
        if (window := self._window.request(self.follow_up.policy.listen_s)) is not None:
            self._send(listen_event(timeout=window))
        previous = self._fragment_task
        self._fragment_task = self.hub.entry.async_create_background_task(
            self.hass,
            self._fragment(turn, previous, session),
            f"voicestack {self.hub.satellite_id} fragment",
        )
        self.recorder.follow(turn, self._fragment_task)

    async def _fragment(
        self, turn: Turn, previous: asyncio.Task[None] | None, session: str | None
    ) -> None:
        try:
            text = await transcribe(self.hass, self.hub.pipeline(), turn.audio.chunks())
        except HomeAssistantError as err:
            _LOGGER.warning(
                "%s: fragment not transcribed: %s", self.hub.entry.title, err
            )
            text = ""
        finally:
            turn.end()
        turn.heard(text)
        # No transcript goes back: the satellite ended this fragment itself (or
        # the audio limit told it), and the satellite cannot tell which request a
        # transcript is for: one sent now ends whatever streams now, the next
        # fragment, cut in two (seen in CI on a loaded CPU).
        if previous is not None:
            await asyncio.wait([previous])  # fragments join in the order said
        if self.follow_up.status.session_id != session:
            # The session ended meanwhile (a wake word): the thought is stale.
            self.conversations.fragments_dropped += 1
            self.recorder.note(turn, Outcome.CANCELLED)
            _LOGGER.info(
                "%s: fragment %r dropped: its session ended", self.hub.entry.title, text
            )
            return
        await self._collect(turn)

    async def _collect(self, turn: Turn) -> None:
        """Buffer a transcribed fragment; a stop or emergency phrase acts at once."""
        assert turn.transcript is not None
        text, buffer = turn.transcript, self.conversations.buffer
        if self.follow_up.is_stop(text):
            self._session = self.follow_up.begin_turn(woken=False)
            await self._stop_session(turn)
            return
        self.recorder.note(turn, Outcome.BUFFERED if hear(text).real else Outcome.EMPTY)
        if not buffer.add(text):
            # The buffer flushed (its maximum) while this fragment was heard.
            self.on_flush(text)
            return
        if hear(text).real:
            self._fragments += 1
            self.events.unrouted(
                turn, "buffered", "held after an action: more may follow"
            )
        if self.conversations.bypasses(text):
            buffer.flush_now()
        elif not buffer.buffering:  # only noise so far: nobody is talking
            self.follow_up.nothing_heard()
            await self._listen(None)

    @callback
    def on_flush(self, text: str) -> None:
        """The buffered fragments, as one text: one turn of the session."""
        turn = Turn(self.clock, self._audio_limit, wake_word=None, woken=False)
        turn.end()  # its audio came with the fragments
        turn.heard(text)
        turn.fragments, self._fragments = max(1, self._fragments), 0
        self._session = self.follow_up.begin_turn(woken=False)
        self.hub.new_request_context()  # what it changes is told apart from before
        self.hub.set_assist_in_progress(True)
        self._task = self.hub.entry.async_create_background_task(
            self.hass,
            self._answer(turn),
            f"voicestack {self.hub.satellite_id} request",
        )

    async def _answer(self, turn: Turn) -> None:
        """Route and answer a turn that has its transcript already."""
        try:
            await self._respond(turn)
        except HomeAssistantError as err:
            _LOGGER.warning("%s: request failed: %s", self.hub.entry.title, err)
            self.satellite.tts_response_finished()
        finally:
            self.hub.set_assist_in_progress(False)

    def _send(self, event: Event) -> None:
        self.hub.entry.async_create_background_task(
            self.hass, self.hub.link.send(event), "voicestack send"
        )


def _changed_something(
    route: Route, result: conversation.ConversationResult | None, states: list[str]
) -> bool:
    """Whether the turn changed state (the post-action buffer arms after it).

    A mode switched or delivered, the request changed an entity's state (any
    agent), or the agent says it acted on something (its intent response).
    """
    if route.changed or states:
        return True
    if result is None:
        return False
    response = result.response
    return response.response_type is intent.IntentResponseType.ACTION_DONE and bool(
        response.success_results or response.intent
    )
