"""wyoming-satellite's per-event commands (``--detection-command`` ...) and ``--event-uri``.

Both follow the conversation with the owner (Home Assistant): the owner's peer
reports every event it reads or sends (``Peer.observer``), and each maps to
what wyoming-satellite would have done at that point:

- a command per event, run once per event with what wyoming-satellite writes to
  its stdin (the wake word's name, the transcript, the text to speak, the
  error's text, a timer's id or JSON), one after another in order, never on the
  mic's time: a queue of ``MAX_QUEUED`` events, beyond which they are dropped
  and counted, and ``COMMAND_TIMEOUT_S`` per command;
- the owner's events except audio, pings and VoiceStack's own, and the
  satellite's ``detection``, ``streaming-started/-stopped``, ``played`` and
  ``satellite-connected/-disconnected``, sent to the ``--event-uri`` service;
  while it is away, the newest ``BACKLOG`` wait for it.

``--event-command`` (hooks.py) is the same stream seen as states, for one
long-running program; these are its per-event aliases.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import json
import logging

from wyoming.event import Event
from wyoming.satellite import (
    SatelliteConnected,
    SatelliteDisconnected,
    StreamingStarted,
    StreamingStopped,
)

from .peer import Peer
from .service_link import ServiceLink

_LOGGER = logging.getLogger(__name__)

MAX_QUEUED = 32
BACKLOG = 64  # events kept for the event service while it is away
COMMAND_TIMEOUT_S = 30.0

# The owner's event -> the hook wyoming-satellite runs for it.
FROM_OWNER = {
    "detect": "detect",
    "voice-started": "stt_start",
    "voice-stopped": "stt_stop",
    "transcript": "transcript",
    "synthesize": "synthesize",
    "audio-start": "tts_start",
    "audio-stop": "tts_stop",
    "error": "error",
    "timer-started": "timer_started",
    "timer-updated": "timer_updated",
    "timer-cancelled": "timer_cancelled",
    "timer-finished": "timer_finished",
}
# The satellite's event to the owner -> the hook, and what the event service gets.
TO_OWNER = {
    "detection": "detection",
    "audio-start": "streaming_start",
    "audio-stop": "streaming_stop",
    "played": "tts_played",
}
_SERVICE_GETS = {
    "audio-start": StreamingStarted(),
    "audio-stop": StreamingStopped(),
}
_NOT_FORWARDED = {"audio-chunk", "ping", "pong", "describe", "info"}
# What the command reads on stdin: a field of the event, or the event as JSON.
_STDIN_FIELD = {
    "detection": "name",
    "transcript": "text",
    "synthesize": "text",
    "error": "text",
    "timer_cancelled": "id",
    "timer_finished": "id",
}
_STDIN_JSON = {"timer_started", "timer_updated"}


class EventHooks:
    """Runs the per-event commands and feeds the event service."""

    def __init__(
        self,
        commands: dict[str, list[str]],
        event_service: tuple[str, int] | None,
        owner: Callable[[], Peer | None],
        *,
        write_timeout_s: float = 5.0,
    ) -> None:
        """``owner`` tells whose events count (the peer that runs the satellite)."""
        self._commands = commands
        self._owner = owner
        self._connected: Peer | None = None
        self._queue: asyncio.Queue[tuple[list[str], bytes]] = asyncio.Queue(MAX_QUEUED)
        self._runner: asyncio.Task[None] | None = None
        self.dropped = 0
        self._link = (
            None
            if event_service is None
            else ServiceLink(
                "event service",
                event_service,
                on_connect=lambda peer: None,
                write_timeout_s=write_timeout_s,
                backlog=BACKLOG,
            )
        )

    def start(self) -> None:
        """Connect to the event service; run ``--startup-command``."""
        self._runner = asyncio.get_running_loop().create_task(self._run_commands())
        if self._link is not None:
            self._link.start()
        self._emit("startup", None, None)

    def observe(self, peer: Peer, direction: str, event: Event | None) -> None:
        """A peer read (``in``) or sent (``out``) ``event``, or closed (``closed``).

        Handled on the loop's next turn: a ``run-satellite`` read has made its
        peer the owner by then.
        """
        asyncio.get_running_loop().call_soon(self._observe, peer, direction, event)

    def _observe(self, peer: Peer, direction: str, event: Event | None) -> None:
        if direction == "closed" or event is None:
            if peer is self._connected:
                self._connected = None
                self._emit("disconnected", SatelliteDisconnected().event(), None)
            return
        if peer is not self._owner():
            return
        if peer is not self._connected:
            self._connected = peer
            self._emit("connected", SatelliteConnected().event(), None)
        kind = event.type
        if direction == "in":
            forward = (
                None
                if kind in _NOT_FORWARDED or kind.startswith("voicestack-")
                else event
            )
            self._emit(FROM_OWNER.get(kind), forward, event)
        elif kind in TO_OWNER:
            own = _SERVICE_GETS.get(kind)
            self._emit(TO_OWNER[kind], event if own is None else own.event(), event)

    def _emit(
        self, hook: str | None, forward: Event | None, event: Event | None
    ) -> None:
        if forward is not None and self._link is not None:
            self._link.send(forward)
        if hook is None or (argv := self._commands.get(hook)) is None:
            return
        try:
            self._queue.put_nowait((argv, _stdin(hook, event)))
        except asyncio.QueueFull:
            self.dropped += 1
            _LOGGER.warning(
                "--%s-command: %d event(s) dropped (commands too slow)",
                hook.replace("_", "-"),
                self.dropped,
            )

    async def _run_commands(self) -> None:
        while True:
            argv, stdin = await self._queue.get()
            await _run(argv, stdin)

    async def close(self) -> None:
        """Stop running commands; close the event service connection."""
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.wait([self._runner])
        if self._link is not None:
            await self._link.close()


def _stdin(hook: str, event: Event | None) -> bytes:
    """What wyoming-satellite writes to the command's stdin for ``hook``."""
    if event is None:
        return b""
    if hook in _STDIN_JSON:
        return json.dumps(event.to_dict(), ensure_ascii=False).encode()
    value = event.data.get(_STDIN_FIELD.get(hook, ""))
    return b"" if value is None else str(value).encode()


async def _run(argv: list[str], stdin: bytes) -> None:
    try:
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE
        )
    except OSError as err:
        _LOGGER.error("Event hook %r cannot start: %s", argv[0], err)
        return
    try:
        await asyncio.wait_for(process.communicate(stdin), COMMAND_TIMEOUT_S)
    except TimeoutError:
        _LOGGER.warning(
            "Event hook %r ran over %g s: killed", argv[0], COMMAND_TIMEOUT_S
        )
        process.kill()
        await process.wait()
    except asyncio.CancelledError:
        process.kill()
        await process.wait()
        raise
