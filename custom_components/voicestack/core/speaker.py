"""One Speaker per satellite: everything it says goes through here, one at a time.

The lock is held from the first chunk until the satellite reports ``played`` (the
sound really came out), so a voice response and an announcement can never
overlap. Audio is sent as it is produced: the first sentence plays while later
ones are still being synthesized. Each playback keeps its sentences with their
offsets in the audio, so an interrupted response can be resumed at a sentence.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
import logging
import time
from typing import Final

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event

from .wav import Pcm

_LOGGER = logging.getLogger(__name__)

FLUSH_EVENT: Final = "voicestack-flush"
CHUNK_FRAMES: Final = 1024  # as Home Assistant's own Wyoming satellite sends them


@dataclass(slots=True)
class SpokenSentence:
    """One sentence of a playback and where its audio starts."""

    index: int
    text: str
    start_sample: int  # offset in the stream, in the stream's own rate
    samples: int


@dataclass(slots=True)
class Playback:
    """What one ``speak`` call sent, and how it ended."""

    sentences: list[SpokenSentence] = field(default_factory=list)
    rate: int | None = None
    first_audio_at: float | None = None  # monotonic time the first chunk was sent
    outcome: str = "pending"  # played | stopped | timeout | lost | empty

    @property
    def seconds(self) -> float:
        """Total audio sent."""
        if self.rate is None:
            return 0.0
        return sum(s.samples for s in self.sentences) / self.rate


class Speaker:
    """Serializes playback on one satellite and waits for ``played``."""

    def __init__(
        self,
        send: Callable[[Event], Awaitable[bool]],
        supports: Callable[[str], bool],
        *,
        playback_timeout_s: float = 30.0,
        stop_grace_s: float = 2.0,
    ) -> None:
        """Talk to the satellite through ``send`` (False when disconnected).

        ``supports`` says whether the satellite accepts a VoiceStack extension
        event. ``playback_timeout_s`` is how long, beyond the audio's own duration, to
        wait for ``played`` before stopping playback.
        """
        self._send = send
        self._supports = supports
        self._playback_timeout_s = playback_timeout_s
        self._stop_grace_s = stop_grace_s
        self._lock = asyncio.Lock()
        self._played = asyncio.Event()
        self._streams_open = 0  # audio streams sent whose ``played`` is due
        self._lost = False
        self._stopped = False  # ``stop`` cut the current playback short
        self.last: Playback | None = None

    @property
    def busy(self) -> bool:
        """Something is being said, or waits for its turn."""
        return self._lock.locked()

    async def speak(self, parts: AsyncIterator[tuple[str, Pcm]]) -> Playback:
        """Play ``(sentence, audio)`` parts in order as they arrive.

        Returns once the satellite played them, or the playback timed out or the
        connection was lost.
        """
        async with self._lock:
            playback = Playback()
            self.last = playback
            self._lost = False
            self._stopped = False
            self._played.clear()
            try:
                return await self._play(parts, playback)
            except BaseException:
                # The producer failed (e.g. the TTS engine is down) or we were
                # cancelled: close what was opened so the next turn starts clean.
                if self._streams_open:
                    await self._end_stream()
                    await self.stop()
                    self._streams_open = 0
                raise

    async def _play(
        self, parts: AsyncIterator[tuple[str, Pcm]], playback: Playback
    ) -> Playback:
        sent_format: tuple[int, int, int] | None = None
        offset = 0
        async for text, pcm in parts:
            fmt = (pcm.rate, pcm.width, pcm.channels)
            if fmt != sent_format:
                if sent_format is not None:
                    await self._end_stream()
                if not await self._send(
                    AudioStart(
                        rate=pcm.rate, width=pcm.width, channels=pcm.channels
                    ).event()
                ):
                    playback.outcome = "lost"
                    return playback
                if sent_format is None:
                    # The playback's audio starts on the connection there is
                    # now: a loss before it (the satellite restarted while the
                    # first sentence was synthesized) is not this audio's.
                    self._lost = False
                self._streams_open += 1
                sent_format, playback.rate = fmt, pcm.rate
            playback.sentences.append(
                SpokenSentence(len(playback.sentences), text, offset, pcm.samples)
            )
            offset += pcm.samples
            if playback.first_audio_at is None:
                playback.first_audio_at = time.monotonic()
            if not await self._send_audio(pcm):
                playback.outcome = "lost"
                return playback
        if sent_format is None:
            playback.outcome = "empty"
            return playback
        await self._end_stream()
        playback.outcome = await self._wait_played(playback.seconds)
        return playback

    async def _send_audio(self, pcm: Pcm) -> bool:
        step = CHUNK_FRAMES * pcm.width * pcm.channels
        for start in range(0, len(pcm.audio), step):
            chunk = AudioChunk(
                rate=pcm.rate,
                width=pcm.width,
                channels=pcm.channels,
                audio=pcm.audio[start : start + step],
            )
            if not await self._send(chunk.event()):
                return False
        return True

    async def _end_stream(self) -> None:
        await self._send(AudioStop().event())

    async def _wait_played(self, audio_seconds: float) -> str:
        """Wait until every stream sent was played; stop it after the timeout."""
        try:
            async with asyncio.timeout(audio_seconds + self._playback_timeout_s):
                await self._all_played()
        except TimeoutError:
            _LOGGER.warning(
                "No 'played' %.1f s after the audio should have ended; stopping",
                self._playback_timeout_s,
            )
            await self.stop()
            return "timeout"
        if self._lost:
            return "lost"
        # Cut short by ``stop`` (a critical announcement): its ``played`` is the
        # flush's, not the end of the audio.
        return "stopped" if self._stopped else "played"

    async def _all_played(self) -> None:
        while self._streams_open > 0 and not self._lost:
            self._played.clear()
            await self._played.wait()

    async def stop(self) -> bool:
        """Stop what is playing now; True once the satellite confirmed it.

        Returns after the confirming ``played`` or after the grace time. A stock
        satellite has no way to stop playback: it is left to finish.
        """
        if self._streams_open == 0:
            return True
        if not self._supports(FLUSH_EVENT) or not await self._send(Event(FLUSH_EVENT)):
            return False
        self._stopped = True
        try:
            async with asyncio.timeout(self._stop_grace_s):
                await self._all_played()
        except TimeoutError:
            _LOGGER.warning(
                "Satellite did not confirm the stop within %s s", self._stop_grace_s
            )
            self._streams_open = 0
            return False
        return True

    def played(self) -> None:
        """The satellite sent ``played`` for one stream."""
        self._streams_open = max(0, self._streams_open - 1)
        self._played.set()

    def lost(self) -> None:
        """The connection dropped: nothing that was sent will be played."""
        self._streams_open = 0
        self._lost = True
        self._played.set()
