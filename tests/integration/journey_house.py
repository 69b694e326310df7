"""The house the voice journeys run in: Home Assistant, its satellite in a room, people.

Real Home Assistant with its default agent, whisper and Piper servers, and a
real satellite subprocess in ``devstack.room.Room``. People speak at a natural
pace: each phrase is cut at its last word, and the pause after it is the
caller's. What the house did (utterances, barge-in verdicts, announcements) is
recorded with the loop time it arrived; what the room heard is read with
``devstack.ear``, off the loop (whisper takes a while, and the room and Home
Assistant run on it).
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import (
    Pipeline,
    async_get_pipeline,
    async_update_pipeline,
)
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.const import STATE_OFF
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.helpers import area_registry as ar, entity_registry as er
from homeassistant.helpers.template import Template
from homeassistant.setup import async_setup_component

from custom_components.voicestack.const import (
    DOMAIN,
    EVENT_ANNOUNCEMENT,
    EVENT_BARGE_IN,
    EVENT_UTTERANCE,
)
from custom_components.voicestack.runtime import SatelliteRuntime
from custom_components.voicestack.voiceprints.enrollment import DEFAULT_PHRASES
from devstack import servers, speech, voices
from devstack.assist_pipeline import create_preferred_pipeline
from devstack.ear import MIN_RATIO, Ear, Phrase, assert_heard, transcript
from devstack.home_config import CUSTOM_SENTENCES_YAML
from devstack.room import Heard, Room
from devstack.satellite import satellite
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import (
    FAN,
    FAN_SWITCH,
    FRONT_DOOR,
    FRONT_DOOR_LOCK,
    KITCHEN_LIGHT,
    LIGHT,
    add_voicestack,
    add_wyoming,
    words,
)

SATELLITE = "assist_satellite.test_satellite"
MODE = "select.test_satellite_voice_mode"
PERSON = "person.sam"
# "Tell me about the house." (a custom sentence): three sentences, the state now.
HOUSE_REPORT = (
    "Here is the news from your home tonight, room by room, as it stands.",
    (
        "The kitchen light is {{ states('light.kitchen') }},"
        " and the front door is {{ states('lock.front_door') }}."
    ),
    "The fan is {{ states('switch.fan') }}, and everything else is quiet and calm.",
)
STEP_TIMEOUT_S = 40.0
WAKE_GAP_S = 0.7  # after "Hey Jarvis": the chime plays, then the request


@dataclass(frozen=True, slots=True)
class Person:
    """Someone in the room: a voice (``devstack.voices``) and a speaking rate."""

    voice: str
    rate: float = 1.0

    def speak(self, text: str) -> bytes:
        """``text`` in this voice as the engine says it (blocking: off the loop)."""
        return voices.voice(self.voice).say(text, self.rate)

    async def say(self, text: str) -> bytes:
        """``text`` in this voice, cut at its last word (the pause is the caller's)."""
        pcm = await asyncio.to_thread(self.speak, text)
        return pcm[: round(speech.speech_end_s(pcm) * speech.RATE) * 2]


@dataclass
class House:
    """Home Assistant, its satellite in the room, and what happened, when."""

    hass: HomeAssistant
    room: Room
    runtime: SatelliteRuntime
    pipeline: Pipeline
    utterances: list[Event] = field(default_factory=list)
    barge_ins: list[tuple[float, Event]] = field(default_factory=list)
    announcements: list[Event] = field(default_factory=list)

    def now(self) -> float:
        """Loop time: the room's clock, and the speaker's."""
        return asyncio.get_running_loop().time()

    async def say(
        self, person: Person, *texts: str, gap_s: float = 0.6, source: str = "user"
    ) -> Heard:
        """``texts`` one after the other, ``gap_s`` apart; where the first starts."""
        parts = [await person.say(text) for text in texts]
        return await self.room.say(speech.silence(gap_s).join(parts), source=source)

    async def wake_and_say(self, person: Person, text: str) -> Heard:
        """Say "Hey Jarvis." and, after the chime, ``text``."""
        return await self.say(person, "Hey Jarvis.", text, gap_s=WAKE_GAP_S)

    async def answered(self, count: int, quiet_s: float = 1.0) -> None:
        """The ``count``-th utterance routed, its reply played, quiet ``quiet_s``."""
        await wait_for(
            lambda: len(self.utterances) >= count, STEP_TIMEOUT_S, "the transcript"
        )
        await self.settled(quiet_s)

    async def settled(self, quiet_s: float = 1.0) -> None:
        """No request running, nothing playing, and the speaker quiet ``quiet_s``."""

        def quiet() -> bool:
            if self.room.speaker:
                arrived, samples = self.room.speaker[-1]
                if self.now() - (arrived + len(samples) / speech.RATE) < quiet_s:
                    return False
            hub = self.runtime.hub
            return not hub.assist_in_progress and not hub.speaker.busy

        await wait_for(quiet, STEP_TIMEOUT_S, "a quiet house")

    async def tidied(self) -> None:
        """After a failed journey: its voice mode closed, the house quiet again."""
        if self.hass.states.get(MODE).state not in ("wake_word", "always_listening"):
            await self.hass.services.async_call(
                DOMAIN, "abort_mode", {"entity_id": SATELLITE}, blocking=True
            )
        await self.use_the_default_agent()
        await self.settled()

    def report(self) -> list[str]:
        """The house report's sentences as Home Assistant says them now."""
        return [Template(s, self.hass).async_render() for s in HOUSE_REPORT]

    async def use_the_default_agent(self) -> None:
        """Give the pipeline Home Assistant's own agent back."""
        pipeline = async_get_pipeline(self.hass, self.pipeline.id)
        await async_update_pipeline(
            self.hass, pipeline, conversation_engine=conversation.HOME_ASSISTANT_AGENT
        )

    def verdicts(self, after: int) -> list[tuple[str, str]]:
        """(kind, reason) of each barge-in record after the first ``after``."""
        return [(e.data["kind"], e.data["reason"]) for _, e in self.barge_ins[after:]]

    async def heard(
        self,
        expected: list[str],
        since: float,
        *,
        more: int = 0,
        min_ratio: float = MIN_RATIO,
    ) -> list[Phrase]:
        """``expected`` heard in order since ``since``; ``more`` phrases besides.

        ``devstack.ear.assert_heard`` off the loop; a sound without words (the
        satellite's chimes) is no phrase. Besides the matches, exactly ``more``
        phrases were heard, all after them (an answer whose words whisper
        cannot be trusted with: the callers check those on the Speaker).
        """
        check = partial(
            assert_heard,
            self.room,
            expected,
            since=since,
            only=False,
            min_ratio=min_ratio,
        )
        matched = await asyncio.to_thread(check)
        others = [
            phrase
            for phrase in await self.spoken(since)
            if not any(m.start <= phrase.start and phrase.end <= m.end for m in matched)
        ]
        assert len(others) == more, await self.transcript(since)
        assert all(p.start >= matched[-1].end for p in others), await self.transcript(
            since
        )
        return matched

    async def spoken(self, since: float) -> list[Phrase]:
        """Every phrase with words heard since ``since`` (chimes have none)."""
        phrases = await asyncio.to_thread(Ear(self.room).heard, since)
        return [phrase for phrase in phrases if words(phrase.text)]

    async def transcript(self, since: float) -> str:
        """Everything heard since ``since``, with times (failure messages)."""
        return transcript(await asyncio.to_thread(Ear(self.room).heard, since))


async def set_up_house(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    config_dir: Path,
    room: Room,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> House:
    """The kitchen light, the front door, the fan, the house report.

    Assist with whisper and Piper, and sam, a person. The satellite runs in
    ``room``; Home Assistant's default agent answers.
    """
    sentences = config_dir / "custom_sentences" / "en"
    sentences.mkdir(parents=True)
    (sentences / "house.yaml").write_text(CUSTOM_SENTENCES_YAML)
    report = {"speech": {"text": " ".join(HOUSE_REPORT)}}
    entities = {
        "light": [KITCHEN_LIGHT],
        "lock": [FRONT_DOOR_LOCK],
        "switch": [FAN_SWITCH],
    }
    for component, config in (
        ("assist_pipeline", {}),
        ("conversation", {}),
        ("input_boolean", {"input_boolean": {"kitchen_power": {}, "fan_power": {}}}),
        ("intent_script", {"intent_script": {"HouseReport": report}}),
        ("template", {"template": [entities]}),
    ):
        assert await async_setup_component(hass, component, config)
    await hass.async_block_till_done()
    area = ar.async_get(hass).async_get_or_create("Kitchen")
    er.async_get(hass).async_update_entity(LIGHT, area_id=area.id)
    async_expose_entity(hass, conversation.DOMAIN, FRONT_DOOR, True)
    assert hass.states.get(LIGHT).state == STATE_OFF
    assert hass.states.get(FAN).state == STATE_OFF
    hass.states.async_set(PERSON, "home", {"friendly_name": "Sam"})
    stt = await add_wyoming(hass, stack, whisper.host, whisper.port)
    tts = await add_wyoming(hass, stack, piper.host, piper.port)
    pipeline = await create_preferred_pipeline(hass, stt, tts, "Journeys")
    sat = await stack.enter_async_context(satellite(tmp_path, room=room))
    entry = await add_voicestack(hass, stack, sat)
    await wait_for(lambda: hass.states.get(SATELLITE).state == "idle", 20, "idle")
    house = House(hass, room, runtime_of(entry), pipeline)

    @callback
    def verdict(event: Event) -> None:
        house.barge_ins.append((house.now(), event))

    stack.callback(hass.bus.async_listen(EVENT_BARGE_IN, verdict))
    stack.callback(hass.bus.async_listen(EVENT_UTTERANCE, house.utterances.append))
    stack.callback(
        hass.bus.async_listen(EVENT_ANNOUNCEMENT, house.announcements.append)
    )
    return house


async def enroll(house: House, person: Person) -> None:
    """``voicestack.enroll_voice`` as a user does: each default phrase when asked."""
    asked = house.now()
    enrolling = asyncio.create_task(
        house.hass.services.async_call(
            DOMAIN,
            "enroll_voice",
            {"entity_id": SATELLITE, "person": PERSON},
            blocking=True,
            return_response=True,
        )
    )
    for phrase in DEFAULT_PHRASES:
        await house.room.quiet(asked, quiet_s=0.8)  # "Phrase 1 of 3. Please say: …"
        # All of it: on a loaded machine its sentences may come apart.
        await house.settled(quiet_s=0.8)
        asked = (await house.say(person, phrase)).at
    response = await asyncio.wait_for(enrolling, STEP_TIMEOUT_S)
    assert response is not None
    assert (response["person"], response["phrases"]) == (PERSON, 3), response
