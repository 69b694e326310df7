"""The two protocol modules agree: Home Assistant's and the satellite's.

``custom_components/voicestack/core/protocol.py`` and
``voicestack_satellite/protocol.py`` each define the extension events once for
their side. This pins them together: every name both define has the same value,
and what one side builds the other parses back to what was meant.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

import pytest
from wyoming.audio import AudioStart
from wyoming.event import Event
from wyoming.snd import Played

from custom_components.voicestack.core import protocol as ha
from custom_components.voicestack.core.announce import Priority
from voicestack_satellite import protocol as sat

SHARED = (
    "PROTOCOL_VERSION",
    "INFO_KEY",
    "PREROLL",
    "PROGRESS",
    "NO_SPEECH",
    "ANNOUNCE",
    "HELLO",
    "PAUSE",
    "RESUME",
    "FLUSH",
    "LISTEN",
    "SATELLITE_EVENTS",
    "PEER_EVENTS",
    "STREAM",
    "STATE",
    "PLAYING",
    "PLAYED",
    "FLUSHED",
    "ANNOUNCE_OPTIONAL",
    "ANNOUNCE_PRIORITIES",
    "BARGE_IN",
    "VOICE",
    "VOICEPRINT",
    "BARGE_IN_CONFIG",
    "BARGE_IN_REQUEST",
    "ENROLL",
    "BARGE_IN_FIELD",
    "MIN_SPEECH_S",
    "EMBEDDING_SIZE",
    "MAX_VOICEPRINTS",
    "ENROLL_MAX_S",
    "VOICEPRINT_ERRORS",
    "MAX_STREAM_ID",
)


def constants(module: ModuleType) -> dict[str, object]:
    """The module's public upper-case names (its protocol constants)."""
    return {
        name: value
        for name, value in vars(module).items()
        if name.isupper() and not name.startswith("_")
    }


def test_the_agreed_names_have_the_same_values() -> None:
    assert {name: getattr(ha, name) for name in SHARED} == {
        name: getattr(sat, name) for name in SHARED
    }


def test_every_name_both_sides_define_has_the_same_value() -> None:
    ours, theirs = constants(ha), constants(sat)
    both = ours.keys() & theirs.keys()
    assert set(SHARED) <= both
    assert {name: ours[name] for name in both} == {name: theirs[name] for name in both}


@pytest.mark.parametrize("side", [ha, sat], ids=["ha", "satellite"])
def test_every_event_name_is_listed_once(side: ModuleType) -> None:
    events = side.SATELLITE_EVENTS + side.PEER_EVENTS
    named = {v for v in constants(side).values() if str(v).startswith("voicestack-")}
    assert len(set(events)) == len(events)
    assert named == set(events)


# -- Home Assistant builds, the satellite parses --------------------------------


@pytest.mark.parametrize("silence", [None, 0.7])
def test_hello(silence: float | None) -> None:
    hello = sat.parse_hello(ha.hello_event(end_of_speech_s=silence))
    assert hello == sat.Hello(
        protocol=ha.PROTOCOL_VERSION,
        end_of_speech_s=silence,
        accepts=(sat.ANNOUNCE,),
    )


def test_what_home_assistant_asks_for_the_satellite_sends() -> None:
    assert set(ha.ASKED_FOR) <= set(sat.SATELLITE_EVENTS)


def test_the_priorities_are_the_announcers() -> None:
    assert tuple(Priority) == ha.ANNOUNCE_PRIORITIES


@pytest.mark.parametrize("offset", [None, 0, 16_000])
def test_resume(offset: int | None) -> None:
    assert sat.parse_resume(ha.resume_event(offset)) == sat.Resume(offset=offset)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"timeout": 8}, sat.Listen(timeout=8.0, continuous=None)),
        ({"timeout": 0}, sat.Listen(timeout=0.0, continuous=None)),
        ({"continuous": True}, sat.Listen(timeout=None, continuous=True)),
        ({"continuous": False}, sat.Listen(timeout=None, continuous=False)),
    ],
)
def test_listen(kwargs: dict[str, float | bool], expected: sat.Listen) -> None:
    assert sat.parse_listen(ha.listen_event(**kwargs)) == expected


def test_audio_start_carries_the_stream_id() -> None:
    event = ha.audio_start_event(22_050, 2, 1, "a1b2c3d4-7")
    assert sat.parse_stream_id(event) == "a1b2c3d4-7"
    assert AudioStart.from_event(event).rate == 22_050


@pytest.mark.parametrize("build", [ha.pause_event, ha.flush_event])
def test_events_without_data(build: Callable[[], Event]) -> None:
    event = build()
    assert event.type in sat.PEER_EVENTS
    assert not event.data


# -- the satellite builds, Home Assistant parses --------------------------------


def test_info_block() -> None:
    block = ha.parse_info({sat.INFO_KEY: sat.info_block("b827eb12ab34-10700")})
    assert block == ha.InfoBlock(
        id="b827eb12ab34-10700",
        protocol=sat.PROTOCOL_VERSION,
        sends=sat.SATELLITE_EVENTS,
        accepts=sat.PEER_EVENTS,
    )


def test_preroll() -> None:
    preroll = ha.parse_preroll(sat.preroll_event(16_000, 16_000, 480_000))
    assert preroll == ha.Preroll(samples=16_000, rate=16_000, cut=480_000)


@pytest.mark.parametrize("state", [sat.PLAYING, sat.PLAYED, sat.FLUSHED])
@pytest.mark.parametrize("total", [None, 44_100])
def test_progress(state: str, total: int | None) -> None:
    progress = ha.parse_progress(sat.progress_event("s-1", 4_410, total, state))
    assert progress == ha.Progress(stream="s-1", played=4_410, total=total, state=state)


def test_no_speech() -> None:
    assert ha.parse_no_speech(sat.no_speech_event()) == ha.NoSpeech()


@pytest.mark.parametrize("state", [sat.PLAYED, sat.FLUSHED])
def test_played(state: str) -> None:
    event = sat.played_event("s-1", state)
    assert Played.is_type(event.type)
    assert ha.parse_played(event) == ha.PlayedReport(stream="s-1", state=state)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {
            "priority": "high",
            "category": "warning",
            "source": "doorbell",
            "dedup_key": "door",
            "ttl": 30,
        },
        {"ttl": 2.5},
    ],
    ids=["message only", "every field", "fractional ttl"],
)
def test_announce(fields: dict[str, object]) -> None:
    event = sat.announce_event("a1b2c3-1", {"message": "Hi.", **fields})
    assert event.type in ha.SATELLITE_EVENTS
    assert ha.parse_announce(event) == ha.Announce(
        id="a1b2c3-1", message="Hi.", **fields
    )
    assert set(event.data) == {"id", "message", *fields}  # None is not sent
