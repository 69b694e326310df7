"""A live microphone for a satellite run with ``--mic-stdin``.

Feeds silence in real time and, on request, speech: a test can wait for the
satellite's reply before answering, like a person would, instead of guessing
timings into one long WAV.
"""

from __future__ import annotations

import asyncio
from collections import deque
from typing import IO, Self

from devstack import speech

CHUNK_S = 0.08  # the satellite's own chunk (1280 samples at 16 kHz)
CHUNK_BYTES = round(CHUNK_S * speech.RATE) * 2


class LiveMic:
    """Real-time PCM into a satellite's stdin; ``async with`` runs it."""

    def __init__(self, pipe: IO[bytes]) -> None:
        """``pipe`` is the satellite process's stdin."""
        self._pipe = pipe
        self._pending: deque[bytes] = deque()
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        """Start feeding silence."""
        self._task = asyncio.get_running_loop().create_task(self._feed())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Stop feeding."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    async def say(
        self, pcm: bytes, *, lead_s: float = 0.3, tail_s: float = 1.0
    ) -> None:
        """Speak ``pcm`` (16 kHz mono) now; return when it has been heard."""
        audio = speech.pad(pcm, lead_s, tail_s)
        self._pending.extend(
            audio[i : i + CHUNK_BYTES] for i in range(0, len(audio), CHUNK_BYTES)
        )
        self._idle.clear()
        await self._idle.wait()

    async def _feed(self) -> None:
        loop = asyncio.get_running_loop()
        silence = bytes(CHUNK_BYTES)
        due = loop.time()
        while True:
            chunk = self._pending.popleft() if self._pending else silence
            chunk = chunk.ljust(CHUNK_BYTES, b"\0")
            self._pipe.write(chunk)
            self._pipe.flush()
            if not self._pending:
                self._idle.set()
            due += CHUNK_S
            await asyncio.sleep(max(0.0, due - loop.time()))
