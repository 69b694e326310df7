"""WAV in memory: read what a TTS engine returns, write what is recorded."""

from __future__ import annotations

from dataclasses import dataclass


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
    """Parse a PCM WAV file held in memory.

    Home Assistant's TTS streams WAVs: their header is written before the length
    is known, so the sizes in it are 0 or 0xFFFFFFFF. Such audio runs from the
    data chunk to the end of the bytes, whatever the header says (the standard
    library's ``wave`` reads nothing from them).
    """
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WAVE":
        raise NotWavError("not a PCM WAV: no RIFF/WAVE header")
    fmt: tuple[int, int, int] | None = None
    offset = 12
    while offset + 8 <= len(data):
        chunk_id = data[offset : offset + 4]
        size = int.from_bytes(data[offset + 4 : offset + 8], "little")
        body = offset + 8
        if chunk_id == b"fmt ":
            fmt = _pcm_format(data[body : body + size])
        elif chunk_id == b"data":
            if fmt is None:
                raise NotWavError("not a PCM WAV: audio before its format")
            rate, width, channels = fmt
            end = len(data) if size in _STREAMED_SIZES else body + size
            audio = data[body:end]
            whole = len(audio) - len(audio) % (width * channels)
            return Pcm(audio[:whole], rate=rate, width=width, channels=channels)
        offset = body + size + size % 2
    raise NotWavError("not a PCM WAV: no data chunk")


def wav_bytes(pcm: Pcm) -> bytes:
    """A PCM WAV file of ``pcm``, header and data (a trailing partial frame is dropped).

    Written by hand rather than with ``wave`` so the bytes exist before any file
    does: the recording store writes them atomically.
    """
    frame = pcm.width * pcm.channels
    audio = pcm.audio[: pcm.samples * frame]
    fmt = b"".join(
        (
            _PCM.to_bytes(2, "little"),
            pcm.channels.to_bytes(2, "little"),
            pcm.rate.to_bytes(4, "little"),
            (pcm.rate * frame).to_bytes(4, "little"),
            frame.to_bytes(2, "little"),
            (pcm.width * 8).to_bytes(2, "little"),
        )
    )
    pad = b"\0" * (len(audio) % 2)  # RIFF chunks end on an even offset
    size = 4 + (8 + len(fmt)) + (8 + len(audio) + len(pad))
    return b"".join(
        (
            b"RIFF",
            size.to_bytes(4, "little"),
            b"WAVE",
            b"fmt ",
            len(fmt).to_bytes(4, "little"),
            fmt,
            b"data",
            len(audio).to_bytes(4, "little"),
            audio,
            pad,
        )
    )


# The sizes a streamed WAV's header carries (see read_wav).
_STREAMED_SIZES = frozenset({0, 0xFFFFFFFF})
_PCM = 1
_EXTENSIBLE = 0xFFFE


def _pcm_format(fmt: bytes) -> tuple[int, int, int]:
    """``(rate, sample width in bytes, channels)`` of a ``fmt `` chunk."""
    if len(fmt) < 16:
        raise NotWavError("not a PCM WAV: short format chunk")
    tag = int.from_bytes(fmt[0:2], "little")
    channels = int.from_bytes(fmt[2:4], "little")
    rate = int.from_bytes(fmt[4:8], "little")
    bits = int.from_bytes(fmt[14:16], "little")
    if (
        tag not in (_PCM, _EXTENSIBLE)
        or not channels
        or not rate
        or bits % 8
        or not bits
    ):
        raise NotWavError(f"not a PCM WAV: format {tag:#x}, {bits} bits")
    return rate, bits // 8, channels
