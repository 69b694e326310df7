"""What the user hears and sees: chimes, mic mute, timers, stop-on-wake, listen-now.

Also the state hooks. All against the real satellite subprocess with Piper speech.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import time

import numpy as np
from wyoming.event import Event

from devstack import speech
from devstack.satellite import read_until, run_satellite, satellite
from scripts.make_sounds import render
from tests.satellite.owner import audio_of, read_audio, send_stream, take_ownership
from voicestack_satellite.sounds import KINDS, default_path

COMMAND = "Hey Jarvis. Turn on the kitchen lights."
CHUNK = 1280


def test_shipped_sounds_are_what_the_generator_makes() -> None:
    """The WAVs in the package are reproducible from scripts/make_sounds.py."""
    for kind in KINDS:
        shipped = speech.read_wav_pcm(default_path(kind))
        assert shipped == render(kind).tobytes(), kind
        assert default_path(kind).stat().st_size < 40_000


def _chunks_of(audio: bytes) -> list[np.ndarray]:
    samples = np.frombuffer(audio, dtype=np.int16)
    return [samples[i : i + CHUNK] for i in range(0, len(samples), CHUNK)]


async def _woken_request(tmp_path: Path, *args: str) -> tuple[int, bytes, list[Path]]:
    """Wake the satellite with COMMAND, read 3 s of the request, send a transcript.

    Returns the preroll length, the request audio and the sound files written.
    """
    wav = speech.write_wav(
        tmp_path / "mic.wav", speech.pad(speech.speak(COMMAND), 0.5, 2.5)
    )
    async with (
        satellite(tmp_path, "--mic-file", str(wav), *args) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        preroll, _ = await read_until(client, "voicestack-preroll", 10)
        audio = await read_audio(client, 3.0)
        await client.write_event(Event("transcript", {"text": "kitchen lights"}))
        await read_until(client, "audio-stop", 5)
        # The done chime plays after the transcript; give it time to finish.
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and not list(
            tmp_path.glob("played-sounds.done-*.wav")
        ):
            await asyncio.sleep(0.05)
    sounds = sorted(tmp_path.glob("played-sounds.*.wav"))
    return preroll.data["samples"], audio, sounds


async def test_awake_chime_mutes_the_request_while_it_plays(tmp_path: Path) -> None:
    preroll, audio, sounds = await _woken_request(tmp_path)

    assert [p.name.split(".")[1].split("-")[0] for p in sounds] == ["awake", "done"]
    live = _chunks_of(audio[preroll * 2 :])
    awake_s = speech.seconds(speech.read_wav_pcm(default_path("awake")))
    # The chunks recorded while the chime played (and the one in flight when it
    # ended) are silence; then the mic again.
    muted = next(i for i, chunk in enumerate(live) if chunk.any())
    assert awake_s * 16000 // CHUNK + 1 <= muted <= awake_s * 16000 // CHUNK + 2
    assert "kitchen" in speech.transcribe(audio).lower()


async def test_no_sounds_and_no_mute_send_the_mic_as_is(tmp_path: Path) -> None:
    preroll, audio, sounds = await _woken_request(
        tmp_path, "--no-sounds", "--no-mute-during-awake"
    )

    assert sounds == []
    live = _chunks_of(audio[preroll * 2 :])
    assert all(chunk.any() for chunk in live[:4])


async def test_timer_rings_until_cancelled_and_never_reports_played(
    tmp_path: Path,
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    hooks = tmp_path / "hooks.jsonl"
    async with (
        satellite(
            tmp_path,
            "--mic-file",
            str(wav),
            "--timer-repeat",
            "4",
            "--event-command",
            f"tee -a {hooks}",
        ) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(
            Event("timer-started", {"id": "t1", "total_seconds": 60, "name": "tea"})
        )
        await client.write_event(Event("timer-finished", {"id": "t1"}))
        await asyncio.sleep(1.3)
        await client.write_event(Event("timer-cancelled", {"id": "t1"}))
        await client.write_event(Event("ping", {"text": "after"}))
        _, before = await read_until(client, "pong", 5)
        await asyncio.sleep(0.3)
        await client.write_event(Event("ping", {"text": "later"}))
        _, between = await read_until(client, "pong", 5)

    rings = sorted(tmp_path.glob("played-sounds.timer-*.wav"))
    played_s = sum(speech.seconds(speech.read_wav_pcm(p)) for p in rings)
    one_ring = speech.seconds(speech.read_wav_pcm(default_path("timer")))
    assert len(rings) == 4  # all queued; the cancel cut them short
    assert one_ring < played_s < 2 * one_ring  # rang once and a bit, not four times
    assert not [
        e for e in before + between if e.type in ("played", "voicestack-progress")
    ]
    states = [json.loads(line) for line in hooks.read_text().splitlines()]
    timers = [s["event"] for s in states if s["state"] == "timer"]
    assert timers == ["timer-started", "timer-finished", "timer-cancelled"]


async def test_wake_word_during_playback_stops_it_and_starts_a_request(
    tmp_path: Path,
) -> None:
    wav = speech.write_wav(
        tmp_path / "mic.wav", speech.pad(speech.speak(COMMAND), 1.5, 2.0)
    )
    reply = speech.speak(
        "Here is a long answer about the weather this week, which nobody will "
        "hear to the end because someone says the wake word."
    )
    async with (
        satellite(tmp_path, "--mic-file", str(wav), "--no-sounds") as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await send_stream(client, reply)
        started = time.monotonic()
        run, before = await read_until(client, "run-pipeline", 10)
        stopped_after = time.monotonic() - started
        after: list[Event] = []
        if "played" not in [e.type for e in before]:
            _, after = await read_until(client, "played", 2)  # flushed counts too

    assert run.data["wake_word_name"] == "hey_jarvis"
    assert "detection" in [e.type for e in before]
    progress = [e.data for e in before + after if e.type == "voicestack-progress"]
    assert progress[-1]["state"] == "flushed"
    assert stopped_after < speech.seconds(reply) / 2
    written = speech.read_wav_pcm(tmp_path / "played.1.wav")
    assert speech.seconds(written) < speech.seconds(reply) / 2


async def test_listen_now_streams_speech_without_a_wake_word(tmp_path: Path) -> None:
    wav = speech.write_wav(
        tmp_path / "mic.wav",
        speech.pad(speech.speak("What time is it in the kitchen?"), 1.0, 2.0),
    )
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(Event("voicestack-listen", {"timeout": 5}))
        run, _ = await read_until(client, "run-pipeline", 5)
        preroll, _ = await read_until(client, "voicestack-preroll", 2)
        audio = await read_audio(client, 3.0)

    assert run.data.get("wake_word_name") is None
    assert preroll.data["samples"] > 0  # the onset is not clipped
    assert "time" in speech.transcribe(audio).lower()


async def test_listen_timeout_zero_closes_the_window(tmp_path: Path) -> None:
    pcm = speech.pad(speech.speak("What time is it in the kitchen?"), 1.5, 1.0)
    wav = speech.write_wav(tmp_path / "mic.wav", pcm)
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(Event("voicestack-listen", {"timeout": 30}))
        await client.write_event(Event("voicestack-listen", {"timeout": 0}))
        # The mic file plays in real time from run-satellite: wait it out.
        await asyncio.sleep(speech.seconds(pcm) + 0.5)
        await client.write_event(Event("ping", {"text": "after"}))
        _, seen = await read_until(client, "pong", 5)

    assert "run-pipeline" not in [e.type for e in seen]


async def test_a_wake_word_uses_up_an_open_listen_window(tmp_path: Path) -> None:
    # The window is open while an answer plays (speech then starts nothing); the
    # wake word interrupts it and starts a request: the window is used up.
    pcm = speech.pad(speech.speak(COMMAND), 0.5, 2.0)
    pcm += speech.pad(speech.speak("What time is it?"), 0.0, 1.0)
    wav = speech.write_wav(tmp_path / "mic.wav", pcm)
    answer = speech.silence(4.0)
    async with (
        satellite(tmp_path, "--mic-file", str(wav), "--no-sounds") as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(Event("voicestack-listen", {"timeout": 30}))
        await send_stream(client, answer)
        run, _ = await read_until(client, "run-pipeline", 10)
        await client.write_event(Event("transcript", {"text": "kitchen lights"}))
        await asyncio.sleep(speech.seconds(pcm))  # the rest of the mic file
        await client.write_event(Event("ping", {"text": "after"}))
        _, seen = await read_until(client, "pong", 5)

    assert run.data.get("wake_word_name") == "hey_jarvis"
    assert "run-pipeline" not in [e.type for e in seen]


async def test_listen_now_times_out_on_silence(tmp_path: Path) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(3.0))
    hooks = tmp_path / "hooks.jsonl"
    async with (
        satellite(
            tmp_path, "--mic-file", str(wav), "--event-command", f"tee -a {hooks}"
        ) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(Event("voicestack-listen", {"timeout": 0.5}))
        await asyncio.sleep(1.5)
        await client.write_event(Event("ping", {"text": "x"}))
        _, seen = await read_until(client, "pong", 5)

    assert "run-pipeline" not in [e.type for e in seen]
    states = [json.loads(line)["state"] for line in hooks.read_text().splitlines()]
    assert states == ["idle", "listening", "idle"]


async def test_event_command_sees_every_state_of_a_request(tmp_path: Path) -> None:
    wav = speech.write_wav(
        tmp_path / "mic.wav", speech.pad(speech.speak(COMMAND), 0.5, 2.0)
    )
    hooks = tmp_path / "hooks.jsonl"
    reply = speech.speak("Done.")
    async with (
        satellite(
            tmp_path,
            "--mic-file",
            str(wav),
            "--no-sounds",
            "--event-command",
            f"tee -a {hooks}",
        ) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await read_until(client, "audio-start", 10)
        await client.write_event(Event("transcript", {"text": "kitchen lights"}))
        await read_until(client, "audio-stop", 5)
        await send_stream(client, reply)
        await read_until(client, "played", 5)
        await client.write_event(Event("pause-satellite"))
        await client.write_event(Event("ping", {"text": "x"}))
        await read_until(client, "pong", 5)
        await asyncio.sleep(0.2)

    lines = [json.loads(line) for line in hooks.read_text().splitlines()]
    assert [line["state"] for line in lines] == [
        "idle",
        "wake",
        "listening",
        "thinking",
        "speaking",
        "idle",
        "muted",
        "idle",  # the owner went away
    ]
    assert lines[1]["name"] == "hey_jarvis"


async def test_a_request_ending_in_an_open_window_plays_no_done_chime(
    tmp_path: Path,
) -> None:
    """Fragments of one thought: the chime would hide the start of the next one."""
    first = speech.speak("Turn on the kitchen light.")
    second = speech.speak("And the living room lamp.")
    pcm = speech.pad(first + speech.silence(0.8) + second, 1.0, 2.0)
    wav = speech.write_wav(tmp_path / "mic.wav", pcm)
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await take_ownership(client, end_of_speech_s=0.5)
        await client.write_event(Event("voicestack-listen", {"timeout": 10}))
        await read_until(client, "run-pipeline", 5)
        # As VoiceStack does for a fragment: the window stays open past it.
        await client.write_event(Event("voicestack-listen", {"timeout": 10}))
        _, fragment = await read_until(client, "audio-stop", 10)
        await read_until(client, "run-pipeline", 5)
        _, next_fragment = await read_until(client, "audio-stop", 10)

    assert not list(tmp_path.glob("played-sounds.done-*.wav"))
    assert "kitchen" in speech.transcribe(audio_of(fragment)).lower()
    assert "and" in speech.transcribe(audio_of(next_fragment)).lower().split()
