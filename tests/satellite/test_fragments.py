"""Fragments said in a row in a listen window: each sent whole, once, and ended.

After the satellite ended one fragment (its own end of speech), the next may
start a moment later ("Turn on the kitchen light." … "and the fan too."). The
VAD, fresh after each request, notices it late, so the new request's audio
starts from the mic buffer: where the last one ended, never earlier (nothing
sent twice) nor later (nothing lost), and its end of speech counts what the
buffer held. Real satellite, Piper's speech with its own silence cut.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from devstack import follow_on, speech
from devstack.satellite import read_until, satellite
from tests.satellite.owner import audio_of, take_ownership
import voicestack_protocol as protocol

LEAD_S = 1.0
END_OF_SPEECH_S = 0.7  # Home Assistant's default VAD sensitivity


async def _next_request(client: AsyncTcpClient) -> tuple[dict[str, int], bytes]:
    """The next request's preroll metadata and audio, once it ended."""
    preroll, _ = await read_until(client, protocol.PREROLL, 5)
    # As VoiceStack does for a fragment: the window stays open past it.
    await client.write_event(Event("voicestack-listen", {"timeout": 10}))
    # Its own end of speech, well before --max-request (15 s).
    _, events = await read_until(client, "audio-stop", 5)
    return preroll.data, audio_of(events)


@pytest.mark.parametrize("gap_s", [0.8, 1.0])
async def test_a_short_fragment_after_another_is_sent_whole_once_and_ended(
    tmp_path: Path, gap_s: float
) -> None:
    first, second = follow_on.fragments()
    pcm = speech.pad(first + speech.silence(gap_s) + second, LEAD_S, 3.0)
    wav = speech.write_wav(tmp_path / "mic.wav", pcm)
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await take_ownership(client, end_of_speech_s=END_OF_SPEECH_S)
        await client.write_event(Event("voicestack-listen", {"timeout": 10}))
        one, one_audio = await _next_request(client)
        two, two_audio = await _next_request(client)

    # The second starts exactly where the first ended: nothing lost, no repeat.
    assert two["start"] == one["start"] + len(one_audio) // 2
    heard = speech.transcribe(two_audio).lower()
    assert "fan" in heard, heard
    assert "kitchen" not in heard, heard
    assert "kitchen" in speech.transcribe(one_audio).lower()
