"""A Wyoming wake word service on loopback, as wyoming-openwakeword serves one.

wyoming-openwakeword is not on PyPI in a version that runs here (1.8.2, from
2023, needs tflite-runtime, which has no wheel for these Pythons; 2.x ships as
a container image), so the satellite's ``--wake-uri`` is tested against this:
the same engine 2.x uses (pyopen-wakeword, models inside the wheel), the same
events (``describe``/``info`` with a wake program, ``detect`` naming the words,
``audio-start``/``audio-chunk``/``audio-stop``, ``detection`` with the name
and the timestamp in ms, ``not-detected`` at the end of a stream without one),
served by wyoming's own ``AsyncServer`` in a process of its own.

Run: ``python devstack/wake_server.py --port PORT`` (it imports no devstack
module, so any Python with pyopen-wakeword and wyoming runs it);
``wake_server()`` starts it for a test.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from pyopen_wakeword import Model, OpenWakeWord, OpenWakeWordFeatures
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.event import Event
from wyoming.info import Attribution, Describe, Info, WakeModel, WakeProgram
from wyoming.server import AsyncEventHandler, AsyncServer
from wyoming.wake import Detect, Detection, NotDetected

if TYPE_CHECKING:
    from devstack.servers import Server

THRESHOLD = 0.5
_ATTRIBUTION = Attribution(name="VoiceStack devstack", url="")


def _info() -> Info:
    models = [
        WakeModel(
            name=model.value,
            attribution=_ATTRIBUTION,
            installed=True,
            description=model.value,
            version=None,
            languages=["en"],
            phrase=model.value.replace("_", " "),
        )
        for model in Model
    ]
    program = WakeProgram(
        name="openwakeword",
        attribution=_ATTRIBUTION,
        installed=True,
        description="openWakeWord (pyopen-wakeword)",
        version=None,
        models=models,
    )
    return Info(wake=[program])


class WakeHandler(AsyncEventHandler):
    """One client: the words it asked for, detected in the audio it streams."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        """All wake words until the client names some; models load when asked."""
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._names = [model.value for model in Model]
        self._features = OpenWakeWordFeatures.from_builtin()
        self._models: dict[str, OpenWakeWord] = {}
        self._converter = AudioChunkConverter(rate=16000, width=2, channels=1)
        self._samples = 0
        self._detected = False

    async def handle_event(self, event: Event) -> bool:
        """Answer ``describe``, take ``detect``, listen to the stream."""
        if Describe.is_type(event.type):
            await self.write_event(_info().event())
        elif Detect.is_type(event.type):
            names = Detect.from_event(event).names
            known = [name for name in names or [] if name in self._names]
            self._names = known or [model.value for model in Model]
        elif AudioStart.is_type(event.type):
            self._samples, self._detected = 0, False
        elif AudioChunk.is_type(event.type):
            chunk = self._converter.convert(AudioChunk.from_event(event))
            self._samples += len(chunk.audio) // 2
            for name in self._detect(chunk.audio):
                self._detected = True
                timestamp = self._samples * 1000 // 16000
                await self.write_event(
                    Detection(name=name, timestamp=timestamp).event()
                )
        elif AudioStop.is_type(event.type) and not self._detected:
            await self.write_event(NotDetected().event())
        return True

    def _detect(self, audio: bytes) -> list[str]:
        found = []
        for embedding in self._features.process_streaming(audio):
            for name in self._names:
                model = self._models.get(name)
                if model is None:
                    model = self._models[name] = OpenWakeWord.from_builtin(Model(name))
                if any(p >= THRESHOLD for p in model.process_streaming(embedding)):
                    model.reset()
                    found.append(name)
        return found


@contextmanager
def wake_server(port: int | None = None) -> Iterator[Server]:
    """The service on ``port`` (default: a free one) on loopback, until the block ends."""
    from devstack import servers  # the script itself imports no devstack module

    port = port or servers.free_port()
    args = [servers.engines_python(), str(Path(__file__)), "--port", str(port)]
    with servers.running(args, port) as server:
        yield server


def main() -> None:
    """Serve until killed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    port = parser.parse_args().port
    server = AsyncServer.from_uri(f"tcp://127.0.0.1:{port}")
    asyncio.run(server.run(partial(WakeHandler)))


if __name__ == "__main__":
    main()
