"""Barge-in in the listening harness's rooms, replayed on the mic's own clock.

The satellite's echo path (AEC3) and barge-in hear each 20 ms mic read of a
room preset (``bench/barge_in_replay.py``: the room's air, no wall clock), so
what is timed here is mic samples, not the load of the machine. The long sweeps
(10 minutes of answers, 24 commands per room) are ``bench/barge_in_rooms.py``.
"""

from __future__ import annotations

import statistics

from bench.barge_in_replay import Replay
from bench.barge_in_rooms import answer_pcm, command
from bench.barge_in_short import reply_pcm
from devstack.room_presets import RATE
from voicestack_satellite.mic_format import CHUNK_SAMPLES, READ_SAMPLES


async def test_the_answers_do_not_pause_on_the_fan_while_aec3_converges() -> None:
    """The hard room's first two answers (23 s from a cold start) play through.

    They paused twice on the fan (4.1 s and 16.4 s in): AEC3's suppressor took
    the fan down with the echo, the noise floor followed it, and the fan, back
    in a gap, stood 6 dB over it.
    """
    replay = Replay("hard")
    for index in range(2):
        replay.speaker.start(answer_pcm(index))
        await replay.play_out()
        await replay.run(0.5)

    assert [round(p / RATE, 2) for p in replay.speaker.pauses] == []


async def _onset_to_paused(read: int) -> list[float]:
    """Seconds from each command's first loud sample at the mic to the speaker quiet.

    Six commands at six points of an answer in the simple room, the mic read
    ``read`` samples at a time.
    """
    replay = Replay("simple", chunk=read)
    replay.speaker.start(answer_pcm(0))  # AEC3 hears one answer first
    await replay.play_out()
    delays = []
    for trial in range(6):
        replay.speaker.start(answer_pcm(trial + 1))
        await replay.run(1.0 + 1.1 * trial)
        _text, clip = command(trial)
        said = replay.say(clip)
        await replay.run((said.end - replay.air.written) / RATE + 0.3)
        paused = [p for p in replay.speaker.pauses if p >= said.onset - 800]
        assert paused, f"command {trial} did not pause the answer"
        delays.append((paused[0] - said.onset) / replay.air.rate)
        replay.barge_in.abandon(resume=False)
        replay.end_request()
        replay.speaker.flush()
        await replay.run(0.5)
    return delays


async def test_a_command_over_an_answer_is_heard_at_the_next_20_ms_read() -> None:
    """The mic read every 20 ms, not 80: the answer pauses about 30 ms sooner.

    With 80 ms reads a voice over an answer waited for the rest of its read
    (40 ms on average) before barge-in heard it. Each command pauses the answer
    as soon or sooner: the same windows are judged, only sooner.
    """
    before = await _onset_to_paused(CHUNK_SAMPLES)
    now = await _onset_to_paused(READ_SAMPLES)

    assert all(soon <= late for soon, late in zip(now, before, strict=True))
    assert statistics.median(before) - statistics.median(now) >= 0.02, (before, now)


async def _short_replies_paused(*, settle: bool) -> list[list[float]]:
    """Where each of four short replies paused (seconds in), in the quiet room.

    The speaker started the long answers before them 20 ms late, and starts
    each reply on time: the echo comes 20 ms sooner against the reference than
    AEC3 had learned (on a real satellite the start moved 10-20 ms from one
    run of playback to the next).
    """
    replay = Replay("quiet", start_lag_s=(0.02, 0.02))
    if not settle:
        replay.echo.settle_s = 0.0
    for index in range(2):
        replay.speaker.start(answer_pcm(index))
        await replay.play_out()
    replay.start_lag_s = (0.0, 0.0)
    found = []
    for index in range(4):
        await replay.run(2.0)
        start, before = replay.mic_end, len(replay.speaker.pauses)
        replay.speaker.start(reply_pcm(index))
        await replay.play_out()
        found.append([(p - start) / RATE for p in replay.speaker.pauses[before:]])
    return found


async def test_a_short_reply_plays_through_when_the_speaker_starts_sooner() -> None:
    """A reply after silence is not paused by its own echo while AEC3 re-finds it.

    Without the echo path's settling (``echo_path.SETTLE_S``) the first reply
    paused 0.26 s in on its echo, left 8-10 dB down, and played on by itself
    (what a listener heard 4 times in 46 short replies on a real satellite).
    """
    assert await _short_replies_paused(settle=True) == [[], [], [], []]
