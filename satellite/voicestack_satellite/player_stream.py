"""One stream in the player: its audio from the oldest sample kept to the last fed.

Positions are samples at the player's rate; what was played stays for
``HISTORY_S``, so a resume can go back to a sentence's start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import logging

import numpy as np

from .audio import StreamConverter

_LOGGER = logging.getLogger(__name__)

HISTORY_S = 30.0  # audio kept behind the play position, for a resume


@dataclass(slots=True)
class PlayerStream:
    """One stream's audio, from ``start`` (older samples are let go) to ``end``.

    Positions are absolute samples at the player's rate since the stream began.
    The audio is kept as the chunks it was fed in (no copying as it grows), and
    a cursor remembers the chunk holding ``position``.
    """

    stream_id: str
    in_rate: int
    sample_bytes: int  # of one incoming sample, all its channels
    converter: StreamConverter
    chunks: list[np.ndarray] = field(default_factory=list)
    start: int = 0  # the first sample still kept (chunks[0][0])
    end: int = 0  # after the last sample fed
    position: int = 0
    ended: bool = False
    received: int = 0  # samples fed, in the stream's own rate
    reported: int = 0  # position of the last progress report (this stream's own)
    cursor: int = 0  # index of the chunk holding ``position`` ...
    cursor_at: int = 0  # ... and that chunk's first sample
    # What went to the device, in order (only when the sink keeps it): a pause
    # and a resume at another offset play audio twice, and it is heard twice.
    heard: list[np.ndarray] | None = None

    @property
    def unplayed(self) -> int:
        """Samples fed and not yet written."""
        return max(0, self.end - self.position)

    def add(self, samples: np.ndarray) -> None:
        """Samples fed after the others."""
        if len(samples):
            self.chunks.append(samples)
            self.end += len(samples)

    def block(self, count: int) -> np.ndarray:
        """Up to ``count`` samples from ``position`` (fewer at the end of what came)."""
        if self.position < self.cursor_at:  # a resume went back
            self.cursor, self.cursor_at = 0, self.start
        chunks = self.chunks
        while (
            self.cursor < len(chunks)
            and self.cursor_at + len(chunks[self.cursor]) <= self.position
        ):
            self.cursor_at += len(chunks[self.cursor])
            self.cursor += 1
        pieces: list[np.ndarray] = []
        index, at, position = self.cursor, self.cursor_at, self.position
        while count > 0 and index < len(chunks):
            piece = chunks[index][position - at : position - at + count]
            pieces.append(piece)
            count -= len(piece)
            position += len(piece)
            at += len(chunks[index])
            index += 1
        if len(pieces) == 1:
            return pieces[0]
        return np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.int16)

    def wrote(self, samples: np.ndarray, history: int) -> None:
        """``samples`` from ``position`` went to the device; keep ``history`` behind."""
        if self.heard is not None:
            self.heard.append(samples.copy())
        self.position += len(samples)
        # Let go of whole chunks more than ``history`` behind (never the cursor's).
        drop = 0
        while (
            drop < self.cursor
            and self.start + len(self.chunks[drop]) <= self.position - history
        ):
            self.start += len(self.chunks[drop])
            drop += 1
        if drop:
            del self.chunks[:drop]
            self.cursor -= drop

    def seek(self, position: int) -> None:
        """Play from ``position`` next (never before the oldest sample kept)."""
        if position < self.start:
            _LOGGER.warning(
                "Cannot resume at sample %d: only the last %.0f s are kept; "
                "resuming at sample %d",
                position,
                HISTORY_S,
                self.start,
            )
        # Progress is reported from here on, also when this went back.
        self.position = self.reported = max(self.start, position)

    def release(self) -> int:
        """Let go of the audio (the stream is dropped); how many samples it held."""
        held = self.end - self.start
        self.chunks.clear()
        self.heard = None
        self.start = self.cursor_at = self.end
        self.cursor = 0
        return held

    def played(self) -> np.ndarray:
        """What came out of the speaker, in the order it did (if kept)."""
        if not self.heard:
            return np.zeros(0, dtype=np.int16)
        return np.concatenate(self.heard)
