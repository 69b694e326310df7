"""A media player with no hardware: records every ``play_media`` and plays for real.

``RecordingPlayer`` is a Home Assistant ``MediaPlayerEntity`` (added on a
platform of its own, ``add_players``, so no integration is needed), reached
through Home Assistant's own services (``media_player.play_media``,
``tts.speak``). Each ``play_media`` is recorded with the time it was called, on
the player's clock, and the audio it resolves to: a ``tts`` media source is read
from Home Assistant's TTS (the cache the caller filled, or the engine), and the
player is ``playing`` for the audio's real length, then ``idle``. Its features
(announce, stop) and its availability are chosen by the test or benchmark.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from homeassistant.components import ffmpeg, tts
from homeassistant.components.media_player import (
    ATTR_MEDIA_ANNOUNCE,
    DOMAIN as MEDIA_PLAYER_DOMAIN,
    MediaPlayerEntity,
    MediaPlayerEntityFeature,
    MediaPlayerState,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import EntityPlatform

from custom_components.voicestack.core.clock import Cancellable, Clock, LoopClock
from custom_components.voicestack.core.wav import NotWavError, Pcm, read_wav
from devstack.entity_platform import add_entities

DECODE_RATE = 16000  # non-WAV media is decoded to 16 kHz mono to measure it


@dataclass(frozen=True, slots=True)
class PlayCall:
    """One ``play_media`` call."""

    at: float  # the player's clock when it was called
    ready_at: float  # when it had the audio (read from Home Assistant's TTS)
    media_id: str
    media_type: str
    announce: bool | None  # the ``announce`` argument, None if not given
    audio: Pcm

    @property
    def seconds(self) -> float:
        """How long it plays."""
        return self.audio.seconds


class RecordingPlayer(MediaPlayerEntity):
    """Plays TTS media for its real length and records every call."""

    _attr_should_poll = False

    def __init__(
        self,
        name: str,
        *,
        announce: bool = True,
        stop: bool = True,
        hangs: bool = False,
        clock: Clock | None = None,
    ) -> None:
        """``announce``/``stop``: the player supports ``MEDIA_ANNOUNCE``/``STOP``.

        ``hangs``: ``play_media`` records the call and never returns (a player
        whose integration waits for a device that does not answer). ``clock``
        times calls and playback (default: the event loop's).
        """
        self._attr_name = name
        self._attr_unique_id = f"recording-{name}"
        features = MediaPlayerEntityFeature.PLAY_MEDIA
        if announce:
            features |= MediaPlayerEntityFeature.MEDIA_ANNOUNCE
        if stop:
            features |= MediaPlayerEntityFeature.STOP
        self._attr_supported_features = features
        self._attr_state = MediaPlayerState.IDLE
        self._hangs = hangs
        self._clock = clock or LoopClock()
        self._ending: Cancellable | None = None
        self.calls: list[PlayCall] = []
        self.stops: list[float] = []  # clock times of ``media_stop``

    def set_available(self, available: bool) -> None:
        """Become (un)available, as a player that lost its network does."""
        self._attr_available = available
        if not available:
            self._end()
        self.async_write_ha_state()

    async def async_play_media(
        self, media_type: str, media_id: str, **kwargs: Any
    ) -> None:
        """Record the call, read the audio, play it for its length."""
        at = self._clock.now()
        _extension, data = await tts.async_get_media_source_audio(self.hass, media_id)
        audio = await decode_audio(self.hass, data)
        announce = kwargs.get(ATTR_MEDIA_ANNOUNCE)
        self.calls.append(
            PlayCall(at, self._clock.now(), media_id, media_type, announce, audio)
        )
        if self._hangs:
            await asyncio.Event().wait()
        self._end()
        self._attr_state = MediaPlayerState.PLAYING
        self._ending = self._clock.call_later(audio.seconds, self._played)
        self.async_write_ha_state()

    async def async_media_stop(self) -> None:
        """Stop what plays now."""
        self.stops.append(self._clock.now())
        self._end()
        self.async_write_ha_state()

    def _played(self) -> None:
        self._ending = None
        self._attr_state = MediaPlayerState.IDLE
        self.async_write_ha_state()

    def _end(self) -> None:
        if self._ending is not None:
            self._ending.cancel()
            self._ending = None
        self._attr_state = MediaPlayerState.IDLE


async def decode_audio(hass: HomeAssistant, data: bytes) -> Pcm:
    """WAV as it is; anything else (``tts.speak``'s MP3) through ffmpeg."""
    try:
        return read_wav(data)
    except NotWavError:
        pass
    proc = await asyncio.create_subprocess_exec(
        ffmpeg.get_ffmpeg_manager(hass).binary,
        *("-nostdin", "-i", "pipe:0", "-f", "s16le", "-ac", "1"),
        *("-ar", str(DECODE_RATE), "pipe:1"),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    pcm, _ = await proc.communicate(data)
    return Pcm(pcm, rate=DECODE_RATE, width=2, channels=1)


async def add_players(
    hass: HomeAssistant, players: Iterable[RecordingPlayer]
) -> EntityPlatform:
    """Add ``players`` to Home Assistant; ``platform.async_reset()`` removes them.

    The ``media_player`` component must be set up (its services reach them).
    """
    return await add_entities(hass, MEDIA_PLAYER_DOMAIN, players)
