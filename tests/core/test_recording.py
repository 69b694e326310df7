"""One request's recording: markers, raw tokens, timings on a manual clock, the cut.

Also the optional ``start`` of ``voicestack-preroll`` that places the cut, on
both sides of the protocol, and where the real satellite's ``Request`` puts it.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from wyoming.event import Event

from custom_components.voicestack.core.recording.recording import (
    MAX_RECORDED_BYTES,
    EndOfSpeech,
    Outcome,
    Recording,
    stt_tokens,
)
from custom_components.voicestack.core.request_result import (
    FailedStage,
    stage_of_error,
)
from custom_components.voicestack.core.router.route import Route
from custom_components.voicestack.core.speaker import (
    Playback,
    PlaybackOutcome,
    SpokenSentence,
)
from devstack.manual_clock import ManualClock
import voicestack_protocol as protocol
from voicestack_satellite.echo import EchoTail
from voicestack_satellite.mic import CHUNK_SAMPLES
from voicestack_satellite.preroll import PrerollBuffer
from voicestack_satellite.request import Request

STARTED = "2026-11-23T22:15:00.123456+00:00"
SECOND = 16000 * 2  # bytes of one second of 16 kHz 16-bit mono


def new_recording(clock: ManualClock, **kwargs: Any) -> Recording:
    return Recording(
        clock,
        started=STARTED,
        entry_id="01KITCHEN",
        satellite="Kitchen",
        entity_id="assist_satellite.kitchen",
        **{"wake_word": "hey_jarvis", "woken": True, **kwargs},
    )


def markers(meta: dict[str, Any]) -> dict[str, int]:
    return {m["name"]: m["sample"] for m in meta["markers"]}


def timings(meta: dict[str, Any]) -> dict[str, tuple[float, float | None]]:
    return {t["stage"]: (t["start_s"], t["end_s"]) for t in meta["timings"]}


# -- raw tokens --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "tokens"),
    [
        ("[BLANK_AUDIO]", ["[BLANK_AUDIO]"]),
        (" Turn on the light. ", ["Turn", "on", "the", "light."]),
        ("(music playing) hello", ["(music playing)", "hello"]),
        ("<|nospeech|>", ["<|nospeech|>"]),
        ("so*sigh*what [ BLANK ]", ["so", "*sigh*", "what", "[ BLANK ]"]),
        ("♪ la ♪♪", ["♪", "la", "♪♪"]),
        ("", []),
    ],
)
def test_raw_tokens_keep_special_tokens_whole(raw: str, tokens: list[str]) -> None:
    assert stt_tokens(raw) == tokens


# -- a woken request from start to answer --------------------------------------------


def test_a_woken_request_has_markers_timings_decision_and_playback() -> None:
    clock = ManualClock()
    recording = new_recording(clock)
    recording.stt_engine = "stt.faster_whisper"
    recording.preroll(4800, cut=480_000, start=475_200)
    for _ in range(50):  # 4 s of 80 ms chunks
        recording.add_audio(b"\1\0" * 1280)
    clock.advance(1.5)
    recording.speech_started(500)  # HA's VAD, ms into the stream
    clock.advance(1.0)
    recording.speech_ended(2750)
    clock.advance(0.25)
    recording.stream_ended(EndOfSpeech.ENDPOINTER)  # audio-stop comes after
    clock.advance(0.5)
    recording.heard(" Turn on the kitchen lights.")
    route = Route(
        frame="base",
        rule="agent",
        agent_text="Turn on the kitchen lights.",
        reason="a wake-word request goes to the agent",
        trace=("base: agent",),
        explain="'Turn on…' → base/agent: … [base: agent] stack base",
        stack=("base",),
    )
    with recording.stage("route"):
        clock.advance(0.01)
    recording.route = route
    with recording.stage("agent"):
        clock.advance(0.24)
    with recording.stage("speech"):
        clock.advance(2.0)
    playback = Playback(
        sentences=[
            SpokenSentence(0, "Turned on the light.", 0, 22050),
            SpokenSentence(1, "Anything else?", 22050, 11025),
        ],
        rate=22050,
        outcome=PlaybackOutcome.PLAYED,
    )
    recording.answered(
        response_type="action_done",
        error_code=None,
        intent="HassTurnOn",
        targets=[{"type": "entity", "name": "Kitchen light", "id": "light.kitchen"}],
        failed_targets=[],
        acted=True,
    )
    recording.said("Turned on the light. Anything else?", playback)
    recording.routed(route)
    meta = recording.meta()

    assert json.loads(json.dumps(meta)) == meta  # JSON as it is
    assert meta["version"] == 2
    assert (meta["id"], meta["bytes"]) == (None, None)  # the library's
    assert meta["entry_id"] == "01KITCHEN"
    assert (meta["satellite"], meta["entity_id"]) == (
        "Kitchen",
        "assist_satellite.kitchen",
    )
    assert meta["started"] == STARTED
    assert (meta["rate"], meta["samples"], meta["duration_s"]) == (16000, 64000, 4.0)
    assert meta["wake_word"] == {"name": "hey_jarvis", "detected_s": 0.0}
    assert meta["preroll"] == {"samples": 4800, "cut": 4800}
    assert meta["markers"] == [
        {"name": "preroll_start", "sample": 0},
        {"name": "splice", "sample": 4800},
        {"name": "wake_cut", "sample": 4800},
        {"name": "speech_start", "sample": 8000},
        {"name": "speech_end", "sample": 44000},
        {"name": "stream_end", "sample": 64000},
    ]
    assert meta["end_of_speech"] == "ha_vad"  # first cause told wins
    assert meta["stt"] == {
        "engine": "stt.faster_whisper",
        "raw": " Turn on the kitchen lights.",
        "tokens": ["Turn", "on", "the", "kitchen", "lights."],
    }
    assert meta["text"] == "turn on the kitchen lights"
    assert meta["outcome"] == "routed"
    assert (meta["result"], meta["failure"]) == ("success", None)
    assert meta["agent"] == {
        "response_type": "action_done",
        "error_code": None,
        "intent": "HassTurnOn",
        "targets": [{"type": "entity", "name": "Kitchen light", "id": "light.kitchen"}],
        "failed_targets": [],
        "acted": True,
    }
    assert meta["decision"] == {
        "frame": "base",
        "rule": "agent",
        "reason": "a wake-word request goes to the agent",
        "trace": ["base: agent"],
        "explain": route.explain,
        "stack": ["base"],
        "sent_to_agent": True,
    }
    assert meta["response"] == "Turned on the light. Anything else?"
    assert timings(meta) == {
        "wake": (0.0, 0.0),
        "stream": (0.0, 2.75),
        "stt": (0.0, 3.25),
        "route": (3.25, 3.26),
        "agent": (3.26, 3.5),
        "speech": (3.5, 5.5),
    }
    assert [t["stage"] for t in meta["timings"]] == [
        "wake",
        "stream",
        "stt",
        "route",
        "agent",
        "speech",
    ]
    assert meta["playback"] == {
        "sentences": [
            {"text": "Turned on the light.", "start_s": 0.0, "duration_s": 1.0},
            {"text": "Anything else?", "start_s": 1.0, "duration_s": 0.5},
        ],
        "outcome": "played",
    }
    assert recording.pcm() == b"\1\0" * 64000


# -- did it work? ----------------------------------------------------------------------


def agent_route(stack: tuple[str, ...] = ("base",), agent: bool = True) -> Route:
    return Route(
        frame="base",
        rule="agent",
        agent_text="purple monkey dishwasher" if agent else None,
        stack=stack,
    )


def test_the_agents_no_intent_match_is_a_failure_at_the_intent_stage() -> None:
    recording = new_recording(ManualClock())
    recording.heard("Purple monkey dishwasher.")
    recording.route = agent_route()
    recording.answered(
        response_type="error",
        error_code="no_intent_match",
        intent=None,
        targets=[],
        failed_targets=[],
        acted=False,
    )
    recording.said("Sorry, I couldn't understand that", Playback())
    recording.routed(recording.route)

    meta = recording.meta()

    assert (meta["outcome"], meta["result"]) == ("routed", "failure")
    assert meta["failure"] == {
        "stage": "intent",
        "code": "no_intent_match",
        "message": "Sorry, I couldn't understand that",
    }
    assert meta["agent"]["response_type"] == "error"
    assert (meta["agent"]["intent"], meta["agent"]["acted"]) == (None, False)


def test_a_question_left_waiting_for_its_yes_is_a_failure_nothing_ran() -> None:
    recording = new_recording(ManualClock())
    recording.heard("Please unlock the front door.")
    recording.routed(agent_route(("base", "confirm"), agent=False))

    meta = recording.meta()

    assert meta["result"] == "failure"
    assert meta["failure"]["stage"] == "intent"
    assert meta["failure"]["code"] == "awaiting_confirmation"
    assert meta["agent"] is None


def test_a_mode_that_handled_the_request_is_a_success() -> None:
    recording = new_recording(ManualClock())
    recording.heard("Start a dictation.")
    recording.routed(agent_route(("base", "dictation"), agent=False))

    assert recording.meta()["result"] == "success"


def test_a_pipeline_error_names_its_stage_and_the_first_failure_stays() -> None:
    recording = new_recording(ManualClock())
    recording.failed(stage_of_error("stt-stream-failed"), "stt-stream-failed", "gone")
    recording.failed(FailedStage.TTS, None, "later")
    recording.finish_as(Outcome.FAILED)

    meta = recording.meta()

    assert meta["result"] == "failure"
    assert meta["failure"] == {
        "stage": "stt",
        "code": "stt-stream-failed",
        "message": "gone",
    }


@pytest.mark.parametrize(
    ("code", "stage"),
    [
        ("wake-stream-failed", "wake"),
        ("wake-word-timeout", "wake"),
        ("stt-provider-missing", "stt"),
        ("intent-failed", "intent"),
        ("tts-failed", "tts"),
        ("pipeline-not-found", "stt"),
        (None, "stt"),
    ],
)
def test_pipeline_error_codes_map_to_their_stage(code: str | None, stage: str) -> None:
    assert stage_of_error(code) == stage


def test_an_error_in_a_timed_stage_is_the_failure_of_that_stage() -> None:
    recording = new_recording(ManualClock())
    recording.heard("Turn on the kitchen lights.")
    recording.route = agent_route()
    with pytest.raises(RuntimeError), recording.stage("speech"):
        raise RuntimeError("no TTS engine")
    recording.finish_as(Outcome.FAILED)

    meta = recording.meta()

    assert meta["failure"] == {"stage": "tts", "code": None, "message": "no TTS engine"}
    assert meta["timings"][-1]["stage"] == "speech"
    assert meta["timings"][-1]["end_s"] is not None


@pytest.mark.parametrize("outcome", [PlaybackOutcome.TIMEOUT, PlaybackOutcome.LOST])
def test_an_answer_that_never_finished_playing_fails_at_playback(
    outcome: PlaybackOutcome,
) -> None:
    recording = new_recording(ManualClock())
    recording.route = agent_route()
    recording.said("Done.", Playback(outcome=outcome))
    recording.routed(recording.route)

    meta = recording.meta()

    assert meta["result"] == "failure"
    assert (meta["failure"]["stage"], meta["failure"]["code"]) == (
        "playback",
        str(outcome),
    )


def test_an_answer_cut_short_by_the_user_is_no_failure() -> None:
    recording = new_recording(ManualClock())
    recording.route = agent_route()
    recording.said("Done.", Playback(outcome=PlaybackOutcome.FLUSHED))
    recording.routed(recording.route)

    assert recording.meta()["result"] == "success"


# -- the cut -------------------------------------------------------------------------


def test_a_speech_onset_cut_lies_before_the_splice() -> None:
    """A listen-window request: the preroll runs past the onset to the chunk's end."""
    recording = new_recording(ManualClock(), wake_word=None, woken=False)
    recording.preroll(16000, cut=100_500, start=85_000)
    recording.add_audio(b"\0\0" * 20000)

    meta = recording.meta()

    assert meta["preroll"] == {"samples": 16000, "cut": 15500}
    assert meta["wake_word"] is None
    # No wake word was said: no wake cut is drawn (the cut is the preroll's).
    assert [m["name"] for m in meta["markers"]] == [
        "preroll_start",
        "splice",
        "stream_end",
    ]


