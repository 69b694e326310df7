"""The satellite as a Wyoming peer: info, wake -> stream, playback, one owner."""

from __future__ import annotations

import asyncio
from pathlib import Path
import time

import numpy as np
import pytest
from wyoming.audio import AudioStop
from wyoming.event import Event
from wyoming.info import Describe, Info
from zeroconf import Zeroconf
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from devstack import speech
from devstack.satellite import read_until, run_satellite, satellite
from tests.satellite.owner import read_audio, send_stream, take_ownership
import voicestack_protocol as protocol

COMMAND = "Hey Jarvis. Turn on the kitchen lights."
SERVICE = "_wyoming._tcp.local."


async def test_describe_answers_a_satellite_info(tmp_path: Path) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    args = (
        "--mic-file",
        str(wav),
        "--wake-word",
        "hey_jarvis",
        "--wake-word",
        "okay_nabu",
    )
    async with (
        satellite(tmp_path, *args, area="kitchen") as sat,
        sat.connect() as client,
    ):
        await client.write_event(Describe().event())
        event, _ = await read_until(client, "info", 5)

    info = Info.from_event(event)
    assert info.satellite is not None
    assert info.satellite.name == "test-satellite"
    assert info.satellite.area == "kitchen"
    assert info.satellite.has_vad is True
    assert info.satellite.active_wake_words == ["hey_jarvis", "okay_nabu"]
    assert info.satellite.max_active_wake_words == 2
    assert [m.name for m in info.wake[0].models] == ["hey_jarvis", "okay_nabu"]
    assert event.data["voicestack"]["protocol"] == 1
    assert event.data["voicestack"]["id"].endswith(f"-{sat.port}")
    assert "voicestack-flush" in event.data["voicestack"]["accepts"]


async def test_wake_word_streams_the_request_with_preroll(tmp_path: Path) -> None:
    # The wake word, the pause a user leaves for the chime, then the command.
    spoken = speech.pad(speech.speak("Hey Jarvis."), 0.5, 0.7) + speech.speak(
        "Turn on the kitchen lights."
    )
    wav = speech.write_wav(tmp_path / "mic.wav", speech.pad(spoken, 0.0, 2.5))
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        detection, _ = await read_until(client, "detection", 10)
        run, _ = await read_until(client, "run-pipeline", 2)
        preroll, _ = await read_until(client, "voicestack-preroll", 2)
        await read_until(client, "audio-start", 2)
        audio = await read_audio(client, 4.0)
        await client.write_event(
            Event("transcript", {"text": "turn on the kitchen lights"})
        )
        await read_until(client, "audio-stop", 5)

    assert detection.data["name"] == "hey_jarvis"
    assert run.data["start_stage"] == "asr"
    assert run.data["end_stage"] == "tts"
    assert preroll.data["samples"] == 4800  # the default 0.3 s after a wake word
    text = speech.transcribe(audio).lower()
    assert "kitchen" in text
    assert "light" in text


async def test_played_comes_when_the_last_sample_was_played(tmp_path: Path) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    reply = speech.speak("The kitchen lights are on.")
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await send_stream(client, reply, chunk_bytes=4096)
        sent_at = time.monotonic()
        _, before = await read_until(client, "played", 10)
        waited = time.monotonic() - sent_at

    # Paced like a sound card: not before the audio could have been played.
    assert waited >= speech.seconds(reply) - 0.1
    final = [e for e in before if e.type == "voicestack-progress"][-1]
    assert final.data["state"] == "played"
    assert final.data["played"] == len(reply) // 2
    written = sorted(sat.snd_file.parent.glob("played.*.wav"))
    assert len(written) == 1
    # tiny.en (int8 on this CPU, 2026-11-28) hears Piper's "kitchen" here as
    # "catching", the reply itself too: what was played whole is the sentence's rest.
    heard = speech.transcribe(speech.read_wav_pcm(written[0])).lower()
    assert "lights are on" in heard, heard


async def test_flush_silences_playback_within_a_block(tmp_path: Path) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    long_reply = speech.silence(0.0) + speech.speak(
        "This is a long answer that will be interrupted before it ends."
    )
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await send_stream(client, long_reply)
        await asyncio.sleep(0.5)
        await client.write_event(Event("voicestack-flush"))
        await read_until(client, "played", 5)

    written = sorted(sat.snd_file.parent.glob("played.*.wav"))
    played = speech.seconds(speech.read_wav_pcm(written[0]))
    assert 0.3 < played < 1.0 < speech.seconds(long_reply)


