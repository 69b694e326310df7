"""Satellite parts without sockets: preroll splice, settings file, conversion, player."""

from __future__ import annotations

import asyncio
from pathlib import Path
import shlex

import numpy as np
import pytest

from devstack import speech
from tests.satellite.playback_log import PlaybackLog
from voicestack_satellite.audio import StreamConverter
from voicestack_satellite.endpoint import Endpointer
from voicestack_satellite.hooks import MAX_UNREAD_BYTES, EventCommand
from voicestack_satellite.player import Player
from voicestack_satellite.preroll import PrerollBuffer
from voicestack_satellite.settings import SettingsError, load


def test_preroll_splice_is_sample_exact() -> None:
    """Preroll up to the cut, then live audio: a continuous ramp, no gap or repeat."""
    ramp = np.arange(10 * 1280, dtype=np.int64) % 30000
    buffer = PrerollBuffer(capacity=16000)
    for start in range(0, 6 * 1280, 1280):
        buffer.append(ramp[start : start + 1280].astype(np.int16))
    cut = buffer.end
    sent = [buffer.since(cut - 3000)]
    for start in range(6 * 1280, 10 * 1280, 1280):
        live = ramp[start : start + 1280].astype(np.int16)
        buffer.append(live)
        sent.append(live)
    stream = np.concatenate(sent).astype(np.int64)
    assert len(stream) == 3000 + 4 * 1280
    assert np.array_equal(stream, ramp[cut - 3000 :])


def test_preroll_is_clipped_to_what_is_held() -> None:
    buffer = PrerollBuffer(capacity=100)
    buffer.append(np.arange(250, dtype=np.int16))
    assert np.array_equal(buffer.since(0), np.arange(150, 250, dtype=np.int16))
    assert len(buffer.since(buffer.end)) == 0


def test_config_file_and_command_line_merge(tmp_path: Path) -> None:
    wav = tmp_path / "mic.wav"
    wav.write_bytes(b"")
    config = tmp_path / "satellite.toml"
    config.write_text(
        f'name = "kitchen"\nmic-file = "{wav}"\nwake-word = ["okay_nabu"]\n'
        'snd-command = "aplay -r 22050 -c 1 -f S16_LE -t raw"\n'
    )
    settings = load(["--config", str(config), "--area", "Kitchen"])
    assert settings.name == "kitchen"
    assert settings.area == "Kitchen"
    assert settings.wake_words == ["okay_nabu"]
    assert settings.snd_command == [
        "aplay",
        "-r",
        "22050",
        "-c",
        "1",
        "-f",
        "S16_LE",
        "-t",
        "raw",
    ]


