"""The satellite's side of the protocol: what it builds, what it parses and refuses."""

from __future__ import annotations

import pytest
from wyoming.audio import AudioStart
from wyoming.event import Event

import voicestack_protocol as protocol


def test_good_extension_events_parse() -> None:
    hello = protocol.parse_hello(Event(protocol.HELLO, {"protocol": 1}))
    assert hello == protocol.Hello(protocol=1, end_of_speech_s=None)
    hello = protocol.parse_hello(
        Event(protocol.HELLO, {"protocol": 1, "end_of_speech_s": 0.7})
    )
    assert hello.end_of_speech_s == 0.7
    assert hello.accepts == ()
    hello = protocol.parse_hello(
        Event(protocol.HELLO, {"protocol": 1, "accepts": [protocol.ANNOUNCE]})
    )
    assert hello.accepts == (protocol.ANNOUNCE,)
    assert protocol.parse_resume(Event(protocol.RESUME, {})).offset is None
    assert (
        protocol.parse_resume(Event(protocol.RESUME, {"offset": 8000})).offset == 8000
    )
    assert protocol.parse_listen(Event(protocol.LISTEN, {})).timeout == 5.0
    assert protocol.parse_listen(Event(protocol.LISTEN, {"timeout": 0})).timeout == 0
    listen = protocol.parse_listen(Event(protocol.LISTEN, {"continuous": True}))
    assert listen == protocol.Listen(timeout=None, continuous=True)
    start = AudioStart(rate=22050, width=2, channels=1).event()
    assert protocol.parse_stream_id(start) is None
    start.data[protocol.STREAM] = "ha-1"
    assert protocol.parse_stream_id(start) == "ha-1"


@pytest.mark.parametrize(
    ("event", "message"),
    [
        (Event(protocol.HELLO, {"protocol": "1"}), "protocol '1' is not a version"),
        (
            Event(protocol.HELLO, {"protocol": 1, "end_of_speech_s": 5}),
            "end_of_speech_s 5 is not 0.1 to 3 s",
        ),
        (
            Event(protocol.HELLO, {"protocol": 1, "end_of_speech_s": True}),
            "end_of_speech_s True",
        ),
        (
            Event(protocol.HELLO, {"protocol": 1, "accepts": "voicestack-announce"}),
            "accepts 'voicestack-announce' is not a list of names",
        ),
        (
            Event(protocol.HELLO, {"protocol": 1, "accepts": [1]}),
            r"accepts \[1\] is not a list of names",
        ),
        (Event(protocol.RESUME, {"offset": -1}), "offset -1 is not a sample offset"),
        (Event(protocol.RESUME, {"offset": 1.5}), "offset 1.5 is not a sample"),
        (Event(protocol.LISTEN, {"timeout": 61}), "timeout 61 is not 0 to 60 s"),
        (Event(protocol.LISTEN, {"timeout": True}), "timeout True is not 0 to 60 s"),
        (Event(protocol.LISTEN, {"continuous": "yes"}), "'yes' is not a boolean"),
        (Event(protocol.PAUSE, {}), "expected voicestack-listen"),
    ],
)
def test_bad_data_is_refused_with_a_clear_message(event: Event, message: str) -> None:
    parse = {
        protocol.HELLO: protocol.parse_hello,
        protocol.RESUME: protocol.parse_resume,
    }.get(event.type, protocol.parse_listen)
    with pytest.raises(ValueError, match=message):
        parse(event)


@pytest.mark.parametrize("stream", ["x" * 65, "", "a\nb", 5])
def test_a_bad_stream_id_is_refused(stream: object) -> None:
    start = AudioStart(rate=22050, width=2, channels=1).event()
    start.data[protocol.STREAM] = stream
    with pytest.raises(ValueError, match="not a printable string of 1 to 64"):
        protocol.parse_stream_id(start)


def test_what_the_satellite_sends_carries_the_shared_keys() -> None:
    played = protocol.played_event("ha-1", protocol.FLUSHED)
    assert played.type == "played"
    assert played.data == {"stream": "ha-1", "state": "flushed"}
    progress = protocol.progress_event("ha-1", 800, None, protocol.PLAYING)
    assert progress.data == {
        "stream": "ha-1",
        "played": 800,
        "total": None,
        "state": "playing",
    }
    assert protocol.preroll_event(4800, 16000, 123).data == {
        "samples": 4800,
        "rate": 16000,
        "cut": 123,
    }
    assert protocol.no_speech_event().type == protocol.NO_SPEECH
    fields = {"message": "Hi.", "priority": "high", "category": None, "ttl": 5}
    assert protocol.announce_event("a-1", fields).data == {
        "id": "a-1",
        "message": "Hi.",
        "priority": "high",
        "ttl": 5,
    }
    block = protocol.info_block("abc")
    assert block["sends"] == list(protocol.SATELLITE_EVENTS)
    assert block["accepts"] == list(protocol.PEER_EVENTS)