async def test_a_second_owner_is_refused_and_the_next_is_accepted(
    tmp_path: Path,
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with satellite(tmp_path, "--mic-file", str(wav)) as sat:
        async with sat.connect() as first:
            await first.write_event(Event("run-satellite"))
            await first.write_event(Event("ping", {"text": "1"}))
            await read_until(first, "pong", 5)
            async with sat.connect() as second:
                await second.write_event(Event("run-satellite"))
                refusal, _ = await read_until(second, "error", 5)
                assert await second.read_event() is None  # then closed
        async with sat.connect() as third:
            await third.write_event(Event("run-satellite"))
            await third.write_event(Event("ping", {"text": "3"}))
            pong, _ = await read_until(third, "pong", 5)

    assert refusal.data["code"] == "busy"
    assert pong.data["text"] == "3"
    assert "Refusing 127.0.0.1" in sat.log_text()


async def test_a_stock_peer_gets_no_extension_events(tmp_path: Path) -> None:
    """Without ``voicestack-hello`` the satellite speaks plain Wyoming only."""
    wav = speech.write_wav(
        tmp_path / "mic.wav", speech.pad(speech.speak(COMMAND), 0.5, 2.0)
    )
    reply = speech.speak("Done.")
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client, extensions=False)
        _, before_audio = await read_until(client, "audio-start", 10)
        await client.write_event(Event("transcript", {"text": "kitchen lights"}))
        _, streamed = await read_until(client, "audio-stop", 5)
        await send_stream(client, reply)
        _, playing = await read_until(client, "played", 5)

    seen = {e.type for e in before_audio + streamed + playing}
    assert not {t for t in seen if t.startswith("voicestack-")}
    assert {"detection", "run-pipeline", "audio-chunk"} <= seen


async def test_it_announces_itself_on_zeroconf(tmp_path: Path) -> None:
    """Home Assistant finds it as ``_wyoming._tcp.local.`` at its port."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    name = f"zc-{tmp_path.name}"
    aiozc = AsyncZeroconf(interfaces=["127.0.0.1"])
    found: list[str] = []

    def on_change(
        zeroconf: Zeroconf, service_type: str, name: str, state_change: object
    ) -> None:
        found.append(name)

    browser = AsyncServiceBrowser(aiozc.zeroconf, SERVICE, handlers=[on_change])
    try:
        async with satellite(
            tmp_path, "--mic-file", str(wav), "--name", name, zeroconf=True
        ) as sat:
            deadline = time.monotonic() + 10
            while f"{name}.{SERVICE}" not in found and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
            info = AsyncServiceInfo(SERVICE, f"{name}.{SERVICE}")
            assert await info.async_request(aiozc.zeroconf, 3000)
    finally:
        await browser.async_cancel()
        await aiozc.async_close()

    assert info.port == sat.port
    assert "127.0.0.1" in info.parsed_addresses()
    assert "Announced on zeroconf" in sat.log_text()


async def test_stopped_while_it_announces_it_exits_cleanly(tmp_path: Path) -> None:
    """The announcement (about 2 s) runs beside the start: SIGTERM cuts it short."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with satellite(
        tmp_path, "--mic-file", str(wav), "--name", f"zc-{tmp_path.name}", zeroconf=True
    ) as sat:
        pass  # it answers describe at once; stop it before it is announced

    log = sat.log_text()
    assert sat.process.returncode == 0
    assert "Stopping" in log
    assert "Announced on zeroconf" not in log
    assert "Traceback" not in log
    assert "Task was destroyed" not in log


