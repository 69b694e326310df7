"""Playback identity and the bounded player, against the real satellite process.

Every stream is reported under the id its peer gave in ``audio-start`` (or the
satellite's own), ``played`` says whether it played to its end, a new owner
never hears about (or hears) the previous owner's audio, and what the owner
sends waits in a bounded buffer whose memory goes back after a flush.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path
import socket
import time

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event, async_read_event, write_event

from devstack import speech
from devstack.satellite import (
    RunningSatellite,
    read_until,
    run_satellite,
    satellite,
)
from devstack.waiting import wait_for
from tests.satellite import virtual_time
from tests.satellite.owner import send_stream
from tests.satellite.playback_log import PlaybackLog, Progress
from voicestack_satellite.player import MAX_AHEAD_S, Player

RATE = 16000  # what speech.speak returns: 16-bit mono


def silent_mic(tmp_path: Path) -> tuple[str, str]:
    return "--mic-file", str(speech.write_wav(tmp_path / "mic.wav", speech.silence(1)))


def wavs(sat: RunningSatellite) -> list[float]:
    """Seconds of each stream the satellite played, in the order they ended."""
    written = sorted(
        sat.snd_file.parent.glob("played.*.wav"), key=lambda p: int(p.suffixes[0][1:])
    )
    return [speech.seconds(speech.read_wav_pcm(path)) for path in written]


async def test_played_and_progress_carry_the_peers_stream_id(tmp_path: Path) -> None:
    reply = speech.silence(0.5)
    async with (
        satellite(tmp_path, *silent_mic(tmp_path)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await send_stream(client, reply, "ha-1")
        first, before = await read_until(client, "played", 10)
        await send_stream(client, reply, "ha-2")
        second, _ = await read_until(client, "played", 10)

    progress = [e.data for e in before if e.type == "voicestack-progress"]
    assert progress
    assert {p["stream"] for p in progress} == {"ha-1"}
    assert progress[-1]["state"] == "played"
    assert first.data == {"stream": "ha-1", "state": "played"}
    assert second.data == {"stream": "ha-2", "state": "played"}


async def test_a_peer_without_ids_gets_the_satellites_own(tmp_path: Path) -> None:
    """A stock peer sends no id (and one that is no short string is replaced)."""
    reply = speech.silence(0.2)
    async with (
        satellite(tmp_path, *silent_mic(tmp_path)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client, extensions=False)
        await send_stream(client, reply)
        first, _ = await read_until(client, "played", 10)
        await send_stream(client, reply, "x" * 65)
        second, _ = await read_until(client, "played", 10)

    assert first.data["state"] == second.data["state"] == "played"
    assert isinstance(first.data["stream"], str)
    assert isinstance(second.data["stream"], str)
    assert first.data["stream"] != second.data["stream"]
    assert "x" not in second.data["stream"]
    assert "Ignoring audio-start stream id" in sat.log_text()


async def test_a_flushed_stream_says_so_in_played(tmp_path: Path) -> None:
    async with (
        satellite(tmp_path, *silent_mic(tmp_path)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await send_stream(client, speech.silence(5.0), "long")
        await read_until(client, "voicestack-progress", 5)
        await client.write_event(Event("voicestack-flush"))
        played, before = await read_until(client, "played", 5)

    final = [e.data for e in before if e.type == "voicestack-progress"][-1]
    assert final["state"] == "flushed"
    assert played.data == {"stream": "long", "state": "flushed"}


async def test_a_new_owner_drops_what_the_previous_owner_queued(tmp_path: Path) -> None:
    """The owner goes mid-answer; the next one hears nothing of it.

    The old answer used to keep playing, and its bare ``played`` went to the
    new owner, which took it for its own stream: both were heard, and Home
    Assistant freed its speaker too early.
    """
    async with satellite(tmp_path, *silent_mic(tmp_path)) as sat:
        first = sat.connect()
        await first.connect()
        await run_satellite(first)
        await send_stream(first, speech.silence(4.0), "old")
        await read_until(first, "voicestack-progress", 5)
        await first.disconnect()
        async with sat.connect() as second:
            await run_satellite(second)
            await send_stream(second, speech.silence(0.5), "new")
            played, before = await read_until(second, "played", 10)
        heard = wavs(sat)

    assert played.data == {"stream": "new", "state": "played"}
    assert all(e.data.get("stream") != "old" for e in before)
    old, new = heard
    assert old < 2.0  # cut when the new owner came, not played to its 4 s
    assert abs(new - 0.5) < 0.05


async def test_audio_after_a_timer_alarm_goes_to_its_own_stream(tmp_path: Path) -> None:
    """A timer rings while an answer streams: the answer keeps all its audio.

    Audio went to the newest stream, which was then the alarm's: the answer
    never ended, and nothing after it played again.
    """
    async with (
        satellite(tmp_path, *silent_mic(tmp_path), "--timer-repeat", "1") as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await send_stream(client, speech.silence(0.5), "answer", end=False)
        await client.write_event(Event("timer-finished", {"id": "tea"}))
        await client.write_event(
            AudioChunk(
                rate=RATE, width=2, channels=1, audio=speech.silence(0.5)
            ).event()
        )
        await client.write_event(AudioStop().event())
        played, before = await read_until(client, "played", 10)
        heard = wavs(sat)

    assert played.data == {"stream": "answer", "state": "played"}
    final = [e.data for e in before if e.type == "voicestack-progress"][-1]
    assert final["total"] == final["played"] == RATE
    assert len(heard) == 1
    assert abs(heard[0] - 1.0) < 0.05


def rss_mb(sat: RunningSatellite) -> float:
    """The satellite's resident memory."""
    status = Path(f"/proc/{sat.process.pid}/status").read_text()
    line = next(row for row in status.splitlines() if row.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


FLOOD_BYTES = 200 * 2**20
FLOOD_CHUNK = b"\x01\x00" * 16384  # 32 KiB of 22050 Hz audio, 0.74 s
HELD_BACK_S = 2.0  # no room for this long: the satellite holds the owner back


async def test_playback_memory_is_bounded_and_returns_after_a_flush(
    tmp_path: Path,
) -> None:
    """200 MiB of audio from the owner: it waits, and RSS stays within the bound.

    The satellite used to take everything: 55 -> 440 MB, and it stayed there
    after the flush. Now it takes 300 s of audio (13 MB at 22050 Hz) and reads
    the owner's next event once there is room, so the flush behind the audio
    is read after the few seconds the socket buffers hold, and the memory goes
    back to the system.
    """
    async with satellite(tmp_path, *silent_mic(tmp_path)) as sat:
        # A small send buffer on our side: what is in flight is the satellite's.
        sock = socket.create_connection(("127.0.0.1", sat.port))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
        sock.setblocking(False)
        reader, writer = await asyncio.open_connection(sock=sock)
        events: list[Event] = []
        reading = asyncio.create_task(_read_all(reader, events))
        writer.write(
            _encode(
                Event("voicestack-hello", {"protocol": 1}),
                Event("run-satellite"),
                Event("ping", {"text": "up"}),
            )
        )
        await wait_for(lambda: any(e.type == "pong" for e in events), 5, "pong")
        base = rss_mb(sat)
        writer.write(_encode(AudioStart(rate=22050, width=2, channels=1).event()))
        chunk = _encode(
            AudioChunk(rate=22050, width=2, channels=1, audio=FLOOD_CHUNK).event()
        )
        sent, peak = 0, base
        try:
            while sent < FLOOD_BYTES:
                writer.write(chunk)
                sent += len(FLOOD_CHUNK)
                await asyncio.wait_for(writer.drain(), HELD_BACK_S)
                peak = max(peak, rss_mb(sat))
        except TimeoutError:
            pass  # held back
        writer.write(_encode(Event("voicestack-flush")))
        await wait_for(lambda: any(e.type == "played" for e in events), 60, "played")
        flushed_at = time.monotonic()
        while rss_mb(sat) - base > 4 and time.monotonic() - flushed_at < 5:
            await asyncio.sleep(0.1)
        after = rss_mb(sat)
        writer.close()
        reading.cancel()

    assert 5 * 2**20 < sent < 20 * 2**20  # 13 MB in the player, the rest in sockets
    assert peak - base < 30  # MB; it grew by 385 MB before
    assert after - base < 4
    played = next(e for e in events if e.type == "played")
    assert played.data["state"] == "flushed"


def _encode(*events: Event) -> bytes:
    buffer = io.BytesIO()
    for event in events:
        write_event(event, buffer)
    return buffer.getvalue()


async def _read_all(reader: asyncio.StreamReader, events: list[Event]) -> None:
    while (event := await async_read_event(reader)) is not None:
        events.append(event)


class NullCard:
    """A sound card that takes every block (the player paces itself)."""

    keeps_played = False

    async def write(self, samples: np.ndarray) -> None:
        """Drop the samples."""

    def stream_ended(self, stream_id: str, samples: np.ndarray) -> None:
        """Nothing to keep."""

    async def close(self) -> None:
        """Nothing to close."""


def test_the_owner_waits_at_the_bound_until_a_flush() -> None:
    """Paused, nothing makes room: the owner's audio waits at 300 s, a flush frees it."""

    async def scenario() -> tuple[int, int, bool]:
        player = Player(NullCard(), RATE)
        player.start()
        player.pause()
        player.begin("1", RATE, 2, 1)
        one_second = speech.silence(1.0)
        accepted = 0

        async def owner() -> None:
            nonlocal accepted
            for _ in range(round(MAX_AHEAD_S) + 100):
                await player.receive("1", one_second)
                accepted += 1

        sending = asyncio.create_task(owner())
        await asyncio.sleep(60)  # virtual: nothing plays while paused
        held = accepted
        player.flush()
        await asyncio.wait_for(sending, 1)
        await player.close()
        return held, accepted, player.busy

    held, accepted, busy = virtual_time.run(scenario())

    assert held == MAX_AHEAD_S
    assert accepted == MAX_AHEAD_S + 100  # the rest was dropped with the stream
    assert not busy


def test_a_resume_goes_back_at_most_the_history_kept() -> None:
    """Played audio is let go 30 s behind; a resume before that starts there."""

    async def scenario() -> tuple[list[Progress], int]:
        log = PlaybackLog()
        player = Player(NullCard(), RATE)
        player.subscribe(log)
        player.start()
        player.begin("1", RATE, 2, 1)
        for _ in range(60):  # as the network brings it: a second at a time
            await player.receive("1", speech.silence(1.0))
        player.end("1")
        while not log.progress or log.progress[-1].played < 45 * RATE:
            await asyncio.sleep(0.05)
        player.pause()
        resumed = len(log.progress)  # the reports from here on follow the resume
        player.resume(offset=0)
        while log.progress[-1].state != "played":
            await asyncio.sleep(0.05)
        await player.close()
        return log.progress, resumed

    reports, resumed = virtual_time.run(scenario())

    first_after = reports[resumed].played / RATE
    assert 15.0 <= first_after <= 15.2  # 45 s played, 30 s kept
    assert reports[-1] == ("1", 60 * RATE, 60 * RATE, "played")
