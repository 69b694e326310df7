"""What barge-in keeps of the mic, and where a request over an answer begins.

Sample-exact, without a room: ``VoiceStart`` follows a loud stretch through
the gaps between words, and a capture's request starts ``LEAD_S`` before the
voice, echo handled before the onset and as it came from it.
"""

from __future__ import annotations

import numpy as np

from voicestack_satellite.capture import LEAD_S, Capture, VoiceStart
from voicestack_satellite.vad import WINDOW_SAMPLES

RATE = 16000
LEAD = round(LEAD_S * RATE)


def _windows(voice: VoiceStart, loud: str, first: int = 0) -> None:
    """Feed windows from index ``first``: ``#`` loud, ``.`` quiet."""
    for index, mark in enumerate(loud, first):
        voice.window(mark == "#", index * WINDOW_SAMPLES)


def test_the_voice_began_where_its_loud_stretch_began() -> None:
    voice = VoiceStart(gap=3)
    _windows(voice, ".....###..#")  # a gap of 2 quiet windows: one stretch
    assert voice.began(10 * WINDOW_SAMPLES) == 5 * WINDOW_SAMPLES


def test_a_gap_as_long_as_a_run_end_starts_a_new_stretch() -> None:
    voice = VoiceStart(gap=3)
    _windows(voice, "###...#")
    assert voice.began(6 * WINDOW_SAMPLES) == 6 * WINDOW_SAMPLES


def test_outside_a_loud_stretch_the_voice_begins_where_it_is_heard() -> None:
    voice = VoiceStart(gap=3)
    _windows(voice, "#....")
    assert voice.began(5 * WINDOW_SAMPLES) == 5 * WINDOW_SAMPLES
    _windows(voice, "##", first=5)
    assert voice.began(4 * WINDOW_SAMPLES) == 4 * WINDOW_SAMPLES  # never later


def test_a_stretch_does_not_reach_across_a_reset() -> None:
    voice = VoiceStart(gap=3)
    _windows(voice, "###")
    voice.reset()  # no answer played for a while: these windows are long gone
    _windows(voice, "#", first=500)
    assert voice.began(500 * WINDOW_SAMPLES) == 500 * WINDOW_SAMPLES


def _capture(seconds: float = 2.0) -> Capture:
    """A capture (1 s preroll) that heard ``seconds``: cleaned 1s, raw 2s."""
    capture = Capture(1.0)
    for _ in range(round(seconds * RATE / 1280)):
        capture.heard(np.full(1280, 2, np.int16), np.full(1280, 1, np.int16))
    return capture


def test_a_request_begins_just_before_the_voice_cleaned_up_to_the_onset() -> None:
    capture = _capture()
    onset, voice = 30000, 28000
    capture.begin(onset, voice)
    capture.heard(np.full(1280, 2, np.int16), np.full(1280, 1, np.int16))

    request = capture.for_request()
    assert capture.start == voice - LEAD
    assert len(request) == 32000 + 1280 - capture.start
    assert set(request[: onset - capture.start]) == {1}  # echo handled
    assert set(request[onset - capture.start :]) == {2}  # as said
    assert set(capture.for_gate(0.05)) == {1}
    assert len(capture.for_gate(0.05)) == 800


def test_a_request_takes_at_most_the_preroll_before_the_onset() -> None:
    capture = _capture()
    capture.begin(30000, 0)  # loud for as long as the mic was heard
    assert capture.start == 30000 - RATE


def test_a_voice_heard_after_the_onset_still_keeps_the_lead() -> None:
    capture = _capture()
    capture.begin(30000, 31000)
    assert capture.start == 30000 - LEAD
