"""An ESPHome-style assist satellite with no hardware: records every announcement.

``RecordingSatellite`` is a Home Assistant ``AssistSatelliteEntity`` of another
integration (added on a platform of its own, ``add_satellites``), as a Voice PE
is under ESPHome: Home Assistant's own ``assist_satellite.announce`` reaches it,
synthesizes the message with the entity's pipeline, and calls
``async_announce``, which, as ESPHome's does, returns once the device has
played the audio: here the audio is read from Home Assistant's TTS (decoded
with ffmpeg: the pipeline gives it as MP3) and
"played" for its real length. The entity is ``responding`` meanwhile (Home
Assistant's base class sets it) and ``idle`` after. Each announcement is
recorded with its start and end on the loop's clock, and its audio.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass

from homeassistant.components import tts
from homeassistant.components.assist_pipeline import PipelineEvent
from homeassistant.components.assist_satellite.entity import (
    AssistSatelliteAnnouncement,
    AssistSatelliteConfiguration,
    AssistSatelliteEntity,
    AssistSatelliteEntityFeature,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import EntityPlatform

from custom_components.voicestack.core.wav import Pcm
from devstack.entity_platform import add_entities
from devstack.recording_player import decode_audio

DOMAIN = "assist_satellite"


@dataclass(frozen=True, slots=True)
class Announced:
    """One ``async_announce`` call: what it said, when, and its audio."""

    message: str
    started: float  # loop time the device got it
    ready: float  # loop time it had the audio (synthesized, decoded)
    ended: float  # loop time it finished playing
    preannounce: bool
    audio: Pcm


class RecordingSatellite(AssistSatelliteEntity):
    """Plays each announcement for its real length and records it."""

    _attr_should_poll = False
    _attr_supported_features = AssistSatelliteEntityFeature.ANNOUNCE

    def __init__(self, name: str) -> None:
        """A satellite named ``name`` (its entity id follows from it)."""
        self._attr_name = name
        self._attr_unique_id = f"recording-satellite-{name}"
        self.announced: list[Announced] = []

    def async_get_configuration(self) -> AssistSatelliteConfiguration:
        """No wake words to configure: the device's own are not modelled."""
        return AssistSatelliteConfiguration(
            available_wake_words=[], active_wake_words=[], max_active_wake_words=1
        )

    async def async_set_configuration(
        self, config: AssistSatelliteConfiguration
    ) -> None:
        """Nothing to configure."""

    def on_pipeline_event(self, event: PipelineEvent) -> None:
        """No voice requests run on it here."""

    def set_available(self, available: bool) -> None:
        """Become (un)available, as a device that lost its network does."""
        self._attr_available = available
        self.async_write_ha_state()

    async def async_announce(self, announcement: AssistSatelliteAnnouncement) -> None:
        """Read the announcement's audio and play it for its length."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        _extension, data = await tts.async_get_media_source_audio(
            self.hass, announcement.original_media_id
        )
        audio = await decode_audio(self.hass, data)
        ready = loop.time()
        await asyncio.sleep(audio.seconds)
        self.announced.append(
            Announced(
                announcement.message,
                started,
                ready,
                loop.time(),
                announcement.preannounce_media_id is not None,
                audio,
            )
        )


async def add_satellites(
    hass: HomeAssistant, satellites: Iterable[RecordingSatellite]
) -> EntityPlatform:
    """Add ``satellites``; ``platform.async_reset()`` removes them.

    The ``assist_satellite`` component must be set up (its actions reach them).
    """
    return await add_entities(hass, DOMAIN, satellites)
