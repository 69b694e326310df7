"""Not sure whose voice: the speech decides, in a real Home Assistant (issue 28).

The gate's middle band ("unsure": just under the enrolled voice's threshold)
keeps the answer paused and takes what was said as a request held for a check:
a command for this home is the user's (the answer is flushed, the fan turns
on, the reply is heard), anything else resumes the answer at its sentence and
nothing is said or done; either way the next answer plays. Real Home
Assistant, Piper and whisper; the peer claims a satellite that holds
(``devstack.fake_satellite``), asks for the house report and says the request
over it with Piper. What was heard is what Home Assistant sent the peer to
play, transcribed. (The satellite's side of a held request, by ear in a room:
tests/satellite/test_barge_in_reply.py.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.const import STATE_ON
from homeassistant.core import Event, HomeAssistant, callback
import pytest

from custom_components.voicestack.const import EVENT_BARGE_IN, EVENT_UTTERANCE
from custom_components.voicestack.voiceprints.library import voiceprint_library
from devstack import servers, speech
from devstack.fake_satellite import FakeSatellite
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import FAN, add_voicestack, words
from tests.integration.test_barge_in import ANSWER, set_up_house
from tests.integration.test_barge_in_control import EXTENSIONS, Home, kinds, report
import voicestack_protocol as protocol

CHECKS = "sensor.fake_barge_in_checks"  # disabled by default: enabled here


def collect(events: list[Event]) -> Callable[[Event], None]:
    """A bus listener that keeps each event in ``events``."""

    @callback
    def keep(event: Event) -> None:
        events.append(event)

    return keep


@pytest.fixture
async def home(
    hass: HomeAssistant,
    config_dir: Path,
    stack: AsyncExitStack,
    piper: servers.Server,
    whisper: servers.Server,
) -> Home:
    """The house report and the fan; a peer that holds answers; Alice enrolled."""
    await set_up_house(hass, stack, config_dir, piper, whisper)
    peer = await stack.enter_async_context(
        FakeSatellite(extensions=EXTENSIONS, voiceprint=True, hold=True)
    )
    entry = await add_voicestack(
        hass,
        stack,
        peer,
        enable={CHECKS: "barge_in_checks"},  # type: ignore[arg-type]
    )
    await wait_for(lambda: peer.running, 10, "run-satellite")
    records: list[Event] = []
    stack.callback(hass.bus.async_listen(EVENT_BARGE_IN, collect(records)))
    hass.states.async_set("person.alice", "home")
    library = voiceprint_library(hass)
    await library.async_enroll("person.alice", [[1.0] + [0.0] * 255], "K")
    return Home(peer, runtime_of(entry), records)


def last_stream(home: Home) -> str:
    """The stream id of the last audio Home Assistant sent."""
    return home.peer.sent("audio-start")[-1].data["stream"]


async def unsure_over_the_answer(
    home: Home, normalized: float | None = None
) -> tuple[str, int]:
    """Ask for the house report; pause it in its second sentence; the gate is unsure.

    ``normalized``: the score against the cohort the satellite reports too.
    The answer's stream and its second sentence's first sample.
    """
    await home.peer.say(speech.speak("Tell me about the house."))
    await wait_for(lambda: home.peer.sent("audio-stop"), 60, "the answer")
    stream = last_stream(home)
    answer = home.runtime.hub.speaker.last
    assert answer.sentences[0].text.startswith("Here is the news")
    second = answer.sentences[1].start_sample
    await report(home, protocol.BARGE_IN, stream=stream, played=second + 4000, onset=1)
    await report(
        home,
        protocol.VOICE,
        stream=stream,
        person=None,
        score=0.67,
        seconds=1.3,
        verdict="unsure",
        closest="person.alice",
        **({} if normalized is None else {"normalized": normalized}),
    )
    await wait_for(
        lambda: (
            home.peer.sent(protocol.BARGE_IN_REQUEST) or home.peer.sent(protocol.RESUME)
        ),
        5,
        "a held request or a resume",
    )
    return stream, second


def sent_after_start(home: Home, count: int) -> bool:
    """Whether audio stream number ``count`` + 1 was sent whole (its audio-stop)."""
    kinds = [
        e.type for e in home.peer.events if e.type in ("audio-start", "audio-stop")
    ]
    starts = [i for i, kind in enumerate(kinds) if kind == "audio-start"]
    return len(starts) > count and "audio-stop" in kinds[starts[count] :]


async def heard_next(home: Home, before: int) -> str:
    """The answer after the first ``before`` audio streams, played; what it said."""
    await wait_for(lambda: sent_after_start(home, before), 60, "the next answer")
    stream = home.peer.sent("audio-start")[before].data["stream"]
    await report(home, "played", stream=stream, state="played")
    await wait_for(lambda: not home.runtime.hub.speaker.busy, 10, "speaker free")
    return speech.transcribe(home.peer.played(stream))


async def test_unsure_and_a_command_stops_the_answer_and_the_reply_is_heard(
    hass: HomeAssistant, home: Home
) -> None:
    stream, _ = await unsure_over_the_answer(home)
    (request,) = home.peer.sent(protocol.BARGE_IN_REQUEST)
    assert request.data == {"stream": stream, "hold": True}
    assert kinds(home) == ["pause", "check"]

    await home.peer.say(speech.speak("Turn on the fan."))
    await wait_for(lambda: home.peer.sent(protocol.FLUSH), 60, "the answer flushed")
    await report(home, "played", stream=stream, state="flushed")
    heard = await heard_next(home, 1)

    assert words(heard) == words("Turned on the switch."), heard
    assert hass.states.get(FAN).state == STATE_ON
    assert kinds(home) == ["pause", "check", "stop"]
    stop = home.records[-1].data
    assert (stop["reason"], stop["request"], stop["verdict"]) == (
        "unsure_command",
        True,
        "unsure",
    )
    assert not home.peer.sent(protocol.RESUME)
    assert hass.states.get(CHECKS).state == "1"


async def test_unsure_and_no_command_resumes_the_answer_and_nothing_is_said(
    hass: HomeAssistant, home: Home
) -> None:
    utterances: list[Event] = []
    hass.bus.async_listen(EVENT_UTTERANCE, collect(utterances))
    stream, second = await unsure_over_the_answer(home)

    await home.peer.say(speech.speak("I wonder what is on television tonight."))
    await wait_for(lambda: home.peer.sent(protocol.RESUME), 60, "the resume")
    await asyncio.sleep(0.5)  # wall clock: nothing else may be sent meanwhile
    streams = len(home.peer.sent("audio-start"))
    await report(home, "played", stream=stream, state="played")
    await wait_for(lambda: not home.runtime.hub.speaker.busy, 10, "answer over")
    # The next request is answered and heard: the resumed answer left all as was.
    await home.peer.say(speech.speak("Turn on the fan."))
    heard = await heard_next(home, streams)

    assert home.peer.sent(protocol.RESUME)[0].data == {"offset": second}
    assert not home.peer.sent(protocol.FLUSH)
    assert streams == 1  # nothing was said between the pause and the resume
    assert words(heard) == words("Turned on the switch."), heard
    assert hass.states.get(FAN).state == STATE_ON
    assert kinds(home)[:3] == ["pause", "check", "resume"]
    assert home.records[2].data["reason"] == "not_a_command"
    outcomes = [e.data["outcome"] for e in utterances]
    assert outcomes[:2] == ["routed", "resumed"], outcomes
    assert ANSWER.startswith("Here is the news")


async def test_unsure_but_unlike_the_user_against_the_cohort_resumes_at_once(
    hass: HomeAssistant, home: Home
) -> None:
    """A raw score in the band, but closer to the cohort's voices than the user's."""
    stream, second = await unsure_over_the_answer(home, normalized=-6.1)
    await report(home, "played", stream=stream, state="played")
    await wait_for(lambda: not home.runtime.hub.speaker.busy, 10, "answer over")

    assert not home.peer.sent(protocol.BARGE_IN_REQUEST)
    assert home.peer.sent(protocol.RESUME)[0].data == {"offset": second}
    assert kinds(home) == ["pause", "resume"]
    assert home.records[-1].data["reason"] == "other_speaker"
    assert home.records[-1].data["normalized"] == -6.1
