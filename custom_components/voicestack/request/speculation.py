"""Speculative speech-to-text: transcribe at a pause, before the request ends.

The satellite ends a request after ``end_of_speech_s`` of quiet (0.7 s by
default); only then did speech-to-text start, and whisper takes about as long
again. At a shorter pause (``SPECULATE_AFTER_S``, heard here by
``core/pauses.py`` on the audio as it comes) the audio so far is sent to the
pipeline's speech-to-text engine at once, in parallel with the pipeline (the
Wyoming engine opens one connection per stream). If the request then ends with
nothing but quiet after that point, this transcript is the request's, and the
pipeline is cancelled before it sends its audio's end, so the engine runs once.
If the speaker goes on, the speculation is dropped (its engine run is the
price) and the next pause starts another: at most one is in flight.

What speech-to-text hears differs only in the quiet at the end: the pipeline
would have sent the same audio and up to ``end_of_speech_s`` more of the room's
quiet. ``docs/benchmarks.md`` ("Speculative speech-to-text") measures how often
whisper's text differs for it (it did not on the phrases measured).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Final, Protocol

from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant

from ..core.pauses import Heard, PauseWatch
from ..core.request_audio import BYTES_PER_SECOND, MAX_REQUEST_S
from .speech_input import transcribe

# Quiet after speech that starts a speculation; 0 turns speculation off. Chosen
# by measurement (docs/benchmarks.md): whisper gets this much less than the
# endpointer's wait as a head start, and every pause in a sentence that is
# longer costs one engine run.
SPECULATE_AFTER_S: Final = 0.3
# Past this much audio no speculation is kept (the request's own limit).
MAX_AUDIO_BYTES: Final = int(MAX_REQUEST_S * BYTES_PER_SECOND)


@dataclass(slots=True)
class SpeculationCounts:
    """Speculations of one satellite since Home Assistant started (diagnostics)."""

    started: int = 0
    used: int = 0  # their transcript was the request's
    dropped: int = 0  # speech went on (or the request ended otherwise): wasted


class Hub(Protocol):
    """What a speculation needs of the satellite's hub (which imports this module)."""

    entry: ConfigEntry
    satellite_id: str
    stt_speculations: SpeculationCounts

    def pipeline(self) -> Pipeline:
        """The pipeline the satellite's requests use."""


class Speculation:
    """One request's speculative transcription; feed it the request's audio."""

    def __init__(
        self,
        hass: HomeAssistant,
        hub: Hub,
        pause_s: float = SPECULATE_AFTER_S,
    ) -> None:
        """Speculate at every ``pause_s`` of quiet after speech."""
        self._hass = hass
        self._hub = hub
        self._watch = PauseWatch(pause_s)
        self._audio: list[bytes] = []
        self._bytes = 0
        self._running: asyncio.Task[str] | None = None
        self.taken: asyncio.Task[str] | None = None

    @property
    def counts(self) -> SpeculationCounts:
        """The satellite's counters."""
        return self._hub.stt_speculations

    def feed(self, chunk: bytes) -> None:
        """The next chunk of the request's audio (in order, as it came)."""
        if self.taken is not None or self._bytes > MAX_AUDIO_BYTES:
            return
        self._audio.append(chunk)
        self._bytes += len(chunk)
        if self._bytes > MAX_AUDIO_BYTES:
            self.drop()
            return
        heard = self._watch.feed(chunk)
        if heard is Heard.PAUSED:
            self.drop()
            self.counts.started += 1
            self._running = self._hub.entry.async_create_background_task(
                self._hass,
                transcribe(self._hass, self._hub.pipeline(), replay(self._audio[:])),
                f"voicestack {self._hub.satellite_id} speculative transcript",
            )
        elif heard is Heard.RESUMED:
            self.drop()

    def take(self) -> bool:
        """The audio ended here: whether the running speculation holds all of it.

        If it does, it becomes ``taken`` (the caller's to await).
        """
        if self._running is None or not self._watch.paused:
            return False
        self.taken, self._running = self._running, None
        self.counts.used += 1
        return True

    def drop(self) -> None:
        """The running speculation (if any) is not the request's: cancel it."""
        if self._running is not None:
            self._running.cancel()
            self._running = None
            self.counts.dropped += 1

    def audio(self) -> AsyncIterator[bytes]:
        """All of the request's audio (for when ``taken`` failed)."""
        return replay(self._audio)


async def replay(chunks: Sequence[bytes]) -> AsyncIterator[bytes]:
    """``chunks`` as a stream that ends after the last."""
    for chunk in chunks:
        yield chunk
