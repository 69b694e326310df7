"""One spoken command through the stack, with wall-clock times of every step.

The satellite is given to one owner (VoiceStack or HA's ``wyoming``), hears its
mic WAV, and the answer is waited for; HA's pipeline record and VoiceStack's
Speaker fill in what was heard and said.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from homeassistant.components.assist_pipeline import PipelineEvent, PipelineEventType
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.config_entries import ConfigEntry

from custom_components.voicestack.core.sentences import split_sentences
from devstack import speech
from devstack.home import Home, Owner
from devstack.satellite import Satellite
from devstack.spoken_request import MicAudio
from voicestack_satellite.mic import CHUNK_SAMPLES

CLAIM_TIMEOUT_S = 15.0
# --mic-file starts at the satellite's first 80 ms mic tick after run-satellite;
# on average half a tick after the moment the satellite reports being run.
MIC_TICK_S = CHUNK_SAMPLES / speech.RATE


@dataclass(slots=True)
class VoiceRun:
    """What one spoken command did, with wall-clock times.

    - ``claimed``: the satellite reports being run (``run-satellite``): its mic WAV
      starts at its next 80 ms tick, on average half a tick later;
    - ``end_of_speech``: that start plus the WAV's speech end offset;
    - ``vad_end``: Home Assistant told the satellite the speech ended (its VAD);
    - ``transcript_at``: speech-to-text ended (HA's pipeline record, both owners;
      VoiceStack's utterance event when its transcript was speculative);
    - ``first_audio``: the response's ``audio-start`` reached the satellite (its
      first ``audio-chunk`` follows in the same burst from both owners);
    - ``answered``: the satellite entity is idle again after ``played``.
    """

    owner: Owner
    mic: MicAudio
    claimed: float
    wake: float
    vad_end: float
    first_audio: float
    answered: float
    transcript: str = ""
    transcript_at: float | None = None  # STT end in HA's pipeline record
    answer: str = ""
    sentences: int = 0
    utterance_at: float | None = None
    responding_at: float | None = None
    response_seconds: float | None = None
    states_before: dict[str, str] = field(default_factory=dict)
    states_after: dict[str, str] = field(default_factory=dict)

    @property
    def mic_start(self) -> float:
        """When the satellite started playing its mic WAV (±40 ms)."""
        return self.claimed + MIC_TICK_S / 2

    @property
    def end_of_speech(self) -> float:
        """When the satellite heard the last speech sample of its WAV."""
        return self.mic_start + self.mic.speech_end_s

    @property
    def latency(self) -> float:
        """End of speech to the first response audio at the satellite."""
        return self.first_audio - self.end_of_speech


async def run_voice_command(
    home: Home,
    satellite: Satellite,
    owner: Owner,
    mic: MicAudio,
    *,
    on_step: Callable[[str, float], None] = lambda _text, _at: None,
) -> VoiceRun:
    """Give ``satellite`` to ``owner``, let it hear ``mic``, wait for the answer.

    The entry is removed again afterwards, so the next owner can take over.
    ``on_step`` hears about progress as it happens (for the demo's timeline).
    """
    states_before = home.device_states()
    entry = await home.add_satellite(owner, satellite.port)
    try:
        entity_id = home.entity_of(entry, "assist_satellite")
        claimed = await satellite.wait_for_state(
            "idle",
            after=0.0,
            timeout_s=CLAIM_TIMEOUT_S,
            what=f"run-satellite from {owner.label}",
        )
        on_step("connected", claimed.at)
        wake = await satellite.wait_for_state(
            "wake",
            after=claimed.at,
            timeout_s=mic.seconds + 3.0,
            what="wake word detection in the mic WAV",
        )
        vad_end = await satellite.wait_for_state(
            "thinking",
            after=wake.at,
            timeout_s=20.0,
            what="end of the command from Home Assistant's VAD",
        )
        first_audio = await satellite.wait_for_state(
            "speaking", after=vad_end.at, timeout_s=30.0, what="response audio"
        )
        on_step("speaking", first_audio.at)
        answered = await home.wait_for_entity(
            entity_id,
            AssistSatelliteState.IDLE,
            after=first_audio.at,
            timeout_s=60.0,
            what=f"idle state of {entity_id} after the response",
        )
        run = VoiceRun(
            owner,
            mic,
            claimed.at,
            wake.at,
            vad_end.at,
            first_audio.at,
            answered,
            states_before=states_before,
            states_after=home.device_states(),
        )
        run.responding_at = home.entity_states.first(
            entity_id, AssistSatelliteState.RESPONDING, after=vad_end.at
        )
        _fill_from_pipeline(run, home.new_pipeline_runs())
        if owner is Owner.VOICESTACK:
            _fill_from_voicestack(run, home, entry)
        else:  # HA's pipeline speaks the answer whole; count as VoiceStack would split
            run.sentences = len(split_sentences(run.answer))
        return run
    finally:
        await home.remove(entry)


def _fill_from_pipeline(run: VoiceRun, runs: list[list[PipelineEvent]]) -> None:
    """Transcript (both owners) and answer (stock pipeline) from HA's debug record."""
    for events in runs:
        for event in events:
            data = event.data or {}
            if event.type is PipelineEventType.STT_END:
                run.transcript = data["stt_output"]["text"].strip()
                run.transcript_at = datetime.fromisoformat(event.timestamp).timestamp()
            elif event.type is PipelineEventType.INTENT_END:
                response = data["intent_output"]["response"]
                run.answer = response["speech"]["plain"]["speech"]


def _fill_from_voicestack(run: VoiceRun, home: Home, entry: ConfigEntry) -> None:
    """Answer and its length from VoiceStack's Speaker; the utterance event."""
    playback = entry.runtime_data.hub.speaker.last
    if playback is not None:
        run.answer = " ".join(s.text for s in playback.sentences)
        run.sentences = len(playback.sentences)
        run.response_seconds = playback.seconds
    utterance = next(
        ((at, data) for at, data in home.utterances if at >= run.wake), None
    )
    run.utterance_at = utterance[0] if utterance is not None else None
    if run.transcript_at is None and utterance is not None:
        # Answered from a speculative transcript (request/speculation.py): HA's pipeline
        # was cancelled before its STT ended. The utterance event follows the
        # transcript by the router's few milliseconds.
        run.transcript, run.transcript_at = utterance[1]["text"], utterance[0]
