"""Always-listening mode: every speech segment is a request, no wake word needed.

``voicestack-listen {"continuous": true}`` turns it on; the satellite then starts
a request at each speech onset (with the preroll) and ends it itself at the end
of speech. Muting (``pause-satellite``) stops it, whatever the mode.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from devstack import speech
from devstack.satellite import read_until, satellite
from tests.satellite.owner import audio_of, take_ownership

FIRST = "Turn on the porch light."
SECOND = "And the hallway, please."


def _two_segments(tmp_path: Path) -> Path:
    return speech.write_wav(
        tmp_path / "mic.wav",
        speech.pad(speech.speak(FIRST), 1.0, 2.5)
        + speech.pad(speech.speak(SECOND), 0.0, 2.5),
    )


async def _next_request(client: AsyncTcpClient) -> tuple[Event, bytes]:
    """The next request's run-pipeline and its audio up to audio-stop."""
    run, _ = await read_until(client, "run-pipeline", 10)
    _, seen = await read_until(client, "audio-stop", 10)
    return run, audio_of(seen)


async def test_each_speech_segment_becomes_a_request(tmp_path: Path) -> None:
    async with (
        satellite(tmp_path, "--mic-file", str(_two_segments(tmp_path))) as sat,
        sat.connect() as client,
    ):
        await take_ownership(client, end_of_speech_s=0.7)
        await client.write_event(Event("voicestack-listen", {"continuous": True}))
        first_run, first = await _next_request(client)
        second_run, second = await _next_request(client)

    assert first_run.data.get("wake_word_name") is None
    assert second_run.data.get("wake_word_name") is None
    assert speech.transcribe(first).lower().startswith("turn on the porch")
    assert "hallway" in speech.transcribe(second).lower()
    # No "done" chime after each segment (the TV would set it off all day).
    assert not list(tmp_path.glob("played-sounds.done-*.wav"))


@pytest.mark.parametrize(
    "stop",
    [
        Event("pause-satellite"),  # mute
        Event("voicestack-listen", {"continuous": False}),  # back to the wake word
    ],
    ids=["muted", "continuous_off"],
)
async def test_speech_starts_nothing_once_stopped(tmp_path: Path, stop: Event) -> None:
    wav = _two_segments(tmp_path)
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await take_ownership(client, end_of_speech_s=0.7)
        await client.write_event(Event("voicestack-listen", {"continuous": True}))
        await client.write_event(stop)
        # The mic file plays in real time from run-satellite: wait it out.
        await asyncio.sleep(speech.seconds(speech.read_wav_pcm(wav)) + 0.5)
        await client.write_event(Event("ping", {"text": "after"}))
        _, seen = await read_until(client, "pong", 5)

    assert "run-pipeline" not in [event.type for event in seen]