def test_without_start_the_cut_is_taken_to_be_at_the_splice() -> None:
    recording = new_recording(ManualClock())
    recording.preroll(4800, cut=123_456)  # an older satellite: no start

    assert recording.meta()["preroll"] == {"samples": 4800, "cut": 4800}


def test_a_cut_outside_the_preroll_is_clamped_into_it() -> None:
    recording = new_recording(ManualClock(), wake_word=None, woken=False)
    recording.preroll(0, cut=10_000, start=10_640)  # --preroll 0: nothing held

    assert recording.meta()["preroll"] == {"samples": 0, "cut": 0}


@pytest.mark.parametrize(
    ("wake_word", "preroll_s", "cut_in_chunk"),
    [("hey_jarvis", 0.3, CHUNK_SAMPLES), (None, 1.0, 500), (None, 0.25, 1)],
)
def test_the_satellite_request_places_the_cut(
    wake_word: str | None, preroll_s: float, cut_in_chunk: int
) -> None:
    """What the real ``Request`` sends puts the cut where its mic sample is.

    The mic holds a ramp (sample value = its absolute index); the cut
    is inside the last mic chunk (a speech onset) or at its end (a wake word).
    """
    sent: list[Event] = []
    peer = _Peer(sent)
    mic = PrerollBuffer(round(1.0 * 16000))
    chunks = 20  # 25,600 samples: the ramp fits an int16
    for n in range(chunks):
        start = n * CHUNK_SAMPLES
        mic.append(np.arange(start, start + CHUNK_SAMPLES, dtype=np.int16))
    cut = (chunks - 1) * CHUNK_SAMPLES + cut_in_chunk
    preroll_audio = Request(peer, mic, None).start(
        wake_word, cut, preroll_s, EchoTail(0)
    )
    event = next(e for e in sent if e.type == protocol.PREROLL)
    preroll = protocol.parse_preroll(event)
    recording = new_recording(
        ManualClock(), wake_word=wake_word, woken=wake_word is not None
    )
    recording.preroll(preroll.samples, preroll.cut, preroll.start)
    recording.add_audio(preroll_audio.tobytes())

    position = recording.meta()["preroll"]["cut"]

    assert preroll.samples == len(preroll_audio)
    assert preroll.start is not None
    # The sample at the cut is the mic's sample number ``cut``.
    assert int(preroll_audio[position - 1]) == cut - 1
    assert position == preroll.samples - (chunks * CHUNK_SAMPLES - cut)


