"""Barge-in in a real Home Assistant, against a peer that reports on cue.

Real Home Assistant, real Piper: a three-sentence voice response is said to a
peer at the satellite's address that claims VoiceStack's extensions and says
whatever the test wants (``devstack.fake_satellite``): a pause at a given
offset, a verdict, a malformed report, a pause of a stream that is not the
answer's. What Home Assistant sends back is what is asserted: a resume at the
interrupted sentence's first sample, the request for the user's speech, a
flush; and each pause, resume and stop is a ``voicestack_barge_in`` event and a
counter. (With a real satellite, a real room and whisper on what was played:
test_barge_in.py.)
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
import time

from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.core import Event, HomeAssistant, callback
import pytest
from pytest_homeassistant_custom_component.common import (
    async_fire_time_changed_exact,
)
from wyoming.event import Event as WyomingEvent

from custom_components.voicestack.const import EVENT_BARGE_IN
from custom_components.voicestack.core.speaker import Playback, PlaybackOutcome
from custom_components.voicestack.core.wav import Pcm
from custom_components.voicestack.runtime import SatelliteRuntime
from custom_components.voicestack.voiceprints.library import voiceprint_library
from devstack.fake_satellite import FakeSatellite
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack
import voicestack_protocol as protocol

ANSWER = "The first sentence is here. Then a second one follows. And that is all."
ALICE = "person.alice"
EXTENSIONS = tuple(protocol.PEER_EVENTS)
RESUMES = "sensor.fake_barge_in_resumes"  # disabled by default: enabled here


@dataclass
class Home:
    """VoiceStack on the scripted peer, and what it fired."""

    peer: FakeSatellite
    runtime: SatelliteRuntime
    records: list[Event]


@pytest.fixture
async def home(hass: HomeAssistant, pipeline: Pipeline, stack: AsyncExitStack) -> Home:
    """A scripted peer with a voice gate, and VoiceStack connected to it."""
    peer = await stack.enter_async_context(
        FakeSatellite(extensions=EXTENSIONS, voiceprint=True, auto_played=False)
    )
    entry = await add_voicestack(
        hass,
        stack,
        peer,  # type: ignore[arg-type]
        enable={RESUMES: "barge_in_resumes"},
    )
    await wait_for(lambda: peer.running, 10, "run-satellite")
    records: list[Event] = []

    @callback
    def record(event: Event) -> None:
        records.append(event)

    stack.callback(hass.bus.async_listen(EVENT_BARGE_IN, record))
    return Home(peer, runtime_of(entry), records)


async def enroll_alice(hass: HomeAssistant) -> None:
    hass.states.async_set(ALICE, "home")
    await voiceprint_library(hass).async_enroll(ALICE, [[1.0] + [0.0] * 255], "K")


async def answer_sent(home: Home) -> tuple[asyncio.Task[Playback], str]:
    """Start saying ``ANSWER`` as a voice response; its stream id once all is sent."""
    task = asyncio.create_task(home.runtime.speech.say(ANSWER, response=True))
    await wait_for(lambda: home.peer.sent("audio-stop"), 30, "the answer sent")
    (start,) = home.peer.sent("audio-start")
    return task, start.data["stream"]


async def report(home: Home, kind: str, **data: object) -> None:
    await home.peer.send(WyomingEvent(kind, data))


def in_seconds(seconds: float) -> datetime:
    """Wall-clock time ``seconds`` from now (what the test plugin's clock compares)."""
    return datetime.fromtimestamp(time.time() + seconds, UTC)


def kinds(home: Home) -> list[str]:
    return [record.data["kind"] for record in home.records]


async def test_another_voice_resumes_the_answer_at_the_interrupted_sentence(
    hass: HomeAssistant, home: Home
) -> None:
    await enroll_alice(hass)
    task, stream = await answer_sent(home)
    (start,) = home.peer.sent("audio-start")
    assert start.data[protocol.BARGE_IN_FIELD] is True
    second = home.runtime.hub.speaker.last.sentences[1]

    await report(
        home,
        protocol.BARGE_IN,
        stream=stream,
        played=second.start_sample + 5000,
        onset=1,
    )
    await wait_for(lambda: kinds(home) == ["pause"], 5, "the pause")
    await report(
        home,
        protocol.VOICE,
        stream=stream,
        person=None,
        score=0.41,
        seconds=1.3,
        verdict="unsure",
        normalized=2.9,
        closest="person.alice",
        cohort={"enrolled_mean": 0.6, "enrolled_std": 0.05, "test_mean": 0.5},
    )
    await wait_for(lambda: home.peer.sent(protocol.RESUME), 5, "the resume")
    (resume,) = home.peer.sent(protocol.RESUME)
    await report(home, "played", stream=stream, state="played")
    playback = await task

    assert resume.data == {"offset": second.start_sample}
    assert playback.outcome is PlaybackOutcome.PLAYED
    assert kinds(home) == ["pause", "resume"]
    assert home.records[1].data["reason"] == "other_speaker"
    assert home.records[1].data["resume_from"] == second.start_sample
    assert home.records[1].data["score"] == 0.41
    assert home.records[1].data["verdict"] == "unsure"
    assert home.records[1].data["normalized"] == 2.9
    assert home.records[1].data["closest"] == "person.alice"
    assert home.records[1].data["cohort"] == {
        "enrolled_mean": 0.6,
        "enrolled_std": 0.05,
        "test_mean": 0.5,
    }
    assert home.records[1].data["entity_id"] == "assist_satellite.fake"
    assert home.runtime.barge_in.counters["resumes"] == 1
    assert hass.states.get(RESUMES).state == "1"


async def test_the_enrolled_voice_stops_the_answer_and_is_asked_for(
    hass: HomeAssistant, home: Home
) -> None:
    await enroll_alice(hass)
    task, stream = await answer_sent(home)

    await report(home, protocol.BARGE_IN, stream=stream, played=100, onset=1)
    await report(
        home, protocol.VOICE, stream=stream, person=ALICE, score=0.9, seconds=1
    )
    await wait_for(lambda: home.peer.sent(protocol.BARGE_IN_REQUEST), 5, "request")
    await report(home, "played", stream=stream, state="flushed")
    playback = await task

    assert home.peer.sent(protocol.BARGE_IN_REQUEST)[0].data == {"stream": stream}
    assert playback.outcome is PlaybackOutcome.FLUSHED
    assert kinds(home) == ["pause", "stop"]
    assert home.records[1].data["request"] is True
    assert home.records[1].data["person"] == ALICE


async def test_with_nobody_enrolled_every_barge_in_is_the_user(
    hass: HomeAssistant, home: Home
) -> None:
    task, stream = await answer_sent(home)

    await report(home, protocol.BARGE_IN, stream=stream, played=100, onset=1)
    await wait_for(lambda: home.peer.sent(protocol.BARGE_IN_REQUEST), 5, "request")
    await report(home, "played", stream=stream, state="flushed")
    await task

    assert kinds(home) == ["pause", "stop"]
    assert home.records[1].data["reason"] == "gate_off"


async def test_no_verdict_in_10_s_flushes_the_answer(
    hass: HomeAssistant, home: Home
) -> None:
    await enroll_alice(hass)
    task, stream = await answer_sent(home)
    await report(home, protocol.BARGE_IN, stream=stream, played=100, onset=1)
    await wait_for(lambda: kinds(home) == ["pause"], 5, "the pause")

    async_fire_time_changed_exact(hass, in_seconds(9.5))
    await asyncio.sleep(0.1)
    assert kinds(home) == ["pause"]
    async_fire_time_changed_exact(hass, in_seconds(10.5))
    await wait_for(lambda: home.peer.sent(protocol.FLUSH), 5, "the flush")
    await report(home, "played", stream=stream, state="flushed")
    await task
    # A verdict after the timeout changes nothing.
    await report(
        home, protocol.VOICE, stream=stream, person=ALICE, score=0.9, seconds=1
    )
    await asyncio.sleep(0.2)

    assert kinds(home) == ["pause", "timeout"]
    assert not home.peer.sent(protocol.BARGE_IN_REQUEST)
    assert home.runtime.barge_in.counters["stale_verdicts"] == 1


async def test_reports_that_fit_no_answer_are_flushed_or_ignored(
    hass: HomeAssistant, home: Home, caplog: pytest.LogCaptureFixture
) -> None:
    await enroll_alice(hass)
    # Nothing is being said: a pause is flushed (or the satellite stays paused).
    await report(home, protocol.BARGE_IN, stream="nope", played=1, onset=1)
    await wait_for(lambda: home.peer.sent(protocol.FLUSH), 5, "the flush")
    # Malformed: logged, nothing sent.
    await report(home, protocol.BARGE_IN, stream="nope", played="x", onset=1)
    await report(home, protocol.VOICE, stream="nope", person=5, seconds=1)
    # A verdict with no pause: stale.
    await report(home, protocol.VOICE, stream="nope", person=None, seconds=1)
    await wait_for(
        lambda: home.runtime.barge_in.counters["stale_verdicts"] == 1, 5, "stale"
    )

    assert len(home.peer.sent(protocol.FLUSH)) == 1
    assert home.runtime.barge_in.counters["unplaceable"] == 1
    assert "ignoring voicestack-barge-in: played 'x'" in caplog.text
    assert "ignoring voicestack-voice: person 5" in caplog.text
    assert home.records == []


async def test_an_announcement_is_not_interruptible(
    hass: HomeAssistant, home: Home
) -> None:
    task = asyncio.create_task(home.runtime.speech.say(ANSWER))
    await wait_for(lambda: home.peer.sent("audio-stop"), 30, "the announcement sent")
    (start,) = home.peer.sent("audio-start")
    stream = start.data["stream"]
    assert protocol.BARGE_IN_FIELD not in start.data

    await report(home, protocol.BARGE_IN, stream=stream, played=100, onset=1)
    await wait_for(lambda: home.peer.sent(protocol.FLUSH), 5, "the flush")
    await report(home, "played", stream=stream, state="flushed")
    await task
    assert home.records == []


async def test_settings_and_voices_reach_the_satellite(
    hass: HomeAssistant, home: Home
) -> None:
    def configs() -> list[dict[str, object]]:
        return [e.data for e in home.peer.sent(protocol.BARGE_IN_CONFIG)]

    await wait_for(configs, 5, "the config on connect")
    assert configs()[0] == {
        "enabled": True,
        "min_speech_s": 0.3,
        "echo_cancel": True,
        "threshold": 0.70,
        "voiceprints": [],
    }
    await hass.services.async_call(
        "number",
        "set_value",
        {"entity_id": "number.fake_barge_in_minimum_speech", "value": 0.5},
        blocking=True,
    )
    await hass.services.async_call(
        "switch",
        "turn_off",
        {"entity_id": "switch.fake_echo_cancellation"},
        blocking=True,
    )
    await enroll_alice(hass)
    await wait_for(lambda: configs()[-1]["voiceprints"], 5, "the voiceprint")
    assert configs()[-1]["min_speech_s"] == 0.5
    assert configs()[-1]["echo_cancel"] is False
    (voice,) = configs()[-1]["voiceprints"]
    assert voice["person"] == ALICE
    sent = len(configs())

    await hass.services.async_call(
        "switch",
        "turn_off",
        {"entity_id": "switch.fake_voice_gate"},
        blocking=True,
    )
    await wait_for(lambda: len(configs()) == sent + 1, 5, "gate off")
    assert configs()[-1]["voiceprints"] == []

    await hass.services.async_call(
        "switch",
        "turn_off",
        {"entity_id": "switch.fake_barge_in"},
        blocking=True,
    )
    await wait_for(lambda: len(configs()) == sent + 2, 5, "barge-in off")
    assert configs()[-1]["enabled"] is False
    home.peer.auto_played = True
    await home.runtime.speech.say("Just this.", response=True)
    (start,) = home.peer.sent("audio-start")
    assert protocol.BARGE_IN_FIELD not in start.data


async def test_an_answer_missing_a_sentence_is_still_said_to_its_end(
    hass: HomeAssistant, home: Home
) -> None:
    """A sentence the engine could not say: offsets are lost, not the rest."""
    control = home.runtime.barge_in
    pcm = Pcm(audio=bytes(3200), rate=16000, width=2, channels=1)

    async def said_but_the_second() -> AsyncIterator[tuple[str, Pcm]]:
        for sentence in ("One is here.", "Three is here."):
            yield sentence, pcm

    parts = control.respond(
        "One is here. Two is here. Three is here.", said_but_the_second()
    )
    said = [sentence async for sentence, _ in parts]

    assert said == ["One is here.", "Three is here."]
