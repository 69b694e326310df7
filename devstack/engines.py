"""The speech engines a home runs, as servers: whisper and Piper, started together.

Both start at once and are warmed up as a user's long-running servers are; a
transcription goes through the whisper server as Home Assistant sends it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextlib import AbstractContextManager, AsyncExitStack
from dataclasses import dataclass
from typing import TypeVar

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event as WyomingEvent
from wyoming.tts import Synthesize, SynthesizeVoice

from devstack import servers, speech
from devstack.errors import StackError
from devstack.servers import VOICE
from voicestack_satellite.mic import CHUNK_SAMPLES

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class Engines:
    """The running speech servers."""

    whisper: servers.Server
    piper: servers.Server


async def _enter_in_thread(
    stack: AsyncExitStack, manager: AbstractContextManager[_T]
) -> _T:
    """Enter a blocking context manager in a thread; ``stack`` exits it in one too.

    The exit is registered before entering and waits for the entering thread, so a
    server whose start was interrupted (Ctrl-C, a failed sibling) is still stopped.
    """
    entering = asyncio.ensure_future(asyncio.to_thread(manager.__enter__))

    async def leave(*_exc: object) -> bool:
        try:
            await entering
        except Exception:  # noqa: BLE001 - it never started; its own cleanup ran
            return False
        await asyncio.to_thread(manager.__exit__, None, None, None)
        return False

    stack.push_async_exit(leave)
    return await asyncio.shield(entering)


async def start_engines(stack: AsyncExitStack) -> Engines:
    """Whisper and Piper at once (each loads its model for seconds), stopped by ``stack``."""
    results = await asyncio.gather(
        _enter_in_thread(stack, servers.whisper_server()),
        _enter_in_thread(stack, servers.piper_server()),
        return_exceptions=True,
    )
    for name, result in zip(
        ("wyoming-faster-whisper", "wyoming-piper"), results, strict=True
    ):
        if isinstance(result, BaseException):
            raise StackError(f"{name} did not start: {result}") from result
    whisper, piper = results
    assert isinstance(whisper, servers.Server)
    assert isinstance(piper, servers.Server)
    return Engines(whisper=whisper, piper=piper)


async def warm_up(engines: Engines, pcm: bytes) -> str:
    """One request to each engine, as Home Assistant will send them.

    wyoming-piper loads its voice on the first ``synthesize`` and faster-whisper's
    first transcription is slow too; a user's server has long paid for that, so
    the demo and the benchmark pay it here. Returns what whisper heard.
    """
    _, transcript = await asyncio.gather(
        _synthesize(engines.piper, "Ready."),
        transcribe_with_server(engines.whisper, pcm),
    )
    return transcript


async def _synthesize(server: servers.Server, text: str) -> None:
    async with AsyncTcpClient(server.host, server.port) as client:
        await client.write_event(
            Synthesize(text=text, voice=SynthesizeVoice(name=VOICE)).event()
        )
        await _read_until(client, AudioStop.is_type)


async def transcribe_with_server(server: servers.Server, pcm: bytes) -> str:
    """What the whisper server hears in 16 kHz mono int16 PCM."""
    async with AsyncTcpClient(server.host, server.port) as client:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(
            AudioStart(rate=speech.RATE, width=2, channels=1).event()
        )
        step = 2 * CHUNK_SAMPLES
        for start in range(0, len(pcm), step):
            chunk = AudioChunk(
                rate=speech.RATE, width=2, channels=1, audio=pcm[start : start + step]
            )
            await client.write_event(chunk.event())
        await client.write_event(AudioStop().event())
        event = await _read_until(client, Transcript.is_type)
    return Transcript.from_event(event).text


async def _read_until(
    client: AsyncTcpClient, wanted: Callable[[str], bool], timeout_s: float = 60.0
) -> WyomingEvent:
    async with asyncio.timeout(timeout_s):
        while (event := await client.read_event()) is not None:
            if wanted(event.type):
                return event
    raise StackError(f"{client.host}:{client.port} closed before answering")