class _Peer:
    """What ``Request`` needs of a peer: a send that keeps the events."""

    extensions = True
    end_of_speech_s = None

    def __init__(self, sent: list[Event]) -> None:
        self.send = sent.append


# -- requests that produced nothing ---------------------------------------------------


def test_no_speech_has_no_transcript_and_says_why() -> None:
    clock = ManualClock()
    recording = new_recording(clock)
    recording.add_audio(b"\0\0" * 1280)
    clock.advance(2.5)
    recording.finish_as(Outcome.NO_SPEECH)
    recording.stream_ended(EndOfSpeech.NO_SPEECH)
    recording.finish_as(Outcome.CANCELLED)  # the cancel after it changes nothing

    meta = recording.meta()

    assert meta["outcome"] == "no_speech"
    assert (meta["result"], meta["failure"], meta["agent"]) == ("empty", None, None)
    assert meta["end_of_speech"] == "no_speech"
    assert (meta["stt"], meta["text"], meta["decision"]) == (None, "", None)
    assert meta["preroll"] is None  # a stock satellite sends none
    assert meta["markers"] == [{"name": "stream_end", "sample": 1280}]
    assert timings(meta)["stream"] == (0.0, 2.5)
    assert timings(meta)["stt"] == (0.0, None)  # still open
    assert (meta["response"], meta["playback"]) == ("", None)


