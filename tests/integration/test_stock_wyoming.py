"""Home Assistant's own ``wyoming`` integration runs the satellite, unchanged.

The satellite claims to be a standard Wyoming satellite, so a user who never
installs VoiceStack's integration can add it with Home Assistant's built-in
``wyoming`` integration. This test is that user, with real parts only, on
loopback: the satellite is a subprocess hearing a spoken WAV; speech-to-text is a
wyoming-faster-whisper subprocess and text-to-speech a wyoming-piper subprocess,
both added as ``wyoming`` config entries; the Assist pipeline uses them with Home
Assistant's default conversation agent, which switches a template light named
"Kitchen light".

What is observed, and where:

- the wake word: the satellite detects it and sends ``detection``; Home Assistant
  resolves its name to the phrase from the satellite's ``info`` and records it as
  the last wake-up (``DATA_LAST_WAKE_UP``), and the pipeline run starts at STT;
- what speech-to-text heard: Assist's own debug recording (``debug_recording_dir``)
  of the STT audio, compared sample by sample with the WAV, and the transcript;
- the answer: the light is on and Piper's reply, played into ``--snd-file``,
  transcribes to the agent's response;
- ``played``: the only way Home Assistant's satellite entity leaves ``responding``
  in this run is ``tts_response_finished``, which it calls on ``played``.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.components.assist_pipeline import PipelineEvent, PipelineEventType
from homeassistant.components.assist_pipeline.const import DATA_LAST_WAKE_UP
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.const import STATE_ON
from homeassistant.core import HomeAssistant
import numpy as np
import pytest

from devstack import servers, speech
from devstack.satellite import satellite
from devstack.spoken_request import spoken_request
from devstack.waiting import wait_for
from tests.integration.assist import (
    IDLE,
    LIGHT,
    LISTENING,
    PROCESSING,
    RESPONDING,
    add_wyoming,
    record_states,
    set_up_assist,
    words,
)
from voicestack_satellite.settings_model import Settings
from voicestack_satellite.wake import WakeDetector, parse_spec

COMMAND = "Turn on the kitchen light."
PHRASE = "Hey Jarvis"  # what the satellite's info gives as hey_jarvis's phrase
RUN_TIMEOUT_S = 30.0
STEP = 1280  # the satellite's mic chunk and openWakeWord's step (80 ms)
DEFAULTS = Settings(name="defaults")  # the satellite's defaults, as shipped


def detection_sample(pcm: bytes) -> int:
    """Sample at which the satellite's detector fires on ``pcm`` (its 80 ms steps).

    The satellite feeds its ``--mic-file`` in the same steps from the file's start,
    so this is where its cut falls (give or take a step of history).
    """
    detector = WakeDetector([parse_spec("hey_jarvis", DEFAULTS.wake_threshold)])
    samples = np.frombuffer(pcm, dtype=np.int16)
    try:
        for start in range(0, len(samples), STEP):
            end = min(start + STEP, len(samples))
            if detector.process(samples[start:end], end) is not None:
                return end
    finally:
        detector.close()
    raise AssertionError("the satellite's detector does not hear the wake word")


def offset_in(mic: bytes, heard: bytes) -> int:
    """Where ``heard`` sits in ``mic``, sample for sample.

    Every sample must be the mic's own, or digital silence: the satellite mutes
    its mic while its awake chime plays, so the chime stays out of the request.
    """
    big = np.frombuffer(mic, dtype=np.int16)
    small = np.frombuffer(heard, dtype=np.int16)
    voiced = np.flatnonzero(small)
    assert len(voiced) > 0, "STT heard only silence"
    first = int(voiced[0])
    for candidate in np.flatnonzero(big == small[first]):
        start = int(candidate) - first
        window = big[start : start + len(small)]
        if (
            start >= 0
            and len(window) == len(small)
            and np.all((window == small) | (small == 0))
        ):
            return start
    raise AssertionError("the STT audio is not a contiguous slice of the mic audio")


# Home Assistant's debug-recording thread can leave a wave writer to the garbage
# collector after closing its file (its code, not ours): the recording itself is
# complete and checked below.
@pytest.mark.filterwarnings(
    "ignore:Exception ignored in.*Wave_write:pytest.PytestUnraisableExceptionWarning"
)
async def test_stock_wyoming_runs_a_voice_command(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    recordings = tmp_path / "assist-recordings"
    mic_pcm = spoken_request(COMMAND)
    mic = speech.write_wav(tmp_path / "mic.wav", mic_pcm)
    cut = detection_sample(mic_pcm)

    async with AsyncExitStack() as stack:
        pipeline = await set_up_assist(
            hass, stack, tmp_path, piper, whisper, recordings=recordings
        )
        pipeline_data = hass.data[KEY_ASSIST_PIPELINE]
        log = record_states(hass, stack)

        # The satellite as shipped: defaults, but for where its sound comes from
        # and goes to.
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        # Home Assistant connects and sends run-satellite: the mic file starts.
        await add_wyoming(hass, stack, "127.0.0.1", sat.port)
        await wait_for(log.answered, RUN_TIMEOUT_S, "responding, then idle again")
        states = log.names()  # before unloading makes the entity unavailable
        playing_s = log.last_entered(IDLE) - log.last_entered(RESPONDING)

    # The wake word: detected by the satellite, resolved by HA to its phrase.
    assert set(hass.data[DATA_LAST_WAKE_UP]) == {PHRASE}
    assert "Wake word hey_jarvis" in sat.log_text()
    runs = list(pipeline_data.pipeline_debug[pipeline.id].values())
    assert len(runs) == 1
    events: list[PipelineEvent] = runs[0].events
    types = [event.type for event in events]
    assert PipelineEventType.ERROR not in types, events
    assert types[:2] == [PipelineEventType.RUN_START, PipelineEventType.STT_START]
    data = {event.type: event.data or {} for event in events}

    # What STT heard: a sample-exact slice of the mic (no gap or repeat where the
    # preroll meets live audio), starting the wake preroll before the detection:
    # the words said while the detector decided, but not the wake word.
    (stt_wav,) = recordings.rglob("01_stt-*.wav")
    stt_pcm = speech.read_wav_pcm(stt_wav)
    start = offset_in(mic_pcm, stt_pcm)
    preroll = round(DEFAULTS.wake_preroll_s * speech.RATE)
    assert abs(start - (cut - preroll)) <= STEP, (start, cut, preroll)
    transcript = data[PipelineEventType.STT_END]["stt_output"]["text"]
    assert words(transcript) == words(COMMAND)

    # The default agent understood it and switched the light.
    assert hass.states.get(LIGHT).state == STATE_ON
    response = data[PipelineEventType.INTENT_END]["intent_output"]["response"]
    answer = response["speech"]["plain"]["speech"]
    assert response["response_type"] == "action_done", answer

    # Piper's answer was played by the satellite into its --snd-file ...
    assert data[PipelineEventType.TTS_END]["tts_output"]["media_id"]
    (played_wav,) = tmp_path.glob("played.*.wav")
    played = speech.read_wav_pcm(played_wav)
    assert speech.seconds(played) > 0.5
    assert words(speech.transcribe(played)) == words(answer)

    # ... and acknowledged with ``played``: HA's entity went back to idle only
    # once the audio had been played in real time.
    assert states == [IDLE, LISTENING, PROCESSING, RESPONDING, IDLE]
    assert playing_s >= speech.seconds(played) - 0.1
