"""Read the PCM and format out of the WAV bytes a TTS engine returns."""

from __future__ import annotations

from dataclasses import dataclass
import io
import wave


class NotWavError(ValueError):
    """The TTS engine returned something that is not a PCM WAV."""


@dataclass(frozen=True, slots=True)
class Pcm:
    """Raw PCM with its format, as Wyoming's ``audio-start`` describes it."""

    audio: bytes
    rate: int
    width: int
    channels: int

    @property
    def samples(self) -> int:
        """Number of frames."""
        return len(self.audio) // (self.width * self.channels)

    @property
    def seconds(self) -> float:
        """Duration."""
        return self.samples / self.rate


def read_wav(data: bytes) -> Pcm:
    """Parse a WAV file held in memory."""
    try:
        with wave.open(io.BytesIO(data), "rb") as wav:
            return Pcm(
                audio=wav.readframes(wav.getnframes()),
                rate=wav.getframerate(),
                width=wav.getsampwidth(),
                channels=wav.getnchannels(),
            )
    except (wave.Error, EOFError) as err:
        raise NotWavError(f"not a PCM WAV: {err}") from err
