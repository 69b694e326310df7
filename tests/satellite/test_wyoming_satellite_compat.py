"""A wyoming-satellite command line runs the satellite.

docs/satellite.md, "Coming from wyoming-satellite", maps the flags. The satellite is started as a wyoming-satellite user starts theirs: a 48 kHz,
32-bit, two-channel recorder (the voice on the second channel, a fan's noise on
the first), a remote wake word service (``--wake-uri``, a real Wyoming server in
its own process), ``--event-uri`` and per-event commands. Home Assistant's side
is a stock Wyoming peer, as Home Assistant's wyoming integration is.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest
from wyoming.audio import AudioStart
from wyoming.error import Error
from wyoming.event import Event, async_read_event
from wyoming.info import Describe, Info
from wyoming.timer import TimerFinished, TimerStarted

from devstack import servers, speech
from devstack.satellite import CLI, read_until, run_satellite, satellite
from devstack.waiting import wait_for
from devstack.wake_server import wake_server
from tests.satellite.owner import read_audio, send_stream
from voicestack_satellite.mic_format import READ_SAMPLES, MicConverter, MicFormat
from voicestack_satellite.settings import load
from voicestack_satellite.sinks import CommandSink

MIC_RATE = 48000
TIMER = TimerStarted(id="tea", total_seconds=180, name="tea", start_minutes=3)
PACED_MIC = Path(__file__).with_name("paced_mic.py")
HOOK = """\
import json, sys
with open(sys.argv[1], "a") as log:
    log.write(json.dumps([sys.argv[2], sys.stdin.read()]) + "\\n")
