"""After every change of playback state, the next audio plays.

A pause that outlives the stream it paused silences everything after it: the
reply to a user's barge-in was never heard, because dropping the paused answer
(``flush(only=…)``) left the player paused (issue 26). Each path that pauses,
drops or resumes is followed here by a next stream, which must play to its end.
Virtual time: the arithmetic is exact whatever the machine's load.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from devstack import speech
from tests.satellite import virtual_time
from tests.satellite.playback_log import PlaybackLog
from tests.satellite.test_playback_identity import NullCard
from voicestack_satellite.player import Player

RATE = 16000


def _queue(player: Player, stream_id: str, seconds: float) -> None:
    player.begin(stream_id, RATE, 2, 1)
    player.feed(stream_id, speech.silence(seconds))
    player.end(stream_id)


async def _played(log: PlaybackLog, stream_id: str, within_s: float) -> bool:
    """Whether ``stream_id`` played to its end within ``within_s`` (virtual)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within_s
    while loop.time() < deadline:
        if any(p.stream_id == stream_id and p.state == "played" for p in log.progress):
            return True
        await asyncio.sleep(0.05)
    return False


def _after(change: Callable[[Player], None], *, queue_reply_first: bool) -> bool:
    """Pause an answer 1 s in, apply ``change``, then a reply must play.

    ``queue_reply_first``: the reply was already queued behind the answer when
    the change came (a reply sent early), else it comes after the change.
    """

    async def scenario() -> bool:
        log = PlaybackLog()
        player = Player(NullCard(), RATE)
        player.subscribe(log)
        player.start()
        _queue(player, "answer", 5.0)
        if queue_reply_first:
            _queue(player, "reply", 1.0)
        await asyncio.sleep(1.0)
        player.pause()
        await asyncio.sleep(0.5)
        change(player)
        if not queue_reply_first:
            _queue(player, "reply", 1.0)
        heard = await _played(log, "reply", 10.0)
        await player.close()
        return heard

    return virtual_time.run(scenario())


def _flush_the_paused(player: Player) -> None:
    """A user's barge-in, the verdict timeout, the give-up: the answer goes."""
    player.flush(only="answer".__eq__)


def _flush_all(player: Player) -> None:
    """``voicestack-flush``, or a wake word during the pause."""
    player.flush()


def _resume(player: Player) -> None:
    """Someone else spoke: the answer plays on, then the reply."""
    player.resume()


def _resume_at(player: Player) -> None:
    """Resume at the sentence's start."""
    player.resume(offset=RATE // 2)


# A flush of everything drops a reply queued before it too: that case is no reply.
CASES = [
    (change, first)
    for change in (_flush_the_paused, _flush_all, _resume, _resume_at)
    for first in (False, True)
    if not (change is _flush_all and first)
]


@pytest.mark.parametrize(
    ("change", "queue_reply_first"),
    CASES,
    ids=[f"{change.__name__.strip('_')}-{first}" for change, first in CASES],
)
def test_the_next_audio_plays_after_a_paused_answer_ends(
    change: Callable[[Player], None], queue_reply_first: bool
) -> None:
    assert _after(change, queue_reply_first=queue_reply_first)


def test_flushing_a_stream_behind_the_paused_one_keeps_the_pause() -> None:
    """Dropping something queued (a timer sound) does not unpause the answer."""

    async def scenario() -> tuple[bool, bool]:
        log = PlaybackLog()
        player = Player(NullCard(), RATE)
        player.subscribe(log)
        player.start()
        _queue(player, "answer", 3.0)
        _queue(player, "timer-1", 1.0)
        await asyncio.sleep(1.0)
        player.pause()
        player.flush(only="timer-1".__eq__)
        still_paused = player.paused and not await _played(log, "answer", 5.0)
        player.resume()
        then_played = await _played(log, "answer", 5.0)
        await player.close()
        return still_paused, then_played

    still_paused, then_played = virtual_time.run(scenario())
    assert still_paused
    assert then_played