def test_blank_audio_is_an_empty_request_with_its_token() -> None:
    recording = new_recording(ManualClock())
    recording.heard("[BLANK_AUDIO]")
    recording.finish_as(Outcome.EMPTY)

    meta = recording.meta()

    assert meta["stt"]["tokens"] == ["[BLANK_AUDIO]"]
    assert meta["text"] == ""
    assert meta["outcome"] == "empty"
    assert (meta["result"], meta["failure"]) == ("empty", None)


def test_a_request_never_finished_reads_as_cancelled() -> None:
    meta = new_recording(ManualClock()).meta()

    assert meta["outcome"] == "cancelled"
    assert meta["result"] == "failure"
    assert meta["failure"] == {"stage": "stt", "code": "cancelled", "message": ""}
    assert meta["end_of_speech"] is None
    assert timings(meta)["stream"] == (0.0, None)


def test_nothing_said_leaves_the_playback_null() -> None:
    recording = new_recording(ManualClock())
    recording.said("", Playback(outcome=PlaybackOutcome.EMPTY))

    assert recording.meta()["playback"] is None


def test_a_request_is_finished_once() -> None:
    recording = new_recording(ManualClock())

    assert recording.finish() is True
    assert recording.finish() is False


# -- Home Assistant's wake word stage (a stock satellite) ------------------------------


