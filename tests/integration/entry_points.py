"""The two ways a person reaches the VoiceStack agent, behind one ``say``.

- ``TextEntry``: the companion app's text path, HA's websocket
  ``conversation/process`` with the conversation id carried as the app does;
  what the person reads is the answer's speech.
- ``StockEntry``: a stock Wyoming satellite under Home Assistant's own
  ``wyoming`` integration (our satellite, which HA drives with the stock
  protocol), its pipeline's agent VoiceStack's, with real whisper and Piper.
  The person speaks (a voice of ``devstack.voices``) into the satellite's live
  mic, the wake word first every time (HA's ``wyoming`` integration ignores
  ``continue_conversation``), and waits for the answer before speaking again;
  what they hear is what the satellite played, transcribed.

The router tests run over both (``test_agent_modes.py``): each step checks the
reply with ``heard_as``, exact for text, by words for speech (tiny.en's small
slips pass).
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import (
    PipelineEventType,
    async_update_pipeline,
)
from homeassistant.components.assist_pipeline.pipeline import KEY_ASSIST_PIPELINE
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.voicestack.agent.runtime import TEXT_KEY, AgentRuntime
from custom_components.voicestack.const import DOMAIN
from devstack import servers, speech, voices
from devstack.ear import similarity
from devstack.satellite import satellite
from devstack.state_log import SatelliteStateLog
from devstack.waiting import wait_for
from tests.integration.assist import (
    add_wyoming,
    record_states,
    set_up_assist,
    set_up_home,
)
from tests.integration.test_agent import Agent, add_agent, agent_entity
from tests.live_mic import LiveMic

QUESTION = "Should I unlock the front door? Say yes or no."
SAVED = "Saved to your notes."
TURN_TIMEOUT_S = 45.0  # speech, HA's end of speech, whisper, agent, Piper, playback
WAKE_PAUSE_S = 0.7  # a person waits for the awake chime after the wake word
# tiny.en's slips on Piper's short replies: one word in four may differ.
SPOKEN_RATIO = 0.75


class TextEntry:
    """The companion app: typed text, the answer read."""

    kind = "text"

    def __init__(self, agent: Agent) -> None:
        """``agent``: our agent's entity and a websocket client."""
        self.agent = agent
        self.key = TEXT_KEY
        self.replies: list[tuple[str, bool]] = []

    async def say(self, text: str) -> str:
        """One request; the answer's speech."""
        self.replies.append(await self.agent.say(text))
        return self.replies[-1][0]

    @property
    def said(self) -> str:
        """What Home Assistant answered last (what was read)."""
        return self.replies[-1][0]

    def heard_as(self, reply: str, expected: str, min_ratio: float = 1.0) -> bool:
        """Read exactly."""
        return reply == expected


@dataclass
class StockEntry:
    """A stock Wyoming satellite under HA's ``wyoming`` integration, spoken to."""

    hass: HomeAssistant
    mic: LiveMic
    log: SatelliteStateLog
    tmp_path: Path
    entity_id: str  # the wyoming integration's assist_satellite entity
    key: str  # its device id: the agent's router for it
    pipeline_id: str
    voice: str = "joe"
    heard: list[str] = field(default_factory=list)
    kind = "stock"

    async def say(self, text: str) -> str:
        """The wake word, a pause, ``text``; what the satellite played back."""
        person = voices.voice(self.voice)
        wake = await asyncio.to_thread(person.say, "Hey Jarvis.")
        request = await asyncio.to_thread(person.say, text)
        since = len(self.log.changes)
        played = len(self._played())
        await self.mic.say(speech.pad(wake, 0.0, WAKE_PAUSE_S) + request)
        await wait_for(
            lambda: self._answered(since, played),
            TURN_TIMEOUT_S,
            f"the answer to {text!r} (states {self.log.names()[-6:]})",
        )
        new = self._played()[played:]
        said = [
            await asyncio.to_thread(speech.transcribe, speech.read_wav_pcm(path))
            for path in new
        ]
        self.heard.append(" ".join(said))
        return self.heard[-1]

    @property
    def said(self) -> str:
        """What Home Assistant answered last: its pipeline's last intent output."""
        runs = self.hass.data[KEY_ASSIST_PIPELINE].pipeline_debug[self.pipeline_id]
        outputs = [
            event.data["intent_output"]
            for run in runs.values()
            for event in run.events
            if event.type is PipelineEventType.INTENT_END and event.data
        ]
        return str(outputs[-1]["response"]["speech"].get("plain", {}).get("speech", ""))

    def heard_as(
        self, reply: str, expected: str, min_ratio: float = SPOKEN_RATIO
    ) -> bool:
        """Heard as ``expected``, tiny.en's slips aside (``min_ratio`` of the words).

        Nothing for nothing; ``min_ratio`` 0: something was heard.
        """
        if not expected:
            return not reply.strip()
        return bool(reply.strip()) and similarity(reply, expected) >= min_ratio

    def _answered(self, since: int, played: int) -> bool:
        """The entity processed a request after ``since`` and is idle again.

        If it responded, the satellite has written what it played (Home
        Assistant may go idle before the satellite's stream ends).
        """
        states = [s for _, eid, s in self.log.changes[since:] if eid == self.entity_id]
        if AssistSatelliteState.PROCESSING not in states:
            return False
        if AssistSatelliteState.RESPONDING in states:
            return len(self._played()) > played
        return states[-1] == AssistSatelliteState.IDLE

    def _played(self) -> list[Path]:
        return sorted(
            self.tmp_path.glob("played.*.wav"),
            key=lambda path: int(path.stem.partition(".")[2]),
        )


