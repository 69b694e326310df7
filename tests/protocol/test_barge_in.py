"""Barge-in's events as Home Assistant uses them: what it sends, what it refuses.

Every report a satellite (or anything at its address) sends is checked before
it can pause, resume or stop an answer: a bad one is a ``ValueError`` saying
what is wrong, which the glue logs and ignores.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from wyoming.event import Event

import voicestack_protocol as protocol

UNIT = [1.0] + [0.0] * 255


def test_the_config_carries_settings_and_voiceprints() -> None:
    event = protocol.barge_in_config_event(
        enabled=True,
        min_speech_s=0.3,
        echo_cancel=False,
        threshold=0.75,
        voiceprints=[protocol.Voiceprint("person.alice", tuple(UNIT))],
    )
    assert event.type == protocol.BARGE_IN_CONFIG
    assert event.data == {
        "enabled": True,
        "min_speech_s": 0.3,
        "echo_cancel": False,
        "threshold": 0.75,
        "voiceprints": [{"person": "person.alice", "embedding": UNIT}],
    }


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"min_speech_s": 0.05}, "min_speech_s 0.05 is not 0.1 to 2 s"),
        ({"threshold": 1.5}, "threshold 1.5 is not 0 to 1"),
        (
            {"voiceprints": [protocol.Voiceprint("p", tuple(UNIT))] * 51},
            "more than 50 voiceprints",
        ),
    ],
)
def test_a_config_the_satellite_would_refuse_is_not_built(
    change: dict[str, Any], message: str
) -> None:
    settings: dict[str, Any] = {
        "enabled": True,
        "min_speech_s": 0.3,
        "echo_cancel": True,
        "threshold": 0.7,
        "voiceprints": [],
        **change,
    }
    with pytest.raises(ValueError, match=message):
        protocol.barge_in_config_event(**settings)


def test_requests_and_enrollment() -> None:
    assert protocol.barge_in_request_event("ab-1").data == {"stream": "ab-1"}
    held = protocol.barge_in_request_event("ab-1", hold=True)
    assert held.data == {"stream": "ab-1", "hold": True}
    assert protocol.parse_barge_in_request(held) == protocol.BargeInRequest(
        "ab-1", hold=True
    )
    plain = protocol.parse_barge_in_request(protocol.barge_in_request_event("ab-1"))
    assert plain.hold is False
    for bad, message in (
        ({"stream": "ab-1", "hold": "yes"}, "hold 'yes' is not true or false"),
        ({"stream": ""}, "is not a stream id"),
    ):
        with pytest.raises(ValueError, match=message):
            protocol.parse_barge_in_request(Event(protocol.BARGE_IN_REQUEST, bad))
    assert protocol.enroll_event("e1", 8.0).data == {"id": "e1", "max_s": 8.0}
    with pytest.raises(ValueError, match=r"max_s 0\.5 is not 1 to 30 s"):
        protocol.enroll_event("e1", 0.5)
    marked = protocol.audio_start_event(22050, 2, 1, "s", barge_in=True)
    assert marked.data["barge_in"] is True
    assert "barge_in" not in protocol.audio_start_event(22050, 2, 1, "s").data


def test_reports_parse() -> None:
    assert protocol.parse_barge_in(
        Event(protocol.BARGE_IN, {"stream": "s1", "played": 100, "onset": 9})
    ) == protocol.BargeInReport("s1", 100, 9)
    assert protocol.parse_voice(
        Event(
            protocol.VOICE,
            {"stream": "s1", "person": "person.alice", "score": 0.9, "seconds": 1},
        )
    ) == protocol.VoiceReport("s1", "person.alice", 0.9, 1.0)
    assert protocol.parse_voice(
        Event(
            protocol.VOICE,
            {"stream": "s1", "person": None, "score": None, "seconds": 0},
        )
    ) == protocol.VoiceReport("s1", None, None, 0.0)
    explained = protocol.parse_voice(
        Event(
            protocol.VOICE,
            {
                "stream": "s1",
                "person": None,
                "score": 0.7,
                "seconds": 1.3,
                "verdict": "unsure",
                "normalized": 3.0,
                "closest": "person.alice",
                "cohort": {"test_mean": 0.5, "enrolled_mean": 0.6},
            },
        )
    )
    assert (explained.verdict, explained.normalized, explained.closest) == (
        "unsure",
        3.0,
        "person.alice",
    )
    assert explained.cohort == (("enrolled_mean", 0.6), ("test_mean", 0.5))
    for bad, message in (
        ({"verdict": "maybe"}, "verdict 'maybe' is not one we know"),
        ({"verdict": "enrolled"}, "verdict enrolled names nobody"),
        ({"normalized": 1e9}, "is not a score"),
        ({"cohort": {"mean": 0.5}}, "is not its statistics"),
        ({"closest": ""}, "is not a name"),
    ):
        data = {"stream": "s1", "person": None, "score": 0.7, "seconds": 1} | bad
        with pytest.raises(ValueError, match=message):
            protocol.parse_voice(Event(protocol.VOICE, data))
    good = protocol.parse_voiceprint(
        Event(protocol.VOICEPRINT, {"id": "e1", "embedding": UNIT, "seconds": 2.5})
    )
    assert good.embedding == tuple(UNIT)
    assert good.seconds == 2.5
    assert good.heard == protocol.PhraseHeard()  # an older satellite says nothing of it
    heard = {
        "level_dbfs": -28.5,
        "snr_db": 31.0,
        "cohort_mean": 0.6,
        "cohort_std": 0.03,
    }
    with_quality = protocol.parse_voiceprint(
        Event(
            protocol.VOICEPRINT,
            {"id": "e1", "embedding": UNIT, "seconds": 2.5} | heard,
        )
    )
    assert with_quality.heard == protocol.PhraseHeard(-28.5, 31.0, 0.6, 0.03)
    failed = protocol.parse_voiceprint(
        Event(protocol.VOICEPRINT, {"id": "e1", "error": "too_short"})
    )
    assert (failed.embedding, failed.error) == (None, "too_short")


@pytest.mark.parametrize(
    ("kind", "data", "message"),
    [
        (protocol.BARGE_IN, {"stream": "s", "played": -1, "onset": 0}, "played -1"),
        (protocol.BARGE_IN, {"stream": "s", "played": True, "onset": 0}, "played"),
        (protocol.BARGE_IN, {"stream": "s", "played": 1, "onset": 1.5}, "onset 1.5"),
        (protocol.BARGE_IN, {"stream": "", "played": 1, "onset": 1}, "stream ''"),
        (protocol.BARGE_IN, {"stream": "x" * 65, "played": 1, "onset": 1}, "stream"),
        (protocol.VOICE, {"stream": "s", "person": 3, "seconds": 1}, "person 3"),
        (protocol.VOICE, {"stream": "s", "person": " ", "seconds": 1}, "person ' '"),
        (protocol.VOICE, {"stream": "s", "score": 2.0, "seconds": 1}, "score 2.0"),
        (protocol.VOICE, {"stream": "s", "seconds": -1}, "seconds -1"),
        (protocol.VOICE, {"stream": "s"}, "seconds None"),
        (protocol.VOICEPRINT, {"id": "", "error": "no_speech"}, "id ''"),
        (protocol.VOICEPRINT, {"id": "e", "error": "boom"}, "error 'boom'"),
        (protocol.VOICEPRINT, {"id": "e", "embedding": UNIT}, "seconds None"),
        (
            protocol.VOICEPRINT,
            {"id": "e", "embedding": UNIT, "seconds": 1, "snr_db": "loud"},
            "snr_db 'loud' is out of range",
        ),
        (
            protocol.VOICEPRINT,
            {"id": "e", "embedding": UNIT, "seconds": 1, "cohort_mean": 3.0},
            "cohort_mean 3.0 is out of range",
        ),
        (
            protocol.VOICEPRINT,
            {"id": "e", "embedding": UNIT[:10], "seconds": 1},
            "not a list of 256 numbers",
        ),
        (
            protocol.VOICEPRINT,
            {"id": "e", "embedding": [math.inf, *UNIT[1:]], "seconds": 1},
            "not a finite number",
        ),
        (
            protocol.VOICEPRINT,
            {"id": "e", "embedding": "x" * 256, "seconds": 1},
            "not a list of 256 numbers",
        ),
    ],
)
def test_a_bad_report_is_refused(kind: str, data: dict[str, Any], message: str) -> None:
    parse = {
        protocol.BARGE_IN: protocol.parse_barge_in,
        protocol.VOICE: protocol.parse_voice,
        protocol.VOICEPRINT: protocol.parse_voiceprint,
    }[kind]
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        parse(Event(kind, data))


def test_a_parser_refuses_another_event() -> None:
    with pytest.raises(ValueError, match="expected voicestack-voice"):
        protocol.parse_voice(Event(protocol.BARGE_IN, {}))


def test_the_info_block_says_whether_the_gate_can_run() -> None:
    block = {"id": "sat", "protocol": 1, "sends": [], "accepts": []}
    assert protocol.parse_info({"voicestack": block}).voiceprint is False
    with_gate = protocol.parse_info({"voicestack": {**block, "voiceprint": True}})
    assert with_gate.voiceprint is True
    odd = protocol.parse_info({"voicestack": {**block, "voiceprint": "yes"}})
    assert odd.voiceprint is False
    # An older satellite says nothing of holding: "not sure" resumes there.
    assert protocol.parse_info({"voicestack": block}).hold is False
    holds = protocol.info_block("sat", True, hold=True)
    assert protocol.parse_info({"voicestack": holds}).hold is True
