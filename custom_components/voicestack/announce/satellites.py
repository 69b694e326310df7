"""One satellite's place in the announcer: how its announcements are said.

The announcer (``core/announce``, one for all satellites) decides what is said
when; this says it on one satellite, through that satellite's ``SpeechOutput``,
so announcements and voice responses share one Speaker and never overlap. It
follows the satellite's connection (a message for an offline satellite waits),
and keeps the preannounce sounds that ``assist_satellite.announce`` callers ask
for, by announcement id, until their announcement is said.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..core.announce import AnnounceOptions, Announcer, ReceiptStatus
from ..core.speaker import Playback
from ..core.wav import Pcm
from ..hub import SatelliteHub
from ..request.speech_output import SpeechOutput

_ANNOUNCE_KEYS = frozenset(AnnounceOptions().to_dict())


def announce_options(options: Mapping[str, Any]) -> AnnounceOptions:
    """The announcer's part of an entry's options (the rest is the router's, voice)."""
    return AnnounceOptions.from_dict(
        {key: value for key, value in options.items() if key in _ANNOUNCE_KEYS}
    )


class SatelliteAnnouncements:
    """Announcements on one satellite, from being added until ``remove``."""

    def __init__(
        self,
        announcer: Announcer,
        hub: SatelliteHub,
        speech: SpeechOutput,
        *,
        on_removed: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Join the announcer with the entry's options; follow the connection.

        ``on_removed`` is awaited once the satellite has left the announcer.
        """
        self._on_removed = on_removed
        self._shared = announcer  # the announcer of every satellite
        self.hub = hub
        self._speech = speech
        # Sounds to play before announcements, by announcement id (preannounce).
        self._preambles: dict[str, Pcm] = {}
        self.announcer = announcer.add_speaker(
            hub.satellite_id,
            self._say,
            hub.speaker.stop,
            online=hub.connected,
            options=announce_options(hub.entry.options),
            prefetch=speech.prefetch,
        )
        self._unsubscribe = hub.async_subscribe_connection(self.announcer.set_online)
        self._removed = False

    def set_options(self, options: Mapping[str, Any]) -> None:
        """The entry's options changed: new windows and limits apply at once."""
        self.announcer.set_options(announce_options(options))

    @property
    def active(self) -> bool:
        """Announcing on this satellite (until ``remove``)."""
        return not self._removed

    async def remove(self) -> None:
        """Say what is queued (bounded by the shutdown flush), then stop announcing.

        The entry's unload calls this before its platforms go, so an unload or
        reload loses nothing it had time to say.
        """
        if self._removed:
            return
        self._removed = True
        self._unsubscribe()
        await self._shared.remove_speaker(self.hub.satellite_id)
        if self._on_removed is not None:
            await self._on_removed()

    async def _say(self, text: str, ids: tuple[str, ...]) -> Playback:
        """Say merged announcements ``ids``; a preannounce sound asked for plays once."""
        preamble = next((self._preambles[i] for i in ids if i in self._preambles), None)
        return await self._speech.say(text, preamble)

    async def announce_and_wait(
        self, message: str, *, source: str, preamble: Pcm | None = None
    ) -> str:
        """Queue ``message`` like any announcement; return its fate once settled.

        Home Assistant's ``assist_satellite.announce`` returns once the message
        has been played. Here it waits its turn in the announcer (merged,
        prioritized, counted) and returns when its message was finished, dropped
        or cut short for good (a lost satellite says it again after
        reconnecting, and a failed high or critical message is tried again, so
        neither is the end). ``preamble`` (the preannounce chime) is played
        first, in the same turn of the Speaker.
        """
        (receipt,) = self._shared.announce(
            message, source=source, targets=[self.hub.satellite_id]
        )
        if receipt.status is not ReceiptStatus.QUEUED or receipt.settled is None:
            return str(receipt.status)
        if preamble is not None:
            self._preambles[receipt.id] = preamble
        try:
            # Shielded: a caller that stops waiting leaves the message its fate.
            return str(await asyncio.shield(receipt.settled))
        finally:
            self._preambles.pop(receipt.id, None)
