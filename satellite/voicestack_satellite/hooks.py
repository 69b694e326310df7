"""``--event-command``: one JSON line per state change, for LEDs and scripts.

The command is started once and kept running (no process per event); if it dies it
is restarted on the next state change, at most once per second.

The mic loop reports states, so a write must never wait for the command: a
command that stops reading (an LED script stuck on its device) would otherwise
freeze wake word detection once the pipe is full. Lines it has not read are
bounded (``MAX_UNREAD_BYTES``); beyond that new lines are dropped and counted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time

_LOGGER = logging.getLogger(__name__)

RESTART_INTERVAL_S = 1.0
MAX_UNREAD_BYTES = 64 * 1024  # written, not yet read by the command (beyond the pipe)


class EventCommand:
    """A long-running process receiving state changes on stdin."""

    def __init__(self, argv: list[str]) -> None:
        """``argv`` is run directly, without a shell."""
        self._argv = argv
        self._process: asyncio.subprocess.Process | None = None
        self._last_start = 0.0
        self.dropped = 0  # lines not written: the command was not reading

    async def send(self, state: str, **details: object) -> None:
        """Write ``{"state": ..., ...details}`` as one line; never waits for the reader."""
        line = json.dumps({"state": state, "time": time.time(), **details}) + "\n"
        process = await self._ensure_running()
        if process is None or process.stdin is None:
            return
        stdin = process.stdin
        if stdin.transport.get_write_buffer_size() > MAX_UNREAD_BYTES:
            self.dropped += 1
            if self.dropped & (self.dropped - 1) == 0:  # 1, 2, 4, 8, ...: no flood
                _LOGGER.warning(
                    "Event command is not reading its input: %d line(s) dropped",
                    self.dropped,
                )
            return
        if stdin.is_closing():  # it exited; restarted on a later state change
            _LOGGER.warning("Event command exited (code %s)", process.returncode)
            return
        stdin.write(line.encode())

    async def _ensure_running(self) -> asyncio.subprocess.Process | None:
        if self._process is not None and self._process.returncode is None:
            return self._process
        now = time.monotonic()
        if now - self._last_start < RESTART_INTERVAL_S:
            return None
        self._last_start = now
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self._argv, stdin=asyncio.subprocess.PIPE
            )
        except OSError as err:
            _LOGGER.error("Event command %r cannot start: %s", self._argv[0], err)
            self._process = None
        return self._process

    async def close(self) -> None:
        """Close stdin and wait for the process to finish."""
        if (process := self._process) is not None and process.returncode is None:
            assert process.stdin is not None
            process.stdin.close()
            try:
                await asyncio.wait_for(process.wait(), 2.0)
            except TimeoutError:
                process.kill()
                await process.wait()
