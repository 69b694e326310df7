"""``--wake-uri``: wake words from a Wyoming wake word service, not in-process.

For a wyoming-satellite user whose wake word runs elsewhere (wyoming-openwakeword
on the Home Assistant host, a microWakeWord add-on): the mic streams to the
service (``detect`` with the names, ``audio-start``, ``audio-chunk``...) and its
``detection`` events start requests exactly as the built-in detector's do.

``RemoteWake`` has ``WakeDetector``'s interface. ``process`` runs on the
listener's inference thread, so it hands audio to the event loop and picks up
detections that arrived since (at most one 80 ms chunk late). Names are compared
as wyoming-satellite compares them: ``hey_jarvis_v0.1`` and ``Hey Jarvis`` are
``hey_jarvis``.
"""

from __future__ import annotations

import asyncio
from collections import deque
import logging
import re

import numpy as np
from wyoming.audio import AudioChunk, AudioStart
from wyoming.event import Event
from wyoming.wake import Detect, Detection

from .audio import RATE
from .peer import Peer
from .service_link import ServiceLink
from .wake import WakeWordSpec

_LOGGER = logging.getLogger(__name__)


def normalize(name: str) -> str:
    """``Hey Jarvis`` / ``hey_jarvis_v0.1`` -> ``hey_jarvis``."""
    name = re.sub(r"_v\d+(\.\d+)*$", "", name.strip().lower())
    return re.sub(r"[^a-z0-9]+", "_", name).strip("_")


class RemoteWake:
    """Feed 16 kHz int16 audio to a Wyoming wake word service, get detections."""

    def __init__(
        self,
        address: tuple[str, int],
        names: list[str],
        *,
        refractory_samples: int = 32000,
        write_timeout_s: float = 5.0,
    ) -> None:
        """Nothing connects until ``start``."""
        self._specs = {normalize(n): WakeWordSpec(n, None, 0.5) for n in names}
        self._active = list(self._specs)
        self._refractory = refractory_samples
        self._quiet_until: dict[str, int] = {}
        self._detections: deque[str] = deque(maxlen=8)  # from the loop's thread
        self._loop: asyncio.AbstractEventLoop | None = None
        host, port = address
        self.description = f"a Wyoming wake word service at tcp://{host}:{port}"
        self._link = ServiceLink(
            "wake word service",
            address,
            on_connect=self._begin,
            on_event=self._on_event,
            write_timeout_s=write_timeout_s,
        )

    @property
    def specs(self) -> list[WakeWordSpec]:
        """The wake words asked of the service (Home Assistant's info)."""
        return list(self._specs.values())

    @property
    def active(self) -> list[str]:
        """Names of the wake words listened for now."""
        return [self._specs[key].name for key in self._active]

    def start(self) -> None:
        """Connect to the service (and keep reconnecting) from the running loop."""
        self._loop = asyncio.get_running_loop()
        self._link.start()

    def set_active(self, names: list[str]) -> list[str]:
        """Only ``names`` (a peer's ``detect``); unknown ones are ignored, as in-process."""
        known = [normalize(n) for n in names if normalize(n) in self._specs]
        if len(known) < len(names):
            _LOGGER.warning("Ignoring unknown wake word(s) from peer: %s", names)
        self._active = known or list(self._specs)
        if self._link.peer is not None:
            self._begin(self._link.peer)  # a new detect for the service
        return self.active

    def process(self, samples: np.ndarray, end_sample: int) -> str | None:
        """Send ``samples``; the first detection since the last call, if any."""
        if self._loop is not None:
            chunk = AudioChunk(rate=RATE, width=2, channels=1, audio=samples.tobytes())
            self._loop.call_soon_threadsafe(self._link.send, chunk.event())
        while self._detections:
            key = self._detections.popleft()
            if key in self._active and end_sample >= self._quiet_until.get(key, 0):
                self._quiet_until[key] = end_sample + self._refractory
                return self._specs[key].name
        return None

    def reset(self) -> None:
        """Forget detections not yet taken (they belong to the audio before)."""
        self._detections.clear()

    def close(self) -> None:
        """The connection ends with the event loop."""

    async def aclose(self) -> None:
        """Close the connection to the service."""
        await self._link.close()

    def _begin(self, peer: Peer) -> None:
        names = [self._specs[key].name for key in self._active]
        peer.send(Detect(names=names).event())
        peer.send(AudioStart(rate=RATE, width=2, channels=1).event())

    def _on_event(self, event: Event) -> None:
        if Detection.is_type(event.type):
            name = Detection.from_event(event).name or ""
            _LOGGER.debug("Wake word service detected %r", name)
            self._detections.append(normalize(name))
