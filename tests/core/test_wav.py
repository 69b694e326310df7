"""Reading the WAVs TTS engines and Home Assistant's TTS streams return."""

from __future__ import annotations

import io
import wave

import pytest

from custom_components.voicestack.core.wav import NotWavError, read_wav

AUDIO = bytes(range(200)) * 10  # 1000 frames of 16-bit mono


def a_wav(audio: bytes = AUDIO, rate: int = 22050) -> bytes:
    """A complete WAV, its sizes known."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setframerate(rate)
        wav.setsampwidth(2)
        wav.setnchannels(1)
        wav.writeframes(audio)
    return out.getvalue()


def streamed(declared: int, audio: bytes = AUDIO) -> bytes:
    """A WAV as Home Assistant streams it: header first, its sizes unknown."""
    header = bytearray(a_wav(b""))
    data_at = header.index(b"data")
    if declared:
        header[4:8] = declared.to_bytes(4, "little")
    header[data_at + 4 : data_at + 8] = declared.to_bytes(4, "little")
    return bytes(header) + audio


def test_a_complete_wav_gives_its_audio_and_format() -> None:
    pcm = read_wav(a_wav())
    assert (pcm.audio, pcm.rate, pcm.width, pcm.channels) == (AUDIO, 22050, 2, 1)
    assert pcm.seconds == pytest.approx(1000 / 22050)


@pytest.mark.parametrize("declared", [0, 0xFFFFFFFF])
def test_a_streamed_wav_gives_everything_after_its_header(declared: int) -> None:
    assert read_wav(streamed(declared)).audio == AUDIO


def test_a_streamed_wav_cut_mid_frame_drops_the_half_frame() -> None:
    assert read_wav(streamed(0, AUDIO + b"\x01")).audio == AUDIO


def test_a_chunk_before_the_data_is_skipped() -> None:
    wav = a_wav()
    data_at = wav.index(b"data")
    listed = b"LIST" + (3).to_bytes(4, "little") + b"abc\x00"  # odd size: padded
    assert read_wav(wav[:data_at] + listed + wav[data_at:]).audio == AUDIO


def test_a_wav_that_is_not_pcm_is_refused() -> None:
    wav = bytearray(a_wav())
    wav[20:22] = (3).to_bytes(2, "little")  # IEEE float
    with pytest.raises(NotWavError, match="format 0x3"):
        read_wav(bytes(wav))


@pytest.mark.parametrize(
    "data", [b"", b"ID3\x04mp3 frames", b"RIFF\x00\x00\x00\x00WAVE"]
)
def test_what_is_not_a_wav_is_refused(data: bytes) -> None:
    with pytest.raises(NotWavError, match="not a PCM WAV"):
        read_wav(data)
