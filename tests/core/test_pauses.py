"""Pauses in a request's audio, exact to the 30 ms window: the audio is the clock."""

from __future__ import annotations

from array import array
import math

import pytest

from custom_components.voicestack.core.pauses import (
    MIN_FLOOR,
    QUIET_OVER_FLOOR,
    RATE,
    WINDOW,
    Heard,
    PauseWatch,
)

WINDOW_S = WINDOW / RATE


def tone(seconds: float, amplitude: float = 3000.0) -> bytes:
    """A 440 Hz tone (speech, to the level rule)."""
    count = round(seconds * RATE)
    return array(
        "h",
        (
            round(amplitude * math.sin(2 * math.pi * 440 * i / RATE))
            for i in range(count)
        ),
    ).tobytes()


def quiet(seconds: float) -> bytes:
    """Digital silence."""
    return bytes(2 * round(seconds * RATE))


def feed_windows(watch: PauseWatch, audio: bytes) -> list[tuple[int, Heard]]:
    """Feed ``audio`` one window at a time: (window index, change) for each change."""
    step = 2 * WINDOW
    changes = []
    for index, start in enumerate(range(0, len(audio), step)):
        if (heard := watch.feed(audio[start : start + step])) is not Heard.NOTHING:
            changes.append((index, heard))
    return changes


def test_a_pause_after_speech_is_heard_after_pause_s_of_quiet_exactly() -> None:
    watch = PauseWatch(0.3)
    speech = 10 * WINDOW_S  # 0.3 s: more than the 0.25 s a request needs
    changes = feed_windows(watch, quiet(0.3) + tone(speech) + quiet(1.0))
    # 10 quiet windows, 10 loud ones, then the 10th quiet one is the pause.
    assert changes == [(10 + 10 + 9, Heard.PAUSED)]
    assert watch.paused
    assert watch.pauses == 1


def test_no_pause_before_enough_speech() -> None:
    watch = PauseWatch(0.3)
    assert feed_windows(watch, quiet(0.3) + tone(0.12) + quiet(1.0)) == []
    assert not watch.paused


def test_speech_after_a_pause_resumes_and_the_next_pause_counts_again() -> None:
    watch = PauseWatch(0.3)
    audio = tone(0.3) + quiet(17 * WINDOW_S) + tone(0.3) + quiet(0.5)
    assert feed_windows(watch, audio) == [
        (10 + 9, Heard.PAUSED),
        (10 + 17, Heard.RESUMED),  # the first loud window after 17 quiet ones
        (10 + 17 + 10 + 9, Heard.PAUSED),
    ]
    assert watch.pauses == 2


def test_a_sound_just_over_the_quiet_level_after_a_pause_resumes() -> None:
    # Not speech to the endpointer (+10 dB), but not quiet either (+6 dB): what
    # speech-to-text did not get may not be taken for silence.
    watch = PauseWatch(0.3)
    feed_windows(watch, tone(0.3) + quiet(14 * WINDOW_S))
    assert watch.paused
    faint = MIN_FLOOR * QUIET_OVER_FLOOR * math.sqrt(2) * 1.1  # RMS just above
    assert watch.feed(tone(WINDOW_S, faint)) is Heard.RESUMED


def test_a_shorter_pause_is_no_pause() -> None:
    watch = PauseWatch(0.3)
    assert feed_windows(watch, tone(0.3) + quiet(0.27) + tone(0.3)) == []


@pytest.mark.parametrize("chunk_bytes", [1, 999, 2560, 2 * WINDOW * 7])
def test_how_audio_is_chunked_changes_nothing_but_when_it_is_told(
    chunk_bytes: int,
) -> None:
    audio = tone(0.3) + quiet(0.5) + tone(0.3) + quiet(0.5)
    watch = PauseWatch(0.3)
    changes = [
        heard
        for start in range(0, len(audio), chunk_bytes)
        if (heard := watch.feed(audio[start : start + chunk_bytes]))
        is not Heard.NOTHING
    ]
    assert changes == [Heard.PAUSED, Heard.RESUMED, Heard.PAUSED]
    assert watch.paused
