"""The owner's side of the talk, as the satellite tests say it again and again.

Home Assistant (VoiceStack) owns the satellite: it takes it over, plays replies
through it and reads the requests it streams. ``devstack.satellite`` starts the
satellite and reads events up to one type; this adds the owner's phrases.
"""

from __future__ import annotations

from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event
from wyoming.satellite import RunSatellite

from devstack.satellite import read_until
import voicestack_protocol as protocol

RATE = 16000  # what speech.speak returns: 16-bit mono
BYTES_PER_S = RATE * 2


async def take_ownership(client: AsyncTcpClient, end_of_speech_s: float) -> None:
    """As VoiceStack does: a hello asking to end requests after that much quiet, run."""
    hello = {"protocol": protocol.PROTOCOL_VERSION, "end_of_speech_s": end_of_speech_s}
    await client.write_event(Event(protocol.HELLO, hello))
    await client.write_event(RunSatellite().event())


async def send_stream(
    client: AsyncTcpClient,
    pcm: bytes,
    stream: object = None,
    *,
    chunk_bytes: int | None = None,
    end: bool = True,
) -> None:
    """``audio-start`` (``stream`` as its id, if given), ``pcm``, ``audio-stop``.

    The audio goes in one ``audio-chunk``, or in pieces of ``chunk_bytes``; with
    ``end=False`` the stream stays open.
    """
    start = AudioStart(rate=RATE, width=2, channels=1).event()
    if stream is not None:
        start.data[protocol.STREAM] = stream
    await client.write_event(start)
    pieces = (
        [pcm]
        if chunk_bytes is None
        else [pcm[at : at + chunk_bytes] for at in range(0, len(pcm), chunk_bytes)]
    )
    for piece in pieces:
        await client.write_event(
            AudioChunk(rate=RATE, width=2, channels=1, audio=piece).event()
        )
    if end:
        await client.write_event(AudioStop().event())


async def read_audio(client: AsyncTcpClient, seconds: float) -> bytes:
    """The request's next ``audio-chunk``s, until ``seconds`` of audio came."""
    audio = b""
    while len(audio) < seconds * BYTES_PER_S:
        event, _ = await read_until(client, "audio-chunk", 5)
        audio += AudioChunk.from_event(event).audio
    return audio


def audio_of(events: list[Event]) -> bytes:
    """The audio of the ``audio-chunk`` events among ``events``, in order."""
    return b"".join(
        AudioChunk.from_event(event).audio
        for event in events
        if AudioChunk.is_type(event.type)
    )
