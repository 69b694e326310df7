"""End to end: interrupt a real answer by voice, in a room, with a real Home Assistant.

Real Home Assistant (its default agent answers "Tell me about the house." in
three long sentences, and turns the fan on), real Piper and whisper servers, a
real satellite subprocess in ``devstack.room.Room``: the answer comes back into
its mic at -10 dB, 40 ms late, and people talk on top. Piper joe is the
household's user, enrolled through ``voicestack.enroll_voice`` on the satellite
itself; espeak-ng is the intruder (the TV). Covered, as issue 13 asks:

- the intruder pauses the answer, and it resumes at the start of the
  interrupted sentence (whisper hears that sentence begin again);
- joe saying "turn on the fan" stops the answer, the fan turns on, and the
  reply is heard;
- four intruders in a row: three resumes, then the answer stays silent;
- the answer's own echo interrupts nothing.

Newest Home Assistant only (``newest_ha``): what they check is the satellite's
and the verdict's, the same on every version, and they take minutes; the
Home Assistant side of barge-in (its control events, on both versions) is
test_barge_in_control.py.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
import re

from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.setup import async_setup_component
import pytest

from custom_components.voicestack.const import DOMAIN, EVENT_BARGE_IN
from custom_components.voicestack.core.speaker import Playback, PlaybackOutcome
from custom_components.voicestack.runtime import SatelliteRuntime
from devstack import servers, speech
from devstack.assist_pipeline import create_preferred_pipeline
from devstack.home_config import CUSTOM_SENTENCES_YAML
from devstack.room import Room
from devstack.satellite import satellite
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import FAN, FAN_SWITCH, add_voicestack, add_wyoming

pytestmark = [pytest.mark.e2e, pytest.mark.newest_ha]

SATELLITE = "assist_satellite.test_satellite"
JOE = "person.joe"
ANSWER = (
    "Here is the news from your home tonight, room by room, as it stands."
    " The kitchen light is off, and the living room lamp has been on since six."
    " The fan is {{ states('switch.fan') }}, and everything else is quiet and calm."
)
ENROLL_PHRASE = "The quick brown fox jumps over the lazy dog."
INTRUDER = "Excuse me, is anybody there?"


@dataclass
class House:
    """The home, its satellite in the room, and what barge-in reported."""

    hass: HomeAssistant
    room: Room
    runtime: SatelliteRuntime
    records: list[Event]

    def kinds(self) -> list[str]:
        """What each barge-in record was, in order."""
        return [record.data["kind"] for record in self.records]


async def set_up_house(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    config_dir: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> Pipeline:
    """The fan, the house report (a custom sentence), whisper, Piper, a pipeline."""
    sentences = config_dir / "custom_sentences" / "en"
    sentences.mkdir(parents=True)
    (sentences / "house.yaml").write_text(CUSTOM_SENTENCES_YAML)
    for component, config in (
        ("assist_pipeline", {}),
        ("conversation", {}),
        ("input_boolean", {"input_boolean": {"fan_power": {}}}),
        (
            "intent_script",
            {"intent_script": {"HouseReport": {"speech": {"text": ANSWER}}}},
        ),
        ("template", {"template": [{"switch": [FAN_SWITCH]}]}),
    ):
        assert await async_setup_component(hass, component, config)
    await hass.async_block_till_done()
    assert hass.states.get(FAN).state == STATE_OFF
    hass.states.async_set(JOE, "home", {"friendly_name": "Joe"})
    stt = await add_wyoming(hass, stack, whisper.host, whisper.port)
    tts = await add_wyoming(hass, stack, piper.host, piper.port)
    return await create_preferred_pipeline(hass, stt, tts, "Barge-in test pipeline")


@pytest.fixture
async def house(
    hass: HomeAssistant,
    config_dir: Path,
    tmp_path: Path,
    stack: AsyncExitStack,
    piper: servers.Server,
    whisper: servers.Server,
) -> House:
    """The house, a satellite in a room run by VoiceStack, and joe enrolled."""
    await set_up_house(hass, stack, config_dir, piper, whisper)
    room = await stack.enter_async_context(Room(tmp_path))
    sat = await stack.enter_async_context(satellite(tmp_path, room=room))
    entry = await add_voicestack(hass, stack, sat)
    await wait_for(lambda: hass.states.get(SATELLITE).state == "idle", 20, "idle")
    records: list[Event] = []

    @callback
    def record(event: Event) -> None:
        records.append(event)

    stack.callback(hass.bus.async_listen(EVENT_BARGE_IN, record))
    home = House(hass, room, runtime_of(entry), records)
    await enroll_joe(home)
    return home


async def enroll_joe(house: House) -> None:
    """``voicestack.enroll_voice`` on the satellite: joe reads the phrase when asked."""
    loop = asyncio.get_running_loop()
    asked = loop.time()
    enrolling = asyncio.create_task(
        house.hass.services.async_call(
            DOMAIN,
            "enroll_voice",
            {"entity_id": SATELLITE, "person": JOE, "phrases": [ENROLL_PHRASE]},
            blocking=True,
            return_response=True,
        )
    )
    await house.room.quiet(asked, quiet_s=0.8)  # the prompt was said
    await house.room.say(speech.speak(ENROLL_PHRASE))
    response = await asyncio.wait_for(enrolling, 30)
    # The simple room: no noise, joe's one phrase well clear of the cohort.
    assert response == {
        "person": JOE,
        "phrases": 1,
        "seconds": [pytest.approx(2.5, abs=1.5)],
        "quality": {
            "margin": pytest.approx(19, abs=9),
            "rating": "good",
            "warnings": {},
        },
    }


async def ask_for_the_house(house: House) -> Playback:
    """Ask with the wake word for the house report; its playback once it plays.

    As a user does: "Hey Jarvis", the chime (the mic is muted while it plays),
    the question.
    """
    speaker = house.runtime.hub.speaker
    before = speaker.last
    await house.room.say(speech.pad(speech.speak("Hey Jarvis."), 0.0, 0.7))
    await house.room.say(speech.speak("Tell me about the house."))
    await wait_for(
        lambda: (
            speaker.last is not before
            and speaker.last is not None
            and speaker.last.interruptible
            and speaker.last.first_audio_at is not None
            and bool(speaker.last.sentences)
        ),
        30,
        "the answer",
    )
    assert speaker.last is not None
    first = speaker.last.sentences[0].text
    assert first.startswith("Here is the news"), f"not the house report: {first!r}"
    return speaker.last


def words(text: str) -> list[str]:
    return re.findall(r"[a-z]+", text.lower())


async def test_another_voice_pauses_the_answer_and_it_resumes_at_the_sentence(
    house: House,
) -> None:
    loop = asyncio.get_running_loop()
    playback = await ask_for_the_house(house)
    await asyncio.sleep(5.0)  # well into the second sentence
    intruder = await house.room.say(speech.espeak(INTRUDER))
    await wait_for(lambda: "resume" in house.kinds(), 10, "the resume")
    await house.room.quiet(loop.time(), quiet_s=1.0)
    resumed_at = house.room.resume_after(intruder.at)
    assert resumed_at is not None

    pause, resume = house.records[:2]
    assert resume.data["reason"] == "other_speaker"
    assert resume.data["person"] is None
    sentence = playback.sentences[resume.data["sentence"]]
    assert resume.data["resume_from"] == sentence.start_sample
    assert pause.data["offset"] > sentence.start_sample
    # What the speaker played from the resume on begins with that sentence.
    heard = words(speech.transcribe(house.room.played(since=resumed_at)))
    assert heard[:3] == words(sentence.text)[:3]
    assert house.kinds() == ["pause", "resume"]


async def test_the_enrolled_voice_stops_the_answer_and_the_fan_turns_on(
    house: House,
) -> None:
    loop = asyncio.get_running_loop()
    await ask_for_the_house(house)
    await asyncio.sleep(4.0)
    request = await house.room.say(speech.speak("Turn on the fan."))
    said = loop.time()
    await wait_for(lambda: house.hass.states.get(FAN).state == STATE_ON, 30, "the fan")
    turned_on = loop.time()  # the reply is said after the action
    # And the user hears the reply: it was silent, the player still paused on
    # the answer it had dropped (issue 26). What the speaker played after the
    # request was said is the reply, whole, and nothing of the answer. Waited
    # for once the fan is on: a blip played between the request and the reply
    # (seen once in six runs) is not the reply, and the quiet after it is not
    # its end.
    await wait_for(
        lambda: house.room.playing_after(turned_on) is not None, 15, "a reply"
    )
    replied_at = house.room.playing_after(turned_on)
    assert replied_at is not None
    await house.room.quiet(replied_at, quiet_s=1.0)
    reply = words(speech.transcribe(house.room.played(since=said)))
    assert reply[:2] == ["turned", "on"], reply
    assert "news" not in reply, reply
    assert "kitchen" not in reply, reply
    assert request.at < replied_at

    pause, stop = house.records[:2]
    assert pause.data["kind"] == "pause"
    assert stop.data["kind"] == "stop"
    assert stop.data["reason"] == "enrolled"
    assert stop.data["person"] == JOE
    assert stop.data["request"] is True


async def test_four_intruders_resume_three_times_then_silence(house: House) -> None:
    loop = asyncio.get_running_loop()
    await ask_for_the_house(house)
    for count in range(1, 5):
        await asyncio.sleep(2.5)  # past the 2 s between resumes
        await house.room.say(speech.espeak(INTRUDER, voice="en-gb"))
        await wait_for(lambda n=count: len(house.records) == 2 * n, 10, "a verdict")
    silenced_at = loop.time()
    await asyncio.sleep(2.0)

    assert house.kinds() == ["pause", "resume"] * 3 + ["pause", "silence"]
    assert house.records[-1].data["reason"] == "max_resumes"
    # Silence means silence: nothing more came out of the speaker.
    assert house.room.played(since=silenced_at + 0.3) == b""
    counters = house.runtime.barge_in.counters
    assert (counters["pauses"], counters["resumes"], counters["silences"]) == (4, 3, 1)


async def test_the_answers_own_echo_interrupts_nothing(house: House) -> None:
    loop = asyncio.get_running_loop()
    asked = loop.time()
    playback = await ask_for_the_house(house)
    # Under load a sentence's synthesis can leave the room quiet for longer
    # than a pause between sentences: wait for the answer's end, then its tail.
    await wait_for(
        lambda: playback.outcome is not PlaybackOutcome.PENDING, 40, "the answer's end"
    )
    await house.room.quiet(asked + 1.0, quiet_s=1.0, timeout_s=10)

    assert house.records == []
    assert playback.outcome is PlaybackOutcome.PLAYED
    played = house.room.played(since=asked)
    assert speech.seconds(played) >= playback.seconds  # the answer, whole
    assert words(speech.transcribe(played))[-3:] == ["quiet", "and", "calm"]
