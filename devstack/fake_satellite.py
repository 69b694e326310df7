"""A peer at a satellite's address that misbehaves on cue (no satellite code runs).

What Home Assistant must bear from a neighbour's device: the tests of the voice
loop's limits and ``bench.memory_probes`` both talk to this one peer. It answers
``describe`` as a stock Wyoming satellite and ``ping`` with ``pong``, keeps the
connection that sent ``run-satellite`` (``owner``) and records the type of every
event Home Assistant sends. ``stream`` starts a request and never ends it; with
``bomb_on`` set to an event type, it answers that event with a header announcing
``BOMB_LENGTH`` bytes and streams zeros after it.

With ``extensions`` it claims to be a voicestack-satellite that accepts those
extension events (its ``info`` carries the ``voicestack`` block), answers every
stream Home Assistant ends with ``played`` (``auto_played``), and ``send``
makes it say whatever a test wants, well-formed or not: the barge-in glue's
tests play a satellite that reports pauses, verdicts and voiceprints on cue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.info import Attribution, Describe, Info, Satellite
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.satellite import RunSatellite

AUDIO_FORMAT = {"rate": 16000, "width": 2, "channels": 1}
BOMB_LENGTH = 2_000_000_000  # what a payload_length of 2e9 did to HA: issue 12 item 8
BOMB_WINDOW_S = 5.0
_ZEROS = bytes(1024 * 1024)


class FakeSatellite:
    """Listens on a free loopback port while entered."""

    def __init__(
        self,
        name: str = "fake",
        *,
        extensions: tuple[str, ...] = (),
        voiceprint: bool = False,
        auto_played: bool = False,
        hold: bool = False,
    ) -> None:
        """Not listening yet, and harmless; a stock satellite without ``extensions``.

        ``hold``: it says it keeps an answer paused through a held request.
        """
        self.name = name
        self.extensions = extensions
        self.voiceprint = voiceprint
        self.hold = hold
        self.auto_played = auto_played
        self.events: list[Event] = []  # every event Home Assistant sent, whole
        # What ``voicestack-enroll`` is answered with, in order (the id is added):
        # ``{"embedding": [...], "seconds": 2.0}`` or ``{"error": "too_short"}``.
        self.enroll_answers: list[dict[str, object]] = []
        self.port = 0
        self.received: list[str] = []  # event types Home Assistant sent
        self.sent_bytes = 0  # audio sent by ``stream``
        self.owner: asyncio.StreamWriter | None = None
        self.bomb_on: str | None = None
        self.bombs = 0
        self.bomb_bytes = 0  # zeros the sockets took after a bomb's header
        self._server: asyncio.Server | None = None
        self._stream: str | None = None  # the id of the last audio-start

    async def __aenter__(self) -> FakeSatellite:
        """Listen on a free port."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Stop listening and drop the owner."""
        assert self._server is not None
        self._server.close()
        if self.owner is not None:
            self.owner.transport.abort()
        await self._server.wait_closed()

    @property
    def running(self) -> bool:
        """Home Assistant sent ``run-satellite``."""
        return self.owner is not None

    async def _serve(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        try:
            while (event := await async_read_event(reader)) is not None:
                self.received.append(event.type)
                self.events.append(event)
                if event.type == self.bomb_on:
                    await self._bomb(writer)
                    return
                if Describe.is_type(event.type):
                    await async_write_event(self._info(), writer)
                elif RunSatellite.is_type(event.type):
                    self.owner = writer
                elif event.type == "ping":
                    pong = Event("pong", {"text": event.data.get("text")})
                    await async_write_event(pong, writer)
                elif event.type == "audio-start":
                    self._stream = (event.data or {}).get("stream")
                elif event.type == "voicestack-enroll" and self.enroll_answers:
                    answer = {"id": event.data["id"], **self.enroll_answers.pop(0)}
                    await async_write_event(
                        Event("voicestack-voiceprint", answer), writer
                    )
                elif event.type == "audio-stop" and self.auto_played:
                    played = {"stream": self._stream, "state": "played"}
                    await async_write_event(Event("played", played), writer)
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()

    async def _bomb(self, writer: asyncio.StreamWriter) -> None:
        """A header announcing ``BOMB_LENGTH`` bytes, then zeros for a while."""
        self.bombs += 1
        header = {"type": "audio-chunk", "data": AUDIO_FORMAT}
        writer.write(json.dumps({**header, "payload_length": BOMB_LENGTH}).encode())
        writer.write(b"\n")
        with contextlib.suppress(ConnectionError, OSError, TimeoutError):
            async with asyncio.timeout(BOMB_WINDOW_S):
                while True:
                    await writer.drain()
                    writer.write(_ZEROS)
                    self.bomb_bytes += len(_ZEROS)

    async def stream(
        self,
        chunk_bytes: int,
        pause_s: float = 0.0,
        total: float = float("inf"),
        start_stage: PipelineStage = PipelineStage.ASR,
    ) -> None:
        """``run-pipeline`` from ``start_stage``, then chunks up to ``total`` bytes.

        As fast as Home Assistant reads (and ``pause_s`` allows); the connection
        stays open after the last chunk: no ``audio-stop``.
        """
        writer = self.owner
        assert writer is not None
        run = RunPipeline(start_stage=start_stage, end_stage=PipelineStage.TTS)
        await async_write_event(run.event(), writer)
        await async_write_event(AudioStart(**AUDIO_FORMAT).event(), writer)
        chunk = AudioChunk(**AUDIO_FORMAT, audio=bytes(chunk_bytes)).event()
        sent = 0
        while sent < total:
            sent += chunk_bytes
            self.sent_bytes += chunk_bytes
            await async_write_event(chunk, writer)
            await asyncio.sleep(pause_s)

    async def say(self, pcm: bytes) -> None:
        """A request of ``pcm`` (16 kHz mono), as a barge-in streams its capture."""
        writer = self.owner
        assert writer is not None
        run = RunPipeline(start_stage=PipelineStage.ASR, end_stage=PipelineStage.TTS)
        await async_write_event(run.event(), writer)
        await async_write_event(AudioStart(**AUDIO_FORMAT).event(), writer)
        for at in range(0, len(pcm), 3200):
            chunk = AudioChunk(**AUDIO_FORMAT, audio=pcm[at : at + 3200])
            await async_write_event(chunk.event(), writer)
        await async_write_event(AudioStop().event(), writer)

    async def send(self, event: Event) -> None:
        """Send ``event`` to Home Assistant (the owner connection)."""
        assert self.owner is not None
        await async_write_event(event, self.owner)

    def sent(self, kind: str) -> list[Event]:
        """The events of type ``kind`` Home Assistant sent, in order."""
        return [event for event in self.events if event.type == kind]

    def played(self, stream: str) -> bytes:
        """The audio Home Assistant sent as ``stream``, at 16 kHz (to transcribe)."""
        chunks: list[bytes] = []
        rate, inside = 16000, False
        for event in self.events:
            if event.type == "audio-start":
                inside = (event.data or {}).get("stream") == stream
                rate = event.data["rate"] if inside else rate
            elif event.type == "audio-chunk" and inside:
                chunks.append(event.payload or b"")
            elif event.type == "audio-stop":
                inside = False
        samples = np.frombuffer(b"".join(chunks), dtype=np.int16)
        at = np.arange(0, len(samples), rate / 16000)
        return (
            np.interp(at, np.arange(len(samples)), samples).astype(np.int16).tobytes()
        )

    def _info(self) -> Event:
        """A stock Wyoming satellite's ``info`` (plus the extension block, if any)."""
        info = Info(
            satellite=Satellite(
                name=self.name,
                attribution=Attribution(name="devstack", url=""),
                installed=True,
                description="a peer at a satellite's address",
                version="1",
            )
        ).event()
        if self.extensions:
            info.data["voicestack"] = {
                "id": f"fake-{self.name}",
                "protocol": 1,
                "sends": [],
                "accepts": list(self.extensions),
                "voiceprint": self.voiceprint,
                "hold": self.hold,
            }
        return info
