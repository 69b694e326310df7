"""Bad input gets one clear line and drops only what it must."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import subprocess

from wyoming.audio import AudioStart
from wyoming.event import Event

from devstack import speech
from devstack.satellite import CLI, read_until, run_satellite, satellite


async def _raw(port: int, data: bytes) -> bytes:
    """Send raw bytes, return whatever comes back until the satellite closes."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    answer = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    await writer.wait_closed()
    return answer


async def _still_answers(sat) -> None:
    async with sat.connect() as client:
        await client.write_event(Event("describe"))
        await read_until(client, "info", 5)


async def test_malformed_and_oversized_events_drop_only_that_connection(
    tmp_path: Path,
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with satellite(
        tmp_path, "--mic-file", str(wav), "--max-payload", "4096"
    ) as sat:
        assert await _raw(sat.port, b"this is not json\n") == b""
        assert await _raw(sat.port, b'{"data": {}}\n') == b""
        assert (
            await _raw(sat.port, b'{"type": "audio-chunk", "payload_length": 99999}\n')
            == b""
        )
        assert await _raw(sat.port, b'{"type": "x", "data_length": -3}\n') == b""
        await _still_answers(sat)
        log = sat.log_text()

    assert "event header is not JSON" in log
    assert "event header has no type" in log
    assert "payload_length 99999 exceeds the limit of 4096 bytes" in log
    assert "data_length -3 is not a size" in log


async def test_audio_it_cannot_convert_is_refused_with_an_error(tmp_path: Path) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(AudioStart(rate=16000, width=3, channels=1).event())
        error, _ = await read_until(client, "error", 5)
        await client.write_event(Event("ping", {"text": "alive"}))
        pong, _ = await read_until(client, "pong", 5)

    assert error.data["code"] == "audio-format"
    assert "width 3" in error.data["text"]
    assert pong.data["text"] == "alive"


async def test_unknown_events_are_ignored(tmp_path: Path) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(Event("something-from-the-future", {"x": 1}))
        await client.write_event(Event("ping", {"text": "ok"}))
        pong, _ = await read_until(client, "pong", 5)
    assert pong.data["text"] == "ok"


async def test_a_missing_mic_command_is_reported_and_retried(tmp_path: Path) -> None:
    message = "mic command '/nonexistent/arecord' cannot start"
    states = tmp_path / "states.jsonl"
    async with satellite(
        tmp_path,
        "--mic-command",
        "/nonexistent/arecord -r 16000",
        "--event-command",
        f"tee -a {states}",
    ) as sat:
        async with asyncio.timeout(10):  # first attempt, then a retry after 1 s backoff
            while sat.log_text().count(message) < 2:
                await asyncio.sleep(0.1)
        await _still_answers(sat)
        assert sat.process.poll() is None

    reported = [json.loads(line) for line in states.read_text().splitlines()]
    assert reported[0]["state"] == "error"
    assert message in reported[0]["message"]


def test_a_file_that_is_not_a_wav_is_a_cli_error(tmp_path: Path) -> None:
    bogus = tmp_path / "mic.wav"
    bogus.write_text("not audio")
    result = subprocess.run(
        [
            *CLI,
            "--name",
            "x",
            "--mic-file",
            str(bogus),
            "--snd-file",
            str(tmp_path / "o.wav"),
        ],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert result.returncode == 2
    assert "not a PCM WAV file" in result.stderr
    assert "Traceback" not in result.stderr


def test_bad_options_are_cli_errors(tmp_path: Path) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(0.1))
    cases = {
        ("--uri", "http://x"): "--uri must look like tcp://HOST:PORT",
        ("--wake-word", "hey_nobody"): "neither a built-in model",
        ("--wake-threshold", "1.5"): "--wake-threshold must be between 0 and 1",
        ("--no-speech-timeout", "0.5"): "--no-speech-timeout must be 0 (off) or 1",
    }
    for extra, message in cases.items():
        result = subprocess.run(
            [
                *CLI,
                "--name",
                "x",
                "--mic-file",
                str(wav),
                "--snd-file",
                "o.wav",
                *extra,
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert result.returncode == 2, extra
        assert message in result.stderr, (extra, result.stderr)


async def test_timer_events_with_stray_fields_keep_the_connection(
    tmp_path: Path,
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    hooks = tmp_path / "hooks.jsonl"
    stray = {"id": "t1", "total_seconds": 60, "event": "x", "state": "y", "name": 7}
    async with (
        satellite(
            tmp_path, "--mic-file", str(wav), "--event-command", f"tee -a {hooks}"
        ) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(Event("timer-started", stray))
        await client.write_event(Event("timer-cancelled", {"id": ["t1"]}))
        await client.write_event(Event("ping", {"text": "alive"}))
        pong, _ = await read_until(client, "pong", 5)
        async with asyncio.timeout(5):
            while not hooks.exists() or hooks.read_text().count('"timer"') < 2:
                await asyncio.sleep(0.05)

    assert pong.data["text"] == "alive"
    timers = [
        {k: v for k, v in json.loads(line).items() if k != "time"}
        for line in hooks.read_text().splitlines()
        if '"timer"' in line
    ]
    assert timers == [
        {"state": "timer", "event": "timer-started", "id": "t1", "total_seconds": 60},
        {"state": "timer", "event": "timer-cancelled"},
    ]


async def test_a_mic_that_goes_silent_mid_request_still_ends_it(tmp_path: Path) -> None:
    """--max-request is a timer: a dead mic sends no chunk to check it on."""
    wake = speech.pad(speech.speak("Hey Jarvis."), 2.0, 1.0)
    async with (
        satellite(tmp_path, "--mic-stdin", "--max-request", "2", stdin=True) as sat,
        sat.connect() as client,
    ):
        assert sat.process.stdin is not None
        await run_satellite(client)
        sat.process.stdin.write(wake)  # then nothing more, ever
        sat.process.stdin.flush()
        await read_until(client, "audio-start", 10)
        started = asyncio.get_running_loop().time()
        stop, _ = await read_until(client, "audio-stop", 10)
        waited = asyncio.get_running_loop().time() - started

    assert stop.type == "audio-stop"
    assert 1.5 < waited < 6.0  # the 2 s limit, not the next chunk that never comes
    assert "No end of utterance from the peer after 2.0 s" in sat.log_text()


async def test_a_wake_word_is_heard_and_logged_before_any_owner(tmp_path: Path) -> None:
    """docs/satellite.md: say "hey jarvis" and watch the log before adding it."""
    wake = speech.pad(speech.speak("Hey Jarvis."), 2.0, 1.0)
    async with satellite(tmp_path, "--mic-stdin", stdin=True) as sat:
        assert sat.process.stdin is not None
        sat.process.stdin.write(wake)
        sat.process.stdin.flush()
        async with asyncio.timeout(15):
            while "Wake word hey_jarvis" not in sat.log_text():
                await asyncio.sleep(0.1)
        async with sat.connect() as client:  # and nothing was waiting to stream
            await client.write_event(Event("describe"))
            _, before = await read_until(client, "info", 5)

    assert "no Home Assistant connected: nothing is streamed" in sat.log_text()
    assert [event.type for event in before] == []
