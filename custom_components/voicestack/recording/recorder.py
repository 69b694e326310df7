"""Records one satellite's requests while its "Record requests" switch is on.

The voice loop tells it what happens to each request (``Turn``): the recorder
gives the turn a ``core.recording.Recording`` when it starts, reads Home
Assistant's pipeline events into it (wake word, VAD start and end with their
positions in the stream, errors and their stage) and the conversation agent's
answer (``answered``: response type, error code, intent, targets), and saves
it through the recording library once the request is over (answered,
dropped, cancelled, failed).

Saving runs in the background, never in the answer's way; it waits for the
satellite's ``audio-stop`` first (at most ``STREAM_GRACE_S``), so the recording
holds every sample Home Assistant received for the request, also the ones after
Home Assistant's VAD ended it. The limits are the satellite's options: the
library removes its oldest recordings beyond them.
"""

from __future__ import annotations

import asyncio
from asyncio import TimerHandle
from collections.abc import Iterator
from contextlib import contextmanager
import logging
from typing import Any, Final

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import PipelineEvent, PipelineEventType
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import intent
from homeassistant.util import dt as dt_util
from wyoming.event import Event
from wyoming.pipeline import PipelineStage as WyomingStage, RunPipeline

from voicestack_protocol import parse_preroll

from ..const import (
    CONF_RECORDINGS_KEEP,
    CONF_RECORDINGS_MAX_MB,
    DEFAULT_RECORDINGS_KEEP,
    DEFAULT_RECORDINGS_MAX_MB,
)
from ..core.clock import Clock
from ..core.conversation.turn import Turn
from ..core.no_speech import EmptyReason
from ..core.recording.recording import EndOfSpeech, Outcome, Recording
from ..core.request_result import stage_of_error
from ..core.router.route import Route
from ..core.speaker import Playback
from .library import recording_library

_LOGGER = logging.getLogger(__name__)

# How long a finished request waits for the rest of its stream (audio-stop).
STREAM_GRACE_S: Final = 2.0
# Home Assistant's pipeline error when speech-to-text returned no text at all:
# an empty transcript, not a failure.
STT_NO_TEXT: Final = "stt-no-text-recognized"
MEGABYTE: Final = 1024 * 1024


