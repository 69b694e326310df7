"""What the people in the room and the LEDs learn: state, sounds, timers.

The state goes to ``--event-command`` as one JSON line per change (hooks.py);
the satellite's own sounds (awake, done, timer) play through the player under
ids of their own (``awake-3``), which never reach a peer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from enum import StrEnum
import itertools
import logging
from typing import Any

from wyoming.event import Event
from wyoming.timer import TimerCancelled, TimerFinished

from .audio import RATE
from .hooks import EventCommand
from .player import Player
from .sounds import Sounds

_LOGGER = logging.getLogger(__name__)


class FeedbackState(StrEnum):
    """The satellite's state as ``--event-command`` reports it (the JSON value)."""

    IDLE = "idle"
    WAKE = "wake"  # a wake word was heard
    LISTENING = "listening"  # a listen window is open, or a request streams
    THINKING = "thinking"  # the request ended; the answer is being made
    SPEAKING = "speaking"  # the owner's audio plays
    ERROR = "error"
    MUTED = "muted"  # the owner paused the satellite


class Feedback:
    """Reports state changes, plays our own sounds and rings timers."""

    def __init__(
        self,
        player: Player,
        sounds: Sounds,
        hooks: EventCommand | None,
        *,
        timer_repeat: int,
    ) -> None:
        """Nothing is reported before the first change: the first state always is."""
        self._player = player
        self._sounds = sounds
        self._hooks = hooks
        self._timer_repeat = timer_repeat
        self._ids = itertools.count(1)
        self._sound_streams: set[str] = set()  # ours: no played, no progress
        self._background: set[asyncio.Task[None]] = set()
        self.state: FeedbackState | None = None

    async def set_state(self, state: FeedbackState, **details: object) -> None:
        """Report ``state`` if it is a change (``State: ...`` at debug level)."""
        if state != self.state:
            self.state = state
            _LOGGER.debug("State: %s", state)
            await self._hook(state, **details)

    def set_state_soon(self, state: FeedbackState, **details: object) -> None:
        """``set_state`` from a sync callback (player, mic command)."""
        self._spawn(self.set_state(state, **details))

    def report_error(self, message: str) -> None:
        """A part of the satellite failed (e.g. the mic command): state ``error``."""
        self.set_state_soon(FeedbackState.ERROR, message=message)

    def play_sound(self, kind: str, repeat: int = 1) -> str | None:
        """Queue one of our own sounds; its (last) stream id, or None if off."""
        samples = self._sounds.get(kind)
        if samples is None:
            return None
        pcm = samples.tobytes()
        stream_id = None
        for _ in range(repeat):
            stream_id = f"{kind}-{next(self._ids)}"
            self._sound_streams.add(stream_id)
            self._player.begin(stream_id, RATE, 2, 1)
            self._player.feed(stream_id, pcm)
            self._player.end(stream_id)
        return stream_id

    def sound_ended(self, stream_id: str) -> bool:
        """Whether ``stream_id`` was one of our sounds (now over)."""
        if stream_id not in self._sound_streams:
            return False
        self._sound_streams.discard(stream_id)
        return True

    async def on_timer_event(self, event: Event) -> None:
        """Ring on ``timer-finished`` until cancelled (or the repeat limit)."""
        if TimerFinished.is_type(event.type):
            self.play_sound("timer", self._timer_repeat)
        elif TimerCancelled.is_type(event.type):
            self._player.flush(only=lambda stream_id: stream_id.startswith("timer-"))
        await self._hook("timer", event=event.type, **_timer_details(event))

    async def _hook(self, state: str, **details: object) -> None:
        if self._hooks is not None:
            await self._hooks.send(state, **details)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run ``coro`` from a sync callback, keeping a reference until done."""
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


# The fields of Wyoming's timer events, and the types they must have.
_TIMER_FIELDS: dict[str, type] = {
    "id": str,
    "total_seconds": int,
    "name": str,
    "start_hours": int,
    "start_minutes": int,
    "start_seconds": int,
    "is_active": bool,
}


def _timer_details(event: Event) -> dict[str, object]:
    """The timer fields of ``event`` for ``--event-command``, checked.

    The owner's data is not trusted to be well formed: unknown keys (an
    ``event`` or ``state`` key would collide with the line's own) and fields
    of the wrong type are left out, with a debug line, instead of ending the
    connection.
    """
    data = event.data if isinstance(event.data, dict) else {}
    details: dict[str, object] = {}
    for key, value in data.items():
        expected = _TIMER_FIELDS.get(key)
        if (
            expected is not None
            and isinstance(value, expected)
            and (expected is bool or not isinstance(value, bool))
        ):
            details[key] = value
        elif value is not None:
            _LOGGER.debug("Ignoring %s field %r=%r", event.type, key, value)
    return details