def test_the_wake_word_stage_wakes_later_and_places_the_cut() -> None:
    clock = ManualClock()
    recording = new_recording(clock, wake_word=None, woken=False, wake_stage=True)
    recording.add_audio(b"\0\0" * 48000)
    clock.advance(3.0)
    recording.wake_word_detected("okay_nabu", 2500)
    clock.advance(1.0)
    recording.heard("what time is it")

    meta = recording.meta()

    assert meta["wake_word"] == {"name": "okay_nabu", "detected_s": 3.0}
    assert markers(meta)["wake_cut"] == 40000
    assert timings(meta)["wake"] == (0.0, 3.0)
    assert timings(meta)["stt"] == (3.0, 4.0)


def test_a_window_request_starts_speech_to_text_at_once() -> None:
    recording = new_recording(ManualClock(), wake_word=None, woken=False)

    meta = recording.meta()

    assert "wake" not in timings(meta)
    assert timings(meta)["stt"] == (0.0, None)


# -- the audio is bounded -------------------------------------------------------------


def test_audio_beyond_the_limit_is_dropped() -> None:
    recording = new_recording(ManualClock(), max_bytes=3 * 2560)
    for _ in range(5):
        recording.add_audio(b"\0\0" * 1280)

    assert recording.samples == 3 * 1280
    assert MAX_RECORDED_BYTES == 60 * SECOND


def test_an_odd_byte_is_not_a_sample() -> None:
    recording = new_recording(ManualClock())
    recording.add_audio(b"\1\2\3")

    assert recording.samples == 1
    assert recording.pcm() == b"\1\2"


# -- the preroll event's optional start, both sides ------------------------------------


def test_the_preroll_start_goes_across_and_is_optional() -> None:
    with_start = protocol.parse_preroll(
        protocol.preroll_event(16000, 16000, 480_000, 464_000)
    )
    without = protocol.parse_preroll(protocol.preroll_event(4800, 16000, 480_000))

    assert with_start == protocol.Preroll(
        samples=16000, rate=16000, cut=480_000, start=464_000
    )
    assert without.start is None
    assert "start" not in protocol.preroll_event(4800, 16000, 480_000).data


@pytest.mark.parametrize("start", [-1, True, "0", 1.5])
def test_a_bad_preroll_start_is_refused(start: object) -> None:
    event = Event(
        protocol.PREROLL, {"samples": 1, "rate": 16000, "cut": 5, "start": start}
    )

    with pytest.raises(
        ValueError, match=r"^voicestack-preroll: start .* is not a sample position$"
    ):
        protocol.parse_preroll(event)
