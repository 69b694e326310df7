"""One Speaker per satellite: everything it says goes through here, one at a time.

The lock is held from the first chunk until the satellite reports ``played`` (the
sound really came out), so a voice response and an announcement can never
overlap. Audio is sent as it is produced: the first sentence plays while later
ones are still being synthesized. Each playback keeps its sentences with their
offsets in the audio, so an interrupted response can be resumed at a sentence.

Every stream gets an id in its ``audio-start`` (``stream``), which a
voicestack-satellite echoes in ``played`` together with how the stream ended
(``state``: played to its end, or ``flushed``): a ``played`` counts only for a
stream this Speaker has open, so the late ``played`` of a stream from before a
reconnect can never end the current playback, and a stream the satellite cut
short is not reported as played. A stock satellite's bare ``played`` ends the
oldest open stream, as Wyoming intends.

Audio is sent at most ``lead_s`` ahead of the time it can have been played: the
satellite's player is bounded (docs/satellite.md, "Limits") and stops reading
when full, and a ``ping`` or ``voicestack-flush`` behind a backlog of audio
would wait for it to play.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
import itertools
import logging
import secrets
from typing import Final

from wyoming.audio import AudioChunk, AudioStop
from wyoming.event import Event

from voicestack_protocol import FLUSH, FLUSHED, PLAYED, audio_start_event, flush_event

from .clock import Clock, LoopClock
from .wav import Pcm

_LOGGER = logging.getLogger(__name__)

CHUNK_FRAMES: Final = 1024  # as Home Assistant's own Wyoming satellite sends them
LEAD_S: Final = 20.0  # audio sent ahead of playback, at most (satellite: 300 s)


@dataclass(slots=True)
class SpokenSentence:
    """One sentence of a playback and where its audio starts."""

    index: int
    text: str
    start_sample: int  # offset in the stream, in the stream's own rate
    samples: int


class PlaybackOutcome(StrEnum):
    """How one playback ended (a string: events and logs carry it as is)."""

    PENDING = "pending"  # still playing
    PLAYED = PLAYED  # to its end, confirmed by the satellite
    STOPPED = "stopped"  # cut short by ``stop`` (a critical announcement)
    FLUSHED = FLUSHED  # cut short by the satellite itself (a wake word)
    TIMEOUT = "timeout"  # no ``played`` in time
    LOST = "lost"  # the connection dropped
    EMPTY = "empty"  # nothing to play


@dataclass(slots=True)
class Playback:
    """What one ``play`` call sent, and how it ended."""

    sentences: list[SpokenSentence] = field(default_factory=list)
    rate: int | None = None
    first_audio_at: float | None = None  # clock time the first chunk was sent
    outcome: PlaybackOutcome = PlaybackOutcome.PENDING
    streams: list[str] = field(default_factory=list)  # ids sent, in order
    interruptible: bool = False  # speech may pause it (barge-in)

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
        lead_s: float = LEAD_S,
        clock: Clock | None = None,
    ) -> None:
        """Talk to the satellite through ``send`` (False when disconnected).

        ``supports`` says whether the satellite accepts a VoiceStack extension
        event. ``playback_timeout_s`` is how long, beyond the audio's own duration, to
        wait for ``played`` before stopping playback. ``lead_s`` is how far audio
        may be sent ahead of the time since the first chunk, on ``clock``.
        """
        self._send = send
        self._supports = supports
        self._playback_timeout_s = playback_timeout_s
        self._stop_grace_s = stop_grace_s
        self._lead_s = lead_s
        self._clock = clock or LoopClock()
        self._lock = asyncio.Lock()
        self._played = asyncio.Event()
        # Streams sent whose ``played`` is due, oldest first.
        self._open: dict[str, None] = {}
        # A new id for every stream: a run prefix, so a restarted Home Assistant
        # never reuses one the satellite may still report.
        self._ids = (f"{secrets.token_hex(4)}-{n}" for n in itertools.count(1))
        self._lost = False
        self._stopped = False  # ``stop`` cut the current playback short
        self._flushed = False  # the satellite dropped a stream before its end
        self._sent_s = 0.0  # seconds of audio sent in the current playback
        self._extra_s = 0.0  # added to the wait for ``played`` (``extend``)
        self._deadline: asyncio.Timeout | None = None  # that wait, while it runs
        self.last: Playback | None = None

    @property
    def busy(self) -> bool:
        """Something is being said, or waits for its turn."""
        return self._lock.locked()

    async def play(
        self, parts: AsyncIterator[tuple[str, Pcm]], *, interruptible: bool = False
    ) -> Playback:
        """Play ``(sentence, audio)`` parts in order as they arrive.

        ``interruptible``: the satellite may pause it on speech (a voice
        response; its streams are marked in their ``audio-start``). Returns once
        the satellite played them, or the playback timed out or the connection
        was lost.
        """
        async with self._lock:
            playback = Playback(interruptible=interruptible)
            self.last = playback
            self._lost = False
            self._stopped = False
            self._flushed = False
            self._sent_s = 0.0
            self._extra_s = 0.0
            self._played.clear()
            try:
                return await self._play(parts, playback)
            except BaseException:
                # The producer failed (e.g. the TTS engine is down) or we were
                # cancelled: close what was opened so the next turn starts clean.
                if self._open:
                    await self._end_stream()
                    await self.stop()
                    self._open.clear()
                # Not left "pending": flushed if the satellite said so (a
                # barge-in's flush came first), else cut short here.
                if playback.outcome is PlaybackOutcome.PENDING:
                    playback.outcome = (
                        PlaybackOutcome.FLUSHED
                        if self._flushed
                        else PlaybackOutcome.STOPPED
                    )
                raise

    async def _play(
        self, parts: AsyncIterator[tuple[str, Pcm]], playback: Playback
    ) -> Playback:
        sent_format: tuple[int, int, int] | None = None
        offset = 0
        async for text, pcm in parts:
            if self._stopped:  # cut short: the rest is not said
                break
            fmt = (pcm.rate, pcm.width, pcm.channels)
            if fmt != sent_format:
                if sent_format is not None:
                    await self._end_stream()
                if not await self._start_stream(pcm, playback):
                    playback.outcome = PlaybackOutcome.LOST
                    return playback
                if sent_format is None:
                    # The playback's audio starts on the connection there is
                    # now: a loss before it (the satellite restarted while the
                    # first sentence was synthesized) is not this audio's.
                    self._lost = False
                sent_format, playback.rate = fmt, pcm.rate
            playback.sentences.append(
                SpokenSentence(len(playback.sentences), text, offset, pcm.samples)
            )
            offset += pcm.samples
            if playback.first_audio_at is None:
                playback.first_audio_at = self._clock.now()
            if not await self._send_audio(pcm, playback):
                playback.outcome = PlaybackOutcome.LOST
                return playback
        if sent_format is None:
            playback.outcome = PlaybackOutcome.EMPTY
            return playback
        await self._end_stream()
        playback.outcome = await self._wait_played(playback.seconds)
        return playback

    async def _start_stream(self, pcm: Pcm, playback: Playback) -> bool:
        """Send ``audio-start`` with a new stream id; False if disconnected."""
        stream_id = next(self._ids)
        event = audio_start_event(
            pcm.rate,
            pcm.width,
            pcm.channels,
            stream_id,
            barge_in=playback.interruptible,
        )
        if not await self._send(event):
            return False
        self._open[stream_id] = None
        playback.streams.append(stream_id)
        return True

    async def _send_audio(self, pcm: Pcm, playback: Playback) -> bool:
        """Send ``pcm`` in chunks; False if disconnected. Stops when stopped."""
        step = CHUNK_FRAMES * pcm.width * pcm.channels
        for start in range(0, len(pcm.audio), step):
            await self._keep_lead(playback)
            if self._stopped:
                return True
            chunk = AudioChunk(
                rate=pcm.rate,
                width=pcm.width,
                channels=pcm.channels,
                audio=pcm.audio[start : start + step],
            )
            if not await self._send(chunk.event()):
                return False
            self._sent_s += chunk.seconds
        return True

    async def _keep_lead(self, playback: Playback) -> None:
        """Wait until the audio sent is at most ``lead_s`` ahead of playback.

        Playback cannot have started before the first chunk was sent, so this
        bounds what the satellite holds however fast the speech engine is.
        """
        assert playback.first_audio_at is not None
        elapsed = self._clock.now() - playback.first_audio_at
        ahead = self._sent_s - elapsed
        if ahead > self._lead_s:
            await _sleep(self._clock, ahead - self._lead_s)

    async def _end_stream(self) -> None:
        await self._send(AudioStop().event())

    async def _wait_played(self, audio_seconds: float) -> PlaybackOutcome:
        """Wait until every stream sent was played; stop it after the timeout."""
        try:
            async with asyncio.timeout(
                audio_seconds + self._playback_timeout_s + self._extra_s
            ) as self._deadline:
                await self._all_played()
        except TimeoutError:
            _LOGGER.warning(
                "No 'played' %.1f s after the audio should have ended; stopping",
                self._playback_timeout_s,
            )
            await self.stop()
            return PlaybackOutcome.TIMEOUT
        finally:
            self._deadline = None
        if self._lost:
            return PlaybackOutcome.LOST
        # Cut short by ``stop`` (a critical announcement): its ``played`` is the
        # flush's, not the end of the audio.
        if self._stopped:
            return PlaybackOutcome.STOPPED
        return PlaybackOutcome.FLUSHED if self._flushed else PlaybackOutcome.PLAYED

    async def _all_played(self) -> None:
        while self._open and not self._lost:
            self._played.clear()
            await self._played.wait()

    def extend(self, seconds: float) -> None:
        """The current playback lasts ``seconds`` longer than its audio.

        A pause and a resume that went back: its wait for ``played`` grows.
        """
        if seconds <= 0 or not self._lock.locked():
            return
        self._extra_s += seconds
        if (deadline := self._deadline) is not None and (
            when := deadline.when()
        ) is not None:
            deadline.reschedule(when + seconds)

    async def stop(self) -> bool:
        """Stop what is playing now; True once the satellite confirmed it.

        Returns after the confirming ``played`` or after the grace time. A stock
        satellite has no way to stop playback: it is left to finish.
        """
        if not self._open:
            return True
        if not self._supports(FLUSH) or not await self._send(flush_event()):
            return False
        self._stopped = True
        try:
            async with asyncio.timeout(self._stop_grace_s):
                await self._all_played()
        except TimeoutError:
            _LOGGER.warning(
                "Satellite did not confirm the stop within %s s", self._stop_grace_s
            )
            self._open.clear()
            return False
        return True

    def played(self, stream_id: str | None = None, state: str | None = None) -> None:
        """The satellite sent ``played`` for stream ``stream_id``, which ended ``state``.

        Without an id (a stock satellite) it is the oldest open stream's, played
        to its end. An id this Speaker has no open stream for is a late report
        of a stream from before (a reconnect, a stop that timed out): ignored.
        """
        if stream_id is None:
            if self._open:
                del self._open[next(iter(self._open))]
        elif stream_id in self._open:
            del self._open[stream_id]
            if state == FLUSHED:
                self._flushed = True
        else:
            _LOGGER.debug("Ignoring 'played' of stream %s: not playing", stream_id)
            return
        self._played.set()

    def lost(self) -> None:
        """The connection dropped: nothing that was sent will be played."""
        self._open.clear()
        self._lost = True
        self._played.set()


async def _sleep(clock: Clock, seconds: float) -> None:
    """Sleep on ``clock`` (tests move a manual clock instead of waiting)."""
    done: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def wake() -> None:
        if not done.done():
            done.set_result(None)

    timer = clock.call_later(seconds, wake)
    try:
        await done
    finally:
        timer.cancel()