class RequestRecorder:
    """Records a satellite's requests when ``enabled``; see the module."""

    def __init__(self, hass: HomeAssistant, entry: ConfigEntry) -> None:
        """Off until the switch turns it on; ``close`` when the entry unloads."""
        self._hass = hass
        self._entry = entry
        self.enabled = False
        self.saved = 0  # recordings the library stored
        self.dropped = 0  # recordings the library refused (the disk, bad data)
        self._streaming: Recording | None = None  # the newest request's
        # Requests that are over, waiting for the end of their stream.
        self._waiting: dict[Recording, TimerHandle] = {}

    # -- the satellite's requests ------------------------------------------------

    @callback
    def begin(
        self,
        turn: Turn,
        clock: Clock,
        entity_id: str | None,
        run: RunPipeline | None = None,
    ) -> None:
        """A request starts (``run``: None for a fragment): record it if on.

        The request before it streams no more: the satellite started this one.
        """
        if (previous := self._streaming) is not None:
            self._stream_over(previous, EndOfSpeech.CANCELLED)
        self._streaming = None
        if not self.enabled:
            return
        wake_stage = run is not None and run.start_stage is WyomingStage.WAKE
        recording = turn.recording = self._streaming = Recording(
            clock,
            started=dt_util.utcnow().isoformat(),
            entry_id=self._entry.entry_id,
            satellite=self._entry.title,
            entity_id=entity_id,
            wake_word=turn.wake_word,
            woken=turn.by_wake_word and not wake_stage,
            wake_stage=wake_stage,
        )
        recording.stt_engine = self._entry.runtime_data.hub.pipeline().stt_engine

    @callback
    def preroll(self, turn: Turn, event: Event) -> None:
        """The satellite's ``voicestack-preroll``: the splice and the cut."""
        if turn.recording is None:
            return
        try:
            preroll = parse_preroll(event)
        except ValueError as err:
            _LOGGER.warning("%s: ignoring %s", self._entry.title, err)
            return
        turn.recording.preroll(preroll.samples, preroll.cut, preroll.start)

    @callback
    def stream_ended(self, turn: Turn | None, cause: EndOfSpeech) -> None:
        """The request's audio ended (``audio-stop``, a limit, no speech)."""
        if turn is not None and turn.recording is not None:
            self._stream_over(turn.recording, cause)

    @staticmethod
    def ended_by(turn: Turn | None, cause: EndOfSpeech) -> None:
        """What ended the speech (the audio that still comes is recorded)."""
        if turn is not None and turn.recording is not None:
            turn.recording.ended_by(cause)

    @callback
    def no_speech(self, turn: Turn | None) -> None:
        """The satellite heard nobody speak: the request ends empty, with no speech."""
        self.note(turn, Outcome.EMPTY, EmptyReason.NO_SPEECH)
        self.stream_ended(turn, EndOfSpeech.NO_SPEECH)

    @callback
    def pipeline_event(self, turn: Turn | None, event: PipelineEvent) -> None:
        """Where Home Assistant's pipeline woke, heard speech start and end."""
        recording = turn.recording if turn is not None else None
        if recording is None:
            return
        data = event.data or {}
        if event.type is PipelineEventType.WAKE_WORD_END:
            if detected := data.get("wake_word_output"):
                recording.wake_word_detected(
                    detected.get("wake_word_id"), _ms(detected.get("timestamp"))
                )
        elif event.type is PipelineEventType.STT_VAD_START:
            if (at := _ms(data.get("timestamp"))) is not None:
                recording.speech_started(at)
        elif event.type is PipelineEventType.STT_VAD_END:
            if (at := _ms(data.get("timestamp"))) is not None:
                recording.speech_ended(at)
        elif event.type is PipelineEventType.ERROR and data.get("code") != STT_NO_TEXT:
            code = data.get("code")
            recording.failed(stage_of_error(code), code, str(data.get("message") or ""))
            recording.finish_as(Outcome.FAILED)

    # -- what the request became -------------------------------------------------

    @staticmethod
    @contextmanager
    def stage(turn: Turn | None, name: str) -> Iterator[None]:
        """Time stage ``name`` of ``turn``'s recording (if it has one)."""
        if turn is None or turn.recording is None:
            yield
            return
        with turn.recording.stage(name):
            yield

    @staticmethod
    def routed(turn: Turn, route: Route) -> None:
        """The router's decision, for the recording."""
        if turn.recording is not None:
            turn.recording.route = route

    @staticmethod
    def answered(turn: Turn | None, result: conversation.ConversationResult) -> None:
        """The conversation agent's answer: its type, error, intent, targets."""
        if turn is None or turn.recording is None:
            return
        response = result.response
        kind = response.response_type
        turn.recording.answered(
            response_type=kind.value,
            error_code=None
            if response.error_code is None
            else str(response.error_code),
            intent=None if response.intent is None else response.intent.intent_type,
            targets=[_target(t) for t in response.success_results],
            failed_targets=[_target(t) for t in response.failed_results],
            acted=kind is intent.IntentResponseType.ACTION_DONE
            and bool(response.success_results),
        )

    @staticmethod
    def said(turn: Turn | None, response: str, playback: Playback) -> None:
        """The answer was said: the request was routed and answered."""
        if turn is not None and turn.recording is not None:
            turn.recording.said(response, playback)
            turn.recording.finish_as(Outcome.ROUTED)

    @staticmethod
    def note(
        turn: Turn | None, outcome: Outcome, reason: EmptyReason | None = None
    ) -> None:
        """What became of the request, and why (the first outcome told is the one)."""
        if turn is not None and turn.recording is not None:
            turn.recording.finish_as(outcome, reason)

    @callback
    def follow(self, turn: Turn, task: asyncio.Task[None]) -> None:
        """``task`` runs ``turn``: its end (done, failed, cancelled) ends the request."""
        if turn.recording is not None:
            task.add_done_callback(lambda _task: self.finish(turn))

    @callback
    def finish(self, turn: Turn | None, outcome: Outcome | None = None) -> None:
        """The request is over: save its recording (once) when its stream ended."""
        recording = turn.recording if turn is not None else None
        if recording is None or not recording.finish():
            return
        if outcome is not None:
            recording.finish_as(outcome)
        if recording.stream_open:
            self._waiting[recording] = self._hass.loop.call_later(
                STREAM_GRACE_S, self._stream_over, recording, EndOfSpeech.CANCELLED
            )
        else:
            self._save(recording)

    @callback
    def close(self) -> None:
        """The entry unloads: what waits for the end of its stream is saved now."""
        for recording in list(self._waiting):
            self._stream_over(recording, EndOfSpeech.CANCELLED)

    # -- inside ------------------------------------------------------------------

    def _stream_over(self, recording: Recording, cause: EndOfSpeech) -> None:
        recording.stream_ended(cause)
        if self._streaming is recording:
            self._streaming = None
        if (timer := self._waiting.pop(recording, None)) is not None:
            timer.cancel()
            self._save(recording)

    def _save(self, recording: Recording) -> None:
        """Hand the recording to the library in the background (counted)."""
        self._hass.async_create_background_task(
            self._store(recording.meta(), recording.pcm()),
            "voicestack save recording",
        )

    async def _store(self, meta: dict[str, Any], pcm: bytes) -> None:
        options = self._entry.options
        try:
            await recording_library(self._hass).async_save(
                meta,
                pcm,
                keep=int(options.get(CONF_RECORDINGS_KEEP, DEFAULT_RECORDINGS_KEEP)),
                max_bytes=int(
                    options.get(CONF_RECORDINGS_MAX_MB, DEFAULT_RECORDINGS_MAX_MB)
                )
                * MEGABYTE,
            )
        except (OSError, ValueError, HomeAssistantError) as err:
            self.dropped += 1
            _LOGGER.warning("%s: recording not saved: %s", self._entry.title, err)
        else:
            self.saved += 1


def _target(target: intent.IntentResponseTarget) -> dict[str, Any]:
    """One target of the agent's answer, as the recording keeps it."""
    return {"type": str(target.type), "name": target.name, "id": target.id}


def _ms(value: object) -> int | None:
    """A pipeline event's ``timestamp`` (milliseconds into the stream), if one."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return int(value)
    return None
