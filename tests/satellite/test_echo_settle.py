"""The echo path's settling: a run of playback after silence may echo louder at first.

The speaker starts each run afresh, its echo's delay moves against the
reference, and AEC3 takes up to a second to find it again
(``echo_path.SETTLE_S``; measured in bench/barge_in_short.py). Mic samples and
loop times are given here, so no clock runs: the mic's sample 0 is heard at
loop time 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from voicestack_satellite.echo_path import SETTLE_DB, SETTLE_S, EchoPath

RATE = 16000
LEVEL = 1000.0
RAISED = LEVEL * 10 ** (SETTLE_DB / 20)
BLOCK_S = 0.1


def _path() -> EchoPath:
    path = EchoPath("gate", RATE)
    path.clock.heard(0, 0.0)
    return path


def _play(path: EchoPath, start_s: float, seconds: float) -> None:
    """A steady tone from loop time ``start_s``, written in 0.1 s blocks."""
    for index in range(round(seconds / BLOCK_S)):
        block = np.full(round(BLOCK_S * RATE), LEVEL, dtype=np.int16)
        path.on_written(block, start_s + index * BLOCK_S)


def _levels(path: EchoPath, start_s: float, seconds: float) -> np.ndarray:
    """The echo levels the mic's windows from ``start_s`` get, read by read."""
    found = []
    for index in range(round(seconds / BLOCK_S)):
        at = round((start_s + index * BLOCK_S) * RATE)
        path.process(np.zeros(round(BLOCK_S * RATE), dtype=np.int16), at)
        found.append(path.echo_levels())
    return np.concatenate(found)


def test_a_run_after_silence_allows_more_echo_for_its_first_second() -> None:
    path = _path()
    _play(path, 0.0, 1.5)
    levels = _levels(path, 0.0, 1.5)
    settling = round(SETTLE_S * 100)  # 10 ms windows

    assert levels[:settling] == pytest.approx(RAISED)
    assert levels[settling:] == pytest.approx(LEVEL)


def test_a_block_placed_far_ahead_does_not_hide_the_next_run() -> None:
    """Under load one block landed 1.5 s ahead; the reply after it still settles."""
    path = _path()
    _play(path, 0.0, 0.5)
    _play(path, 2.0, BLOCK_S)  # the loop stalled: placed far ahead
    _play(path, 0.5, 0.5)
    _levels(path, 0.0, 1.0)
    _play(path, 1.5, 0.5)  # the reply, after 0.5 s of silence

    assert _levels(path, 1.5, 0.5) == pytest.approx(RAISED)


def test_a_run_starting_before_the_mic_heard_the_last_one_keeps_both() -> None:
    """The mic lags the player: two runs written before it hears the first."""
    path = _path()
    _play(path, 0.0, 0.2)
    _play(path, 0.5, 0.2)  # the mic has heard neither yet

    levels = _levels(path, 0.0, 0.7)
    assert levels[:20] == pytest.approx(RAISED)  # the first run still settles
    assert levels[50:] == pytest.approx(RAISED)
