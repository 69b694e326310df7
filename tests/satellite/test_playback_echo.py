"""What came out of the speaker, when it was done, and what the mic then hears.

- The sound file holds exactly what was played, in order, across pause and
  resume at another offset.
- ``played`` waits for the audio the sound command still holds (aplay's start
  delay): tested in virtual time against a model of the card, the one part that
  cannot run here.
- The reply's own echo in the mic starts no follow-up request: tested with a
  real satellite whose mic carries the played reply 20 dB down.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
import wave

import numpy as np
import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from devstack import speech
from devstack.satellite import read_until, run_satellite, satellite
from tests.live_mic import LiveMic
from tests.satellite import virtual_time
from tests.satellite.owner import audio_of, send_stream, take_ownership
from tests.satellite.playback_log import PlaybackLog
from voicestack_satellite.latency import sound_command_latency_s
from voicestack_satellite.player import BLOCK_S, Player
from voicestack_satellite.settings import SettingsError, load

RATE = 16000
CHUNK = 1280  # the mic's chunk (80 ms)

# -- the sound file holds what was heard -----------------------------------------


def _ramp(samples: int) -> np.ndarray:
    """Every sample a different value: a sample's value tells where it came from."""
    return (np.arange(samples) - samples // 2).astype(np.int16)


async def _wait_progress(client: AsyncTcpClient, at_least: int) -> None:
    while True:
        event, _ = await read_until(client, "voicestack-progress", 10)
        if event.data["played"] >= at_least:
            return


def _read_samples(path: Path) -> np.ndarray:
    with wave.open(str(path), "rb") as wav:
        assert wav.getframerate() == RATE
        return np.frombuffer(wav.readframes(wav.getnframes()), dtype=np.int16)


@pytest.mark.parametrize("offset", [8000, 40000], ids=["back", "ahead"])
async def test_the_sound_file_holds_what_was_played_across_a_resume(
    tmp_path: Path, offset: int
) -> None:
    """Paused after at least 1 s, resumed at 0.5 s (heard twice) or 2.5 s (skipped).

    The file used to hold the whole stream once, whatever was played.
    """
    stream = _ramp(3 * RATE)
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with (
        satellite(tmp_path, "--mic-file", str(wav), "--snd-rate", str(RATE)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await send_stream(client, stream.tobytes(), chunk_bytes=8192)
        await _wait_progress(client, RATE)
        await client.write_event(Event("voicestack-pause"))
        await client.write_event(Event("ping", {"text": "paused"}))
        await read_until(client, "pong", 5)  # the pause has been handled
        await client.write_event(Event("voicestack-resume", {"offset": offset}))
        await read_until(client, "played", 10)

    written = _read_samples(sat.snd_file.with_name("played.1.wav"))
    # Where the pause fell depends on timing; everything else is exact.
    jumps = np.flatnonzero(np.diff(written.astype(np.int64)) != 1)
    assert len(jumps) == 1, "the file is not two runs of the stream"
    paused_at = int(jumps[0]) + 1
    assert paused_at >= RATE
    expected = np.concatenate([stream[:paused_at], stream[offset:]])
    assert np.array_equal(written, expected)


# -- played waits for the sound command's own buffer -----------------------------


class _CardWithStartThreshold:
    """The sound card behind ``aplay --start-delay``: the part that cannot run here.

    It starts once ``threshold_s`` of audio is queued and then plays in real
    time; when its queue runs dry it stops and waits for the threshold again
    (aplay restarts after an underrun). Times are the event loop's.
    """

    keeps_played = False

    def __init__(self, threshold_s: float) -> None:
        self._threshold = round(threshold_s * RATE)
        self._written = 0
        self._base = 0  # samples written before the queue the card waits to start
        self._waiting: list[int] = []  # ends of writes queued before the start
        self._drained_at = 0.0  # when the last sample written leaves the speaker
        self._out: list[tuple[int, float]] = []  # (end of a write, when it left)
        self.running = False
        self.underruns = 0

    async def write(self, samples: np.ndarray) -> None:
        now = asyncio.get_running_loop().time()
        if self.running and now >= self._drained_at:
            self.running = False
            self.underruns += 1
        if not self.running and not self._waiting:
            self._base = self._written
        self._written += len(samples)
        if self.running:
            self._drained_at += len(samples) / RATE
            self._out.append((self._written, self._drained_at))
            return
        self._waiting.append(self._written)
        if self._written - self._base >= self._threshold:
            self.running = True
            self._out += [
                (end, now + (end - self._base) / RATE) for end in self._waiting
            ]
            self._drained_at = self._out[-1][1]
            self._waiting.clear()

    def left_speaker_at(self, sample: int) -> float:
        """When the write holding sample number ``sample`` (1-based) was played."""
        return next(when for end, when in self._out if end >= sample)

    def stream_ended(self, stream_id: str, samples: np.ndarray) -> None:
        """Nothing is kept."""

    async def close(self) -> None:
        """Nothing to release."""


STREAMS = (("1", RATE), ("2", RATE // 2))  # back to back: 1 s, then 0.5 s


async def _play_on_card(
    latency_s: float, threshold_s: float
) -> tuple[_CardWithStartThreshold, dict[str, float]]:
    """Play STREAMS; the card, and when each stream's ``played`` came."""
    card = _CardWithStartThreshold(threshold_s)
    log = PlaybackLog()
    player = Player(card, RATE, latency_s=latency_s)
    player.subscribe(log)
    player.start()
    try:
        for stream_id, samples in STREAMS:
            player.begin(stream_id, RATE, 2, 1)
            player.feed(stream_id, bytes(2 * samples))
            player.end(stream_id)
        await log.wait_ended(len(STREAMS))
    finally:
        await player.close()
    return card, log.ended_at


def _last_samples_out(card: _CardWithStartThreshold) -> dict[str, float]:
    """When each stream's last sample left the speaker."""
    ends = np.cumsum([samples for _, samples in STREAMS])
    return {
        stream_id: card.left_speaker_at(int(end))
        for (stream_id, _), end in zip(STREAMS, ends, strict=True)
    }


def test_played_comes_after_the_card_has_played_the_last_sample() -> None:
    """With ``aplay --start-delay=40000``, ``played`` waits for the 40 ms it holds.

    In virtual time, so the times are exact. Without the latency (as before)
    ``played`` came while the card still held audio (next test).
    """
    latency = load(
        ["--name", "x", "--mic-stdin", "--snd-command", "aplay --start-delay=40000"]
    ).snd_latency_s
    assert latency is not None
    card, played = virtual_time.run(_play_on_card(latency, 0.04))

    assert card.underruns == 0  # the second stream follows the first without a gap
    for stream_id, out in _last_samples_out(card).items():
        # Never early; late by at most the blocks the player keeps ahead (the
        # times are exact but for float rounding).
        assert out <= played[stream_id] <= out + 2 * BLOCK_S + 1e-9, stream_id


def test_without_the_latency_played_comes_early() -> None:
    """The fault: the player's clock says done while aplay still holds audio."""
    card, played = virtual_time.run(_play_on_card(0.0, 0.04))

    for stream_id, out in _last_samples_out(card).items():
        assert played[stream_id] < out - BLOCK_S, stream_id


@pytest.mark.parametrize(
    ("command", "latency_s"),
    [
        (
            (
                "aplay -D plughw:CARD=Device,DEV=0 -r 22050 -c 1 -f S16_LE -t raw "
                "--buffer-time=200000 --start-delay=40000"
            ),
            0.04,
        ),
        ("aplay -r 22050 -t raw -qR 30000 -B 200000", 0.03),
        ("aplay -t raw --start-delay 500000 --buffer-time 200000", 0.2),
        ("aplay -t raw --buffer-time=200000", 0.2),
        ("aplay -t raw -B200000 -R-50000", 0.15),
        ("aplay -t raw", 0.5),
        ("aplay -r 16000 --buffer-size=1600", 0.1),
        ("aplay --buffer-size 800 -R -1000000", 0.0),
        ("aplay -r 16 --buffer-size=1600 -", 0.1),  # aplay reads -r 16 as 16 kHz
        ("aplay -t raw -- -R 40000", 0.5),  # after --: a file name
        ("/usr/bin/aplay -D hw:0 -R 0x9c40", 0.04),
        ("paplay --raw", 0.1),
    ],
)
def test_the_sound_command_latency_follows_aplay(
    command: str, latency_s: float
) -> None:
    settings = load(["--name", "x", "--mic-stdin", "--snd-command", command])
    assert settings.snd_latency_s == pytest.approx(latency_s)


def test_the_latency_is_set_or_refused_clearly(tmp_path: Path) -> None:
    base = ["--name", "x", "--mic-stdin"]
    snd_file = ["--snd-file", str(tmp_path / "out.wav")]
    assert load([*base, *snd_file]).snd_latency_s == 0.0
    assert load([*base, *snd_file, "--snd-latency", "0.25"]).snd_latency_s == 0.25
    aplay = ["--snd-command", "aplay -t raw --start-delay=40000"]
    assert load([*base, *aplay, "--snd-latency", "0"]).snd_latency_s == 0.0
    with pytest.raises(SettingsError, match="between 0 and 2"):
        load([*base, *aplay, "--snd-latency", "2.5"])
    with pytest.raises(SettingsError, match=r"--start-delay '40ms'.*--snd-latency"):
        load([*base, "--snd-command", "aplay --start-delay=40ms"])
    assert sound_command_latency_s(None) == 0.0
    config = tmp_path / "satellite.toml"
    config.write_text(
        'name = "x"\nsnd-command = "aplay"\nsnd-latency = 0.06\necho-tail = 0.5\n'
    )
    settings = load(["--config", str(config), "--mic-stdin"])
    assert (settings.snd_latency_s, settings.echo_tail_s) == (0.06, 0.5)
    with pytest.raises(SettingsError, match="--echo-tail"):
        load([*base, *snd_file, "--echo-tail", "-1"])


# -- the reply's echo is not the user's follow-up --------------------------------

REPLY = (
    "Your shopping list has milk, eggs and bread. Tell me if you want to add something."
)
FOLLOW_UP = "Turn off the kitchen lights."
ECHO_DB = -20.0
# The mic hears the speaker this late: the sound and mic commands' buffers and
# the room (arecord's default period alone is 125 ms). The reply's last sound
# then reaches the mic 0.1 to 0.2 s after ``played`` (Piper ends with 0.14 s of
# silence), inside the default tail of 0.5 s.
# The default mic's own delay: arecord's 125 ms period plus one 80 ms chunk.
ECHO_DELAY_S = 0.2


def _echo(reply: bytes) -> bytes:
    """The reply as the mic hears it: 20 dB down."""
    samples = np.frombuffer(reply, dtype=np.int16).astype(np.float64)
    return np.rint(samples * 10 ** (ECHO_DB / 20)).astype(np.int16).tobytes()


async def _first_request_after_reply(
    tmp_path: Path,
    after_echo: bytes,
    *args: str,
    listening: str = "window",
    echo_delay_s: float = ECHO_DELAY_S,
) -> bytes:
    """Play REPLY with its echo in the mic, then ``after_echo``; the next request's audio.

    The echo follows the satellite's own playback (its progress reports), not
    the wall clock: on a busy machine the player falls behind the clock, and
    the mic must still hear each sample ``echo_delay_s`` after it was played.
    VoiceStack's way: the satellite ends each request itself, and a listen
    window opens on ``played`` (``window``), or every speech segment is a
    request (``continuous``).
    """
    reply = speech.speak(REPLY)
    echo = _echo(reply)
    delay = round(echo_delay_s * RATE)
    async with (
        satellite(tmp_path, "--mic-stdin", "--no-sounds", *args, stdin=True) as sat,
        sat.connect() as client,
        LiveMic(sat.process.stdin) as mic,
    ):
        await take_ownership(client, end_of_speech_s=0.7)
        if listening == "continuous":
            await client.write_event(Event("voicestack-listen", {"continuous": True}))
        await send_stream(client, reply)
        heard: list[asyncio.Task[None]] = []
        fed = 0  # echo samples given to the mic
        async with asyncio.timeout(15):
            while (event := await client.read_event()) is not None:
                if event.type == "played":
                    break
                if event.type == "voicestack-progress":
                    # Whole mic chunks: the mic pads a part-filled one with silence.
                    chunks = max(0, event.data["played"] - delay - fed) // CHUNK
                    if chunks:
                        piece = echo[2 * fed : 2 * (fed + chunks * CHUNK)]
                        said = mic.say(piece, lead_s=0.0, tail_s=0.0)
                        heard.append(asyncio.create_task(said))
                        fed += chunks * CHUNK
        if listening == "window":
            await client.write_event(Event("voicestack-listen", {"timeout": 8}))
        rest = echo[2 * fed :] + after_echo
        heard.append(asyncio.create_task(mic.say(rest, lead_s=0.0, tail_s=1.5)))
        await read_until(client, "run-pipeline", 15)
        _, request = await read_until(client, "audio-stop", 10)
        await asyncio.gather(*heard)
    return audio_of(request)


def _holds(audio: bytes, part: bytes) -> bool:
    """Some 4 ms of ``part`` (not silence) is in ``audio``, sample for sample.

    The mic's audio reaches the request unchanged, so any of the echo in it
    is found exactly; 64 samples of speech never match by chance.
    """
    samples = np.frombuffer(part, dtype=np.int16)
    for start in range(0, len(samples) - 64, 64):
        window = samples[start : start + 64]
        if np.max(np.abs(window)) < 16:
            continue
        found = audio.find(window.tobytes())
        while found >= 0:
            if found % 2 == 0:
                return True
            found = audio.find(window.tobytes(), found + 1)
    return False


async def _assert_first_request_is_the_users(
    tmp_path: Path, after_echo: bytes, *args: str, **kwargs: Any
) -> None:
    audio = await _first_request_after_reply(tmp_path, after_echo, *args, **kwargs)
    echo_in_request = _holds(audio, _echo(speech.speak(REPLY)))
    assert not echo_in_request
    assert "kitchen" in speech.transcribe(audio).lower()


@pytest.mark.parametrize("listening", ["window", "continuous"])
async def test_the_reply_in_the_mic_is_not_taken_for_a_follow_up(
    tmp_path: Path, listening: str
) -> None:
    """Nobody speaks while the reply plays and echoes; a second later the user does.

    The first request must be the user's, without the echo: before, the VAD
    still "heard" the reply when the window opened, and the echo opened a
    request about 20 ms after ``played``, transcribed as the reply's last words.
    """
    user = speech.pad(speech.speak(FOLLOW_UP), 1.0)
    await _assert_first_request_is_the_users(tmp_path, user, listening=listening)


async def test_a_follow_up_said_as_the_reply_ends_gets_none_of_its_echo(
    tmp_path: Path,
) -> None:
    """The user answers the moment the reply is over, while the mic still hears it.

    The request starts where the tail (0.3 s) ends: the audio before it, the
    reply's last syllables, is not sent to speech-to-text.
    """
    await _assert_first_request_is_the_users(tmp_path, speech.speak(FOLLOW_UP))


async def test_an_echo_that_outlasts_the_tail_is_ignored_to_its_end(
    tmp_path: Path,
) -> None:
    """Speech that began inside the tail stays ignored after the tail, to its end.

    The tail set to 1 s and a mic that hears the speaker 1.5 s late: the
    echo goes on past the tail, and still starts nothing.
    """
    user = speech.pad(speech.speak(FOLLOW_UP), 1.0)
    await _assert_first_request_is_the_users(
        tmp_path, user, "--echo-tail", "1.0", echo_delay_s=1.5
    )