def test_config_file_errors_are_clear(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("name = \n")
    with pytest.raises(SettingsError, match="not valid TOML"):
        load(["--config", str(config)])
    config.write_text('name = "x"\nmic-stdin = true\nlaser = 1\n')
    with pytest.raises(SettingsError, match="unknown option"):
        load(["--config", str(config)])


def test_stream_conversion_has_no_seams() -> None:
    """Converting in chunks equals converting at once (same length, no clicks).

    The tone starts and stops at full slope; a band-limited resampler rings
    there (3 % over the bound in its first two samples), which is no seam: the
    slope is checked inside the stream, and the chunks against one conversion.
    """
    tone = (np.sin(2 * np.pi * 300 * np.arange(16000) / 16000) * 8000).astype(np.int16)
    chunked = StreamConverter(16000, 2, 1, 22050)
    parts = [chunked.convert(tone[i : i + 777].tobytes()) for i in range(0, 16000, 777)]
    parts.append(chunked.convert(b"", last=True))
    out = np.concatenate(parts).astype(np.int64)
    assert abs(len(out) - 22050) <= 1
    assert np.max(np.abs(np.diff(out[4:-4]))) < 8000 * 2 * np.pi * 300 / 22050 * 1.1
    whole = StreamConverter(16000, 2, 1, 22050).convert(tone.tobytes(), last=True)
    assert np.max(np.abs(out - whole)) <= 4  # soxr dithers to 16 bits


def test_shipped_service_and_config_are_valid() -> None:
    """The systemd unit's ExecStart with the example config parses cleanly."""
    systemd = Path(__file__).parents[2] / "satellite" / "systemd"
    unit = (systemd / "voicestack-satellite.service").read_text()
    exec_start = next(
        line.split("=", 1)[1]
        for line in unit.splitlines()
        if line.startswith("ExecStart=")
    )
    program, *argv = shlex.split(exec_start)
    assert program.endswith("/bin/voicestack-satellite")
    assert argv == ["--config", "/etc/voicestack/satellite.toml"]
    settings = load(["--config", str(systemd / "satellite.toml")])
    assert settings.mic_command is not None
    assert settings.mic_command[0] == "arecord"
    assert settings.snd_command is not None
    assert settings.snd_command[0] == "aplay"
    assert settings.port == 10700
    assert "\nUser=voicestack\n" in unit
    assert "\nRestart=always\n" in unit


def _feed(endpointer: Endpointer, audio: np.ndarray) -> float | None:
    """Seconds into ``audio`` at which the endpointer fires, in 80 ms chunks."""
    for start in range(0, len(audio), 1280):
        if endpointer.process(audio[start : start + 1280]):
            return (start + 1280) / 16000
    return None


def test_endpointer_ends_soon_after_speech_and_not_before() -> None:
    words = np.frombuffer(speech.speak("Turn on the kitchen lights."), np.int16)
    end_of_words = np.flatnonzero(np.abs(words) > 300)[-1] / 16000
    endpointer = Endpointer(0.5)
    endpointer.start(np.zeros(16000, np.int16))
    audio = np.concatenate([np.zeros(4000, np.int16), words, np.zeros(32000, np.int16)])

    fired = _feed(endpointer, audio)

    assert fired is not None
    assert 0.5 <= fired - 0.25 - end_of_words <= 0.5 + 0.2  # 250 ms lead-in


def _noise(seconds: float, rms: float, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.normal(0.0, rms, round(seconds * 16000))


def test_endpointer_follows_the_room_noise_and_ignores_a_cough() -> None:
    words = np.frombuffer(speech.speak("Turn on the kitchen lights."), np.int16)
    fan = _noise(6.0, 300)  # a steady fan, about -40 dBFS
    room = fan.copy()
    room[8000 : 8000 + len(words)] += words
    endpointer = Endpointer(0.5)
    endpointer.start(fan[:16000].astype(np.int16))
    cough = fan[:16000].copy()
    cough[4000:5600] += 8000  # 100 ms: not a request

    assert _feed(endpointer, cough.astype(np.int16)) is None
    fired = _feed(endpointer, np.clip(room, -32768, 32767).astype(np.int16))
    assert fired is not None
    assert fired < (8000 + len(words)) / 16000 + 1.0


def test_endpointer_never_ends_while_it_stays_loud() -> None:
    endpointer = Endpointer(0.5)
    endpointer.start(np.zeros(16000, np.int16))
    tv = _noise(5.0, 3000).astype(np.int16)  # loud and steady: the VAD decides
    assert _feed(endpointer, tv) is None


def _unheard_at(endpointer: Endpointer, audio: np.ndarray) -> float | None:
    """Seconds into ``audio`` after which ``unheard`` holds, in 80 ms mic chunks."""
    for start in range(0, len(audio), 1280):
        endpointer.process(audio[start : start + 1280])
        if endpointer.unheard:
            return (start + 1280) / 16000
    return None


def test_nobody_speaking_after_the_wake_word_is_unheard_at_the_timeout() -> None:
    fan = _noise(8.0, 300).astype(np.int16)  # the room, as before the wake word
    endpointer = Endpointer(0.7, no_speech_s=5.0)
    endpointer.start(fan[:16000])

    # The mic's samples are the clock: 5 s of room sound, to the chunk.
    assert _unheard_at(endpointer, fan[16000:]) == pytest.approx(5.04)


def test_speech_after_the_wake_word_is_never_unheard() -> None:
    words = np.frombuffer(speech.speak("Thank you."), np.int16)
    onset = int(np.flatnonzero(np.abs(words) > 300)[0])
    for starts_s in (1.0, 4.9):  # early, and still starting at the timeout
        room = _noise(9.0, 300)
        at = round(starts_s * 16000) - onset
        room[at : at + len(words)] += words
        endpointer = Endpointer(0.7, no_speech_s=5.0)
        endpointer.start(_noise(1.0, 300, seed=2).astype(np.int16))
        heard = np.clip(room, -32768, 32767).astype(np.int16)
        assert _unheard_at(endpointer, heard) is None, starts_s


def test_a_cough_is_no_speech_and_no_timeout_waits_forever() -> None:
    room = _noise(7.0, 300)
    room[16000:17600] += 8000  # 100 ms
    cough = np.clip(room, -32768, 32767).astype(np.int16)
    endpointer = Endpointer(0.7, no_speech_s=5.0)
    endpointer.start(_noise(1.0, 300, seed=2).astype(np.int16))
    assert _unheard_at(endpointer, cough) == pytest.approx(5.04)
    endpointer = Endpointer(0.7)  # no timeout: the peer or --max-request decides
    endpointer.start(_noise(1.0, 300, seed=2).astype(np.int16))
    assert _unheard_at(endpointer, cough) is None


class _NullSink:
    """A sound card that takes everything (the player paces itself)."""

    keeps_played = False

    async def write(self, samples: np.ndarray) -> None:
        """Drop the samples."""

    def stream_ended(self, stream_id: str, samples: np.ndarray) -> None:
        """Nothing to keep."""

    async def close(self) -> None:
        """Nothing to close."""


async def test_progress_after_a_flush_starts_with_the_next_stream() -> None:
    """The next stream reports after 0.1 s of itself, not after the flushed one's.

    The position of the last report was shared between streams.
    """
    rate = 16000
    log = PlaybackLog()
    player = Player(_NullSink(), rate)
    player.subscribe(log)
    player.start()
    try:
        second = bytes(rate * 2)  # one second of 16-bit silence
        player.begin("long", rate, 2, 1)
        player.feed("long", second * 3)
        player.end("long")
        async with asyncio.timeout(5):
            while not any(
                r.stream_id == "long" and r.played >= rate for r in log.progress
            ):
                await asyncio.sleep(0.01)
        player.flush()
        player.begin("next", rate, 2, 1)
        player.feed("next", second)
        player.end("next")
        async with asyncio.timeout(5):
            while ("next", rate, rate, "played") not in log.progress:
                await asyncio.sleep(0.01)
    finally:
        await player.close()

    playing = [r.played for r in log.progress if r.stream_id == "next"]
    assert playing[0] <= 0.2 * rate  # its own first 0.1 s, not the flushed 1 s
    assert len(playing) >= 5


async def test_an_event_command_that_does_not_read_never_blocks_a_state_change() -> (
    None
):
    """The mic loop reports states: a stuck LED script must not freeze it.

    ``sleep`` never reads its stdin; once the pipe and the bound are full, lines
    are dropped and counted instead of waiting (before: ``send`` waited forever
    once the pipe's 64 KiB were full).
    """
    hooks = EventCommand(["sleep", "60"])
    try:
        line_bytes = 80
        for _ in range(4 * (64 * 1024 + MAX_UNREAD_BYTES) // line_bytes):
            await asyncio.wait_for(hooks.send("listening", name="x" * 20), 5)
        assert hooks.dropped > 0
    finally:
        await hooks.close()