"""


def _mic_raw(path: Path, pcm: bytes) -> Path:
    """``pcm`` as a 48 kHz 32-bit stereo recorder prints it: noise, then the voice."""
    wav = speech.write_wav(path.with_suffix(".wav"), pcm)
    voice = np.frombuffer(
        subprocess.run(
            [
                *("ffmpeg", "-v", "error", "-i", str(wav), "-ar", str(MIC_RATE)),
                *("-ac", "1", "-f", "s32le", "-"),
            ],
            capture_output=True,
            check=True,
        ).stdout,
        dtype=np.int32,
    )
    noise = np.random.default_rng(1).normal(0, 2**29, len(voice))
    noise = np.clip(noise, -(2**31), 2**31 - 1).astype(np.int32)
    path.write_bytes(np.stack([noise, voice], axis=1).tobytes())
    return path


class EventService:
    """An ``--event-uri`` service: the events it was sent, in order."""

    def __init__(self, port: int | None = None) -> None:
        """On ``port`` (default: a free one), once entered."""
        self.events: list[Event] = []
        self.port = port or servers.free_port()

    async def __aenter__(self) -> EventService:
        """Listen."""
        self._server = await asyncio.start_server(
            self._serve, servers.LOOPBACK, self.port
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        """Stop listening."""
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, _w: object) -> None:
        while (event := await async_read_event(reader)) is not None:
            self.events.append(event)

    def types(self) -> list[str]:
        """The types of the events, in order."""
        return [event.type for event in self.events]


async def test_a_wyoming_satellite_command_line_wakes_streams_and_runs_hooks(
    tmp_path: Path,
) -> None:
    spoken = speech.pad(speech.speak("Hey Jarvis."), 0.5, 0.7) + speech.speak(
        "Turn on the kitchen lights."
    )
    raw = _mic_raw(tmp_path / "mic.raw", speech.pad(spoken, 0.0, 3.0))
    go, log = tmp_path / "go", tmp_path / "hooks.log"
    (tmp_path / "hook.py").write_text(HOOK, encoding="utf-8")
    hook = f"{sys.executable} {tmp_path / 'hook.py'} {log}"
    mic = f"{sys.executable} {PACED_MIC} {raw} {go} {MIC_RATE * 8}"
    with wake_server() as wake:
        async with EventService() as service:
            args = [
                *("--mic-command", mic, "--mic-command-rate", str(MIC_RATE)),
                *("--mic-command-width", "4", "--mic-command-channels", "2"),
                *("--mic-channel-index", "1"),
                *("--wake-uri", wake.uri, "--wake-word-name", "hey_jarvis"),
                *("--event-uri", f"tcp://{servers.LOOPBACK}:{service.port}"),
                *("--connected-command", f"{hook} connected"),
                *("--detection-command", f"{hook} detection"),
                *("--streaming-start-command", f"{hook} streaming-start"),
                *("--transcript-command", f"{hook} transcript"),
                *("--synthesize-command", f"{hook} synthesize"),
                *("--timer-started-command", f"{hook} timer-started"),
                *("--timer-finished-command", f"{hook} timer-finished"),
                *("--error-command", f"{hook} error"),
                *("--tts-played-command", f"{hook} tts-played"),
                *("--mic-command-samples-per-chunk", "1024"),
            ]
            async with (
                satellite(tmp_path, *args) as sat,
                sat.connect() as client,
            ):
                await run_satellite(client, extensions=False)
                await wait_for(
                    lambda: "Connected to the wake word service" in sat.log_text(),
                    10,
                    "the satellite connected to the wake word service",
                )
                go.touch()
                detection, _ = await read_until(client, "detection", 15)
                start, _ = await read_until(client, "audio-start", 2)
                audio = await read_audio(client, 3.0)
                await client.write_event(
                    Event("transcript", {"text": "turn on the kitchen lights"})
                )
                await client.write_event(
                    Event("synthesize", {"text": "The kitchen lights are on."})
                )
                await send_stream(client, speech.speak("They are on."))
                await client.write_event(TIMER.event())
                await client.write_event(TimerFinished(id="tea").event())
                await client.write_event(Error(text="No timer", code="x").event())
                await wait_for(
                    lambda: log.exists() and len(log.read_text().splitlines()) == 9,
                    15,
                    "nine hooks ran",
                )
                await wait_for(
                    lambda: "synthesize" in service.types(), 5, "the service heard"
                )
                satellite_log = sat.log_text()

    assert detection.data["name"] == "hey_jarvis"
    assert "Wake word service detected 'hey_jarvis'" in satellite_log
    assert "--mic-command-samples-per-chunk is ignored" in satellite_log
    fmt = AudioStart.from_event(start)
    assert (fmt.rate, fmt.width, fmt.channels) == (16000, 2, 1)
    text = speech.transcribe(audio).lower()
    assert "kitchen" in text
    assert "light" in text
    hooks = [json.loads(line) for line in log.read_text().splitlines()]
    assert hooks == [
        ["connected", ""],
        ["detection", "hey_jarvis"],
        ["streaming-start", ""],
        ["transcript", "turn on the kitchen lights"],
        ["synthesize", "The kitchen lights are on."],
        ["timer-started", json.dumps(TIMER.event().to_dict())],
        ["timer-finished", "tea"],
        ["error", "No timer"],
        ["tts-played", ""],  # the answer's last sample played, after the rest
    ]
    types = service.types()
    assert types[0] == "satellite-connected"
    for kind in ("detection", "streaming-started", "transcript", "synthesize"):
        assert kind in types
    assert types.index("detection") < types.index("transcript")
    assert "audio-chunk" not in types


async def test_a_wake_word_service_that_starts_later_is_used_once_it_is_up(
    tmp_path: Path,
) -> None:
    spoken = speech.pad(speech.speak("Hey Jarvis."), 0.5, 0.7) + speech.speak(
        "Turn on the kitchen lights."
    )
    wav = speech.write_wav(tmp_path / "mic.wav", speech.pad(spoken, 0.0, 2.0))
    port = servers.free_port()
    args = ["--mic-file", str(wav), "--wake-uri", f"tcp://{servers.LOOPBACK}:{port}"]
    async with (
        satellite(tmp_path, *args, "--wake-word-name", "hey_jarvis") as sat,
        sat.connect() as client,
    ):
        await wait_for(
            lambda: "Cannot reach the wake word service" in sat.log_text(),
            10,
            "the satellite tried the service",
        )
        await client.write_event(Describe().event())
        info, _ = await read_until(client, "info", 5)
        with wake_server(port):
            await wait_for(
                lambda: "Connected to the wake word service" in sat.log_text(),
                10,
                "the satellite connected once the service was up",
            )
            await run_satellite(client)
            detection, _ = await read_until(client, "detection", 15)

    assert detection.data["name"] == "hey_jarvis"
    described = Info.from_event(info)
    assert described.satellite is not None
    assert described.satellite.active_wake_words == ["hey_jarvis"]
    service = f"a Wyoming wake word service at tcp://{servers.LOOPBACK}:{port}"
    assert described.wake[0].description == service


async def test_events_wait_for_an_event_service_that_starts_late(
    tmp_path: Path,
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    port = servers.free_port()
    args = ["--mic-file", str(wav), "--event-uri", f"tcp://{servers.LOOPBACK}:{port}"]
    async with satellite(tmp_path, *args) as sat, sat.connect() as client:
        await wait_for(
            lambda: "Cannot reach the event service" in sat.log_text(),
            10,
            "the satellite tried the event service",
        )
        await run_satellite(client, extensions=False)
        await client.write_event(Event("transcript", {"text": "lights on"}))
        async with EventService(port) as service:
            await wait_for(
                lambda: "transcript" in service.types(), 10, "the events arrived"
            )
            kept = service.types()

    assert kept == ["satellite-connected", "run-satellite", "transcript"]


@pytest.mark.parametrize(
    ("flag", "reason"),
    [
        (["--mic-uri", "tcp://127.0.0.1:10600"], "use --mic-command"),
        (["--snd-uri", "tcp://127.0.0.1:10601"], "use --snd-command"),
        (["--wake-command", "porcupine"], "use --wake-uri"),
        (["--vad"], "without a wake word is not supported"),
        (["--wake-word-name", "hey_jarvis"], "--wake-word-name needs --wake-uri"),
        (["--mic-command-width", "3"], "must be 1, 2 or 4"),
        (
            ["--mic-command-channels", "2", "--mic-channel-index", "2"],
            "between 0 and 1",
        ),
    ],
)
def test_what_the_satellite_cannot_do_is_refused_with_the_reason(
    tmp_path: Path, flag: list[str], reason: str
) -> None:
    out = str(tmp_path / "out.wav")
    result = subprocess.run(
        [*CLI, "--name", "x", "--mic-command", "arecord", "--snd-file", out, *flag],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 2
    assert reason in result.stderr


def test_a_48_khz_mic_loses_what_lies_above_8_khz_instead_of_folding_it() -> None:
    # 1 kHz (speech) and 20 kHz, which sampled at 16 kHz without a filter would
    # sound at 4 kHz; 32-bit, on the second of two channels.
    t = np.arange(MIC_RATE * 2) / MIC_RATE
    tone = 0.3 * np.sin(2 * np.pi * 1000 * t) + 0.3 * np.sin(2 * np.pi * 20000 * t)
    voice = (tone * 2**31).astype(np.int32)
    data = np.stack([np.zeros_like(voice), voice], axis=1).tobytes()
    converter = MicConverter(MicFormat(MIC_RATE, 4, 2, channel=1))

    chunks = [
        chunk
        for at in range(0, len(data), 5000)  # reads that split frames
        for chunk in converter.convert(data[at : at + 5000])
    ]

    assert {len(chunk) for chunk in chunks} == {READ_SAMPLES}
    out = np.concatenate(chunks).astype(np.float64)[4000:20000]
    assert abs(len(np.concatenate(chunks)) - 32000) <= READ_SAMPLES  # 2 s in, 2 out
    spectrum = np.abs(np.fft.rfft(out * np.hanning(len(out))))
    at = np.fft.rfftfreq(len(out), 1 / 16000)
    level = {hz: spectrum[np.argmin(abs(at - hz))] for hz in (1000, 4000)}
    assert 20 * np.log10(level[4000] / level[1000]) < -60


def test_a_config_file_takes_wyoming_satellite_names(tmp_path: Path) -> None:
    config = tmp_path / "satellite.toml"
    config.write_text(
        'name = "Kitchen"\n'
        'mic-command = "arecord -r 48000 -c 2 -f S32_LE -t raw"\n'
        "mic-command-rate = 48000\nmic-command-width = 4\nmic-command-channels = 2\n"
        'snd-command = "aplay -r 22050 -c 1 -f S16_LE -t raw"\n'
        'wake-uri = "tcp://127.0.0.1:10400"\nwake-word-name = ["ok_nabu"]\n'
        'timer-canceled-command = "/usr/local/bin/timer-leds cancelled"\n'
        "mic-volume-multiplier = 2.0\n",
        encoding="utf-8",
    )

    settings = load(["--config", str(config)])

    assert (settings.mic_rate, settings.mic_width, settings.mic_channels) == (
        48000,
        4,
        2,
    )
    assert settings.wake_word_names == ["ok_nabu"]
    assert settings.event_hooks == {
        "timer_cancelled": ["/usr/local/bin/timer-leds", "cancelled"]
    }
    assert settings.mic_volume == 2.0


async def test_a_sound_command_gets_the_width_and_channels_it_reads(
    tmp_path: Path,
) -> None:
    out = tmp_path / "snd.raw"
    copy = (
        "import sys\n"
        f"with open({str(out)!r}, 'wb', buffering=0) as f:\n"
        "    while data := sys.stdin.buffer.read1(65536): f.write(data)"
    )
    sink = CommandSink([sys.executable, "-c", copy], width=4, channels=2)
    samples = np.array([0, 1000, -32768, 32767, -5], dtype=np.int16)

    await sink.write(samples)
    await wait_for(
        lambda: out.exists() and out.stat().st_size == len(samples) * 8,
        10,
        "the sound command read the samples",
    )
    await sink.close()

    frames = np.frombuffer(out.read_bytes(), dtype=np.int32).reshape(-1, 2)
    assert (frames[:, 0] == frames[:, 1]).all()
    assert ((frames[:, 0] >> 16) == samples).all()


# Every option of wyoming-satellite 1.4.1 (its __main__.py), with a value.
THEIR_OPTIONS = [
    "--mic-command-rate 16000",
    "--mic-command-width 2",
    "--mic-command-channels 1",
    "--mic-command-samples-per-chunk 1024",
    "--mic-volume-multiplier 1.5",
    "--mic-noise-suppression 2",
    "--mic-auto-gain 5",
    "--mic-seconds-to-mute-after-awake-wav 0.5",
    "--mic-no-mute-during-awake-wav",
    "--mic-channel-index 0",
    "--snd-command-rate 22050",
    "--snd-command-width 2",
    "--snd-command-channels 1",
    "--snd-volume-multiplier 0.8",
    "--wake-uri tcp://127.0.0.1:10400",
    "--wake-word-name ok_nabu",
    "--wake-command-rate 16000",
    "--wake-command-width 2",
    "--wake-command-channels 1",
    "--wake-refractory-seconds 5",
    "--vad-threshold 0.5",
    "--vad-trigger-level 1",
    "--vad-buffer-seconds 2",
    "--vad-wake-word-timeout 5",
    "--event-uri tcp://127.0.0.1:10500",
    "--startup-command true",
    "--detect-command true",
    "--detection-command true",
    "--transcript-command true",
    "--stt-start-command true",
    "--stt-stop-command true",
    "--synthesize-command true",
    "--tts-start-command true",
    "--tts-stop-command true",
    "--tts-played-command true",
    "--streaming-start-command true",
    "--streaming-stop-command true",
    "--error-command true",
    "--connected-command true",
    "--disconnected-command true",
    "--timer-started-command true",
    "--timer-updated-command true",
    "--timer-cancelled-command true",
    "--timer-canceled-command true",
    "--timer-finished-command true",
    "--timer-finished-wav-repeat 2 0",
    "--area Kitchen",
    "--no-zeroconf",
    "--zeroconf-name kitchen",
    "--zeroconf-host 127.0.0.1",
    "--debug-recording-dir /tmp",
    "--debug",
    "--log-format %(message)s",
]


@pytest.mark.parametrize("option", THEIR_OPTIONS)
def test_every_wyoming_satellite_option_is_understood(option: str) -> None:
    # Their refused ones: test_what_the_satellite_cannot_do_is_refused_with_the_reason.
    base = ["--name", "Kitchen", "--mic-command", "arecord", "--snd-command", "aplay"]
    if option.startswith("--wake-word-name"):
        base += ["--wake-uri", "tcp://127.0.0.1:10400"]
    settings = load([*base, "--uri", "tcp://127.0.0.1:10700", *option.split(" ")])
    assert settings.name == "Kitchen"