async def text_entry(
    hass: HomeAssistant, hass_ws_client: WebSocketGenerator
) -> TextEntry:
    """The home with the front door, our agent wrapping HA's, the app's client."""
    await set_up_home(hass, front_door=True)
    created = await add_agent(hass, conversation.HOME_ASSISTANT_AGENT)
    entity_id = agent_entity(hass, created["result"].entry_id)
    return TextEntry(Agent(hass, entity_id, await hass_ws_client(hass)))


async def stock_entry(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    piper: servers.Endpoint,
    whisper: servers.Endpoint,
) -> StockEntry:
    """The home, whisper and Piper, our agent in the pipeline, a stock satellite."""
    pipeline = await set_up_assist(
        hass, stack, tmp_path, piper, whisper, front_door=True
    )
    created = await add_agent(hass, conversation.HOME_ASSISTANT_AGENT)
    ours = agent_entity(hass, created["result"].entry_id)
    await async_update_pipeline(hass, pipeline, conversation_engine=ours)
    log = record_states(hass, stack)
    sat = await stack.enter_async_context(
        satellite(tmp_path, "--mic-stdin", stdin=True)
    )
    assert sat.process.stdin is not None
    mic = await stack.enter_async_context(LiveMic(sat.process.stdin))
    wyoming = await add_wyoming(hass, stack, "127.0.0.1", sat.port)
    (entity,) = [
        e
        for e in er.async_entries_for_config_entry(er.async_get(hass), wyoming.entry_id)
        if e.domain == "assist_satellite"
    ]
    assert entity.device_id is not None
    await wait_for(
        lambda: (
            (state := hass.states.get(entity.entity_id)) is not None
            and state.state == AssistSatelliteState.IDLE
        ),
        10,
        "the stock satellite connected",
    )
    return StockEntry(
        hass, mic, log, tmp_path, entity.entity_id, entity.device_id, pipeline.id
    )


def runtime_of(hass: HomeAssistant) -> AgentRuntime:
    """The agent entry's runtime (after any reload)."""
    runtime: AgentRuntime = hass.config_entries.async_entries(DOMAIN)[0].runtime_data
    return runtime


type Person = TextEntry | StockEntry


async def answer(
    person: Person, text: str, expected: str, *, min_ratio: float | None = None
) -> str:
    """Say ``text``; assert Home Assistant answered ``expected`` and it was got."""
    reply = await person.say(text)
    assert person.said == expected, (text, person.said)
    ratio = {} if min_ratio is None else {"min_ratio": min_ratio}
    assert person.heard_as(reply, expected, **ratio), (text, reply, expected)
    return reply


def notes(hass: HomeAssistant) -> list[str]:
    """The notes file's lines."""
    path = Path(hass.config.config_dir) / "voicestack" / "notes.txt"
    return path.read_text().splitlines()