async def test_two_satellites_with_one_name_are_both_announced(tmp_path: Path) -> None:
    """The second "Kitchen" becomes "Kitchen-2" (it crashed on a non-unique name)."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    name = f"zc-{tmp_path.name}"
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    async with (
        satellite(first, "--mic-file", str(wav), "--name", name, zeroconf=True) as one,
    ):
        async with asyncio.timeout(15):
            while "Announced on zeroconf" not in one.log_text():
                await asyncio.sleep(0.1)
        async with satellite(
            second, "--mic-file", str(wav), "--name", name, zeroconf=True
        ) as two:
            async with asyncio.timeout(15):
                while "Announced on zeroconf" not in two.log_text():
                    await asyncio.sleep(0.1)
            alive = (one.process.poll(), two.process.poll())

    assert alive == (None, None)
    assert f"Announced on zeroconf as {name}._wyoming" in one.log_text()
    assert f"Announced on zeroconf as {name}-2._wyoming" in two.log_text()


async def test_a_silent_owner_loses_the_satellite_to_the_next(tmp_path: Path) -> None:
    """An owner whose network vanished without a close does not block forever."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with (
        satellite(tmp_path, "--mic-file", str(wav), "--owner-timeout", "1.5") as sat,
        sat.connect() as stale,
        sat.connect() as early,
        sat.connect() as late,
    ):
        await stale.write_event(Event("run-satellite"))  # then never a word
        await asyncio.sleep(0.3)
        await early.write_event(Event("run-satellite"))
        refusal, _ = await read_until(early, "error", 5)
        await asyncio.sleep(1.6)
        await late.write_event(Event("run-satellite"))
        await late.write_event(Event("ping", {"text": "mine"}))
        pong, _ = await read_until(late, "pong", 5)
        log = sat.log_text()

    assert refusal.data["code"] == "busy"
    assert pong.data["text"] == "mine"
    assert "handing the satellite to" in log


async def test_it_ends_the_request_itself_when_asked(tmp_path: Path) -> None:
    """With ``end_of_speech_s`` in the hello, quiet after speech ends the request."""
    command = speech.speak(COMMAND)
    wav = speech.write_wav(tmp_path / "mic.wav", speech.pad(command, 0.5, 5.0))
    samples = np.frombuffer(command, np.int16)
    speech_ends = 0.5 + np.flatnonzero(np.abs(samples) > 300)[-1] / speech.RATE
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        started = time.monotonic()
        await take_ownership(client, end_of_speech_s=0.5)
        await read_until(client, "audio-start", 10)
        stop, _ = await read_until(client, "audio-stop", 5)
        ended = time.monotonic() - started

    # The mic file started with run-satellite: the stop came about 0.5 s (plus a
    # chunk or two) after the last word, not after --max-request.
    assert 0.4 < ended - speech_ends < 1.0
    assert stop.type == "audio-stop"


async def test_nobody_speaking_after_the_wake_word_drops_the_request(
    tmp_path: Path,
) -> None:
    """A false wake: ``voicestack-no-speech`` and ``audio-stop`` 5 s after it."""
    wake = speech.pad(speech.speak("Hey Jarvis."), 0.5, 9.0)
    wav = speech.write_wav(tmp_path / "mic.wav", wake)
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await take_ownership(client, end_of_speech_s=0.7)
        await read_until(client, "detection", 10)
        _, streamed = await read_until(client, protocol.NO_SPEECH, 10)
        stop, _ = await read_until(client, "audio-stop", 2)

    # The audio is the clock: the 0.3 s wake preroll, then 5 s of the room
    # (to the 80 ms mic chunk), whatever the machine's load.
    chunks = [e for e in streamed if e.type == "audio-chunk"]
    sent_s = sum(len(e.payload or b"") for e in chunks) / (2 * speech.RATE)
    assert sent_s == pytest.approx(
        AudioStop.from_event(stop).timestamp / 1000, abs=0.01
    )
    assert 5.0 <= sent_s - 0.3 <= 5.1
    assert "No speech after the wake word" in sat.log_text()


async def test_sigterm_ends_the_satellite_whatever_its_clients_do(
    tmp_path: Path,
) -> None:
    """Idle clients and an owner that reads nothing do not keep it alive.

    (On Python 3.12+ ``wait_closed`` waits for every connection; one idle client
    kept the satellite running for more than 15 s.)
    """
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with satellite(tmp_path, "--mic-file", str(wav)) as sat:
        async with sat.connect() as owner:
            await run_satellite(owner)
            idle = [
                await asyncio.open_connection("127.0.0.1", sat.port) for _ in range(3)
            ]
            sat.process.terminate()
            code = await asyncio.to_thread(sat.process.wait, 5)
        for _reader, writer in idle:
            writer.close()

    assert code == 0
    assert "Stopping" in sat.log_text()
