"""The peer's side of the protocol (Home Assistant's): what it builds, bad data it reads.

Every way a satellite's report can be malformed is refused with a message naming it.
"""

from __future__ import annotations

from typing import Any

import pytest
from wyoming.event import Event
from wyoming.snd import Played

import voicestack_protocol as protocol

GOOD_PREROLL = {"samples": 16_000, "rate": 16_000, "cut": 48_000}
GOOD_PROGRESS = {"stream": "s-1", "played": 0, "total": None, "state": "playing"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"samples": -1}, "samples -1 is not a count"),
        ({"samples": True}, "samples True is not a count"),
        ({"rate": 0}, "rate 0 is not a sample rate"),
        ({"rate": "16000"}, "rate '16000' is not a sample rate"),
        ({"cut": None}, "cut None is not a sample position"),
    ],
)
def test_a_bad_preroll_is_refused(change: dict[str, Any], message: str) -> None:
    event = Event(protocol.PREROLL, {**GOOD_PREROLL, **change})
    with pytest.raises(ValueError, match=f"^voicestack-preroll: {message}$"):
        protocol.parse_preroll(event)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"stream": ""}, "stream '' is not a stream id"),
        ({"stream": 7}, "stream 7 is not a stream id"),
        ({"played": -5}, "played -5 is not a sample count"),
        ({"total": 1.5}, "total 1.5 is not a sample count"),
        ({"state": "done"}, "state 'done' is not one of"),
    ],
)
def test_a_bad_progress_is_refused(change: dict[str, Any], message: str) -> None:
    event = Event(protocol.PROGRESS, {**GOOD_PROGRESS, **change})
    with pytest.raises(ValueError, match=f"^voicestack-progress: {message}"):
        protocol.parse_progress(event)


def test_a_parser_refuses_another_event() -> None:
    with pytest.raises(ValueError, match="expected voicestack-no-speech, got ping"):
        protocol.parse_no_speech(Event("ping"))


def test_played_from_a_stock_satellite_has_no_stream() -> None:
    report = protocol.parse_played(Played().event())
    assert report == protocol.PlayedReport(stream=None, state=None)


def test_played_with_a_state_that_is_no_string_reads_as_none() -> None:
    event = Event("played", {"stream": "s-1", "state": 3})
    assert protocol.parse_played(event) == protocol.PlayedReport("s-1", None)


def test_played_with_a_stream_id_that_is_no_string_is_refused() -> None:
    with pytest.raises(ValueError, match=r"'played' with stream id 5 \(not a string"):
        protocol.parse_played(Event("played", {"stream": 5}))


@pytest.mark.parametrize(
    "data",
    [
        None,
        {},
        {"voicestack": "kitchen"},
        {"voicestack": {"id": "  "}},
        {"voicestack": {"id": 12}},
    ],
)
def test_info_without_a_usable_block_is_a_stock_satellite(
    data: dict[str, Any] | None,
) -> None:
    assert protocol.parse_info(data) is None


def test_an_info_block_with_odd_fields_still_names_the_satellite() -> None:
    block = protocol.parse_info(
        {"voicestack": {"id": " k ", "protocol": "2", "sends": "x", "accepts": [1]}}
    )
    assert block == protocol.InfoBlock(id="k", protocol=0, sends=(), accepts=())


@pytest.mark.parametrize("kwargs", [{}, {"timeout": 5, "continuous": True}])
def test_listen_takes_exactly_one_of_timeout_and_continuous(
    kwargs: dict[str, Any],
) -> None:
    with pytest.raises(ValueError, match="give either timeout or continuous"):
        protocol.listen_event(**kwargs)


@pytest.mark.parametrize("offset", [-1, 2.5])
def test_resume_refuses_an_offset_that_is_no_sample(offset: Any) -> None:
    with pytest.raises(ValueError, match="is not a sample offset"):
        protocol.resume_event(offset)


def test_the_hello_asks_for_announcements() -> None:
    hello = protocol.hello_event(end_of_speech_s=0.7)
    assert hello.data == {
        "protocol": protocol.PROTOCOL_VERSION,
        "accepts": [protocol.ANNOUNCE],
        "end_of_speech_s": 0.7,
    }


GOOD_ANNOUNCE = {"id": "a1b2c3-1", "message": "Someone is at the door."}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"id": None}, "id None is not a request id"),
        ({"id": ""}, "id '' is not a request id"),
        ({"id": "x" * 65}, "id 'xxxx"),
        ({"id": "a\nb"}, r"id 'a\\nb' is not a request id"),
        ({"message": None}, "message None is not a text"),
        ({"message": " "}, "message ' ' is not a text"),
        ({"message": ["hi"]}, r"message \['hi'\] is not a text"),
        ({"priority": 1}, "priority 1 is not a string"),
        ({"category": True}, "category True is not a string"),
        ({"source": {}}, "source {} is not a string"),
        ({"dedup_key": 3.5}, "dedup_key 3.5 is not a string"),
        ({"ttl": "10"}, "ttl '10' is not seconds"),
        ({"ttl": True}, "ttl True is not seconds"),
    ],
)
def test_a_bad_announce_is_refused(change: dict[str, Any], message: str) -> None:
    event = Event(protocol.ANNOUNCE, {**GOOD_ANNOUNCE, **change})
    with pytest.raises(ValueError, match=f"^voicestack-announce: {message}"):
        protocol.parse_announce(event)


def test_an_announce_with_fields_it_does_not_know_still_parses() -> None:
    """A newer satellite may send more; what this side knows is kept."""
    event = Event(protocol.ANNOUNCE, {**GOOD_ANNOUNCE, "colour": "red", "ttl": 5})
    assert protocol.parse_announce(event) == protocol.Announce(
        id="a1b2c3-1", message="Someone is at the door.", ttl=5
    )
