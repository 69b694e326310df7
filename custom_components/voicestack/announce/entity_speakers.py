"""Entities the announcer speaks on besides VoiceStack's satellites.

Any Home Assistant ``media_player``, and any ``assist_satellite`` of another
integration (a Voice PE or another ESPHome satellite, a stock Wyoming
satellite), that a ``voicestack.announce`` call names becomes a speaker of the
shared announcer, keyed by its entity id, with the announcer's default options:
the same collector, limits, coalescer, critical path, events and metrics as a
satellite. Its state is followed: unavailable means offline (messages wait as
for an offline satellite), a removed (or renamed) entity leaves the announcer.

- A player speaks through a ``MediaPlayerSpeaker`` with the preferred Assist
  pipeline's engine, language and voice, or with the engine the latest call
  that named one for it gave (``tts_engine``).
- An assist satellite speaks through an ``AssistSatelliteSpeaker``: Home
  Assistant's own ``assist_satellite.announce``, with the device's pipeline
  and voice (a call's ``tts_engine`` does not apply to it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from homeassistant.components import tts
from homeassistant.components.assist_pipeline import async_get_pipeline
from homeassistant.components.media_player import DOMAIN as MEDIA_PLAYER_DOMAIN
from homeassistant.core import (
    CALLBACK_TYPE,
    Event,
    EventStateChangedData,
    HomeAssistant,
    callback,
    split_entity_id,
)
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.event import async_track_state_change_event

from ..const import DOMAIN
from ..core.announce import Announcer, SpeakerAnnouncer, SpeakerKind
from ..core.clock import Clock
from ..request.speech_output import tts_options
from .assist_satellite_speaker import ASSIST_SATELLITE_DOMAIN, AssistSatelliteSpeaker
from .media_player_speaker import MediaPlayerSpeaker, Voice

type EntitySpeaker = MediaPlayerSpeaker | AssistSatelliteSpeaker


def is_entity_speaker(hass: HomeAssistant, entity_id: str) -> bool:
    """``entity_id`` is a media player, or another integration's assist satellite.

    Home Assistant has it or has registered it: one registered without a state
    has not loaded yet (Home Assistant is starting, or its integration is
    retrying): it is offline, and what is announced on it waits for it as for
    an offline satellite. VoiceStack's own satellites are not entity speakers.
    """
    domain = split_entity_id(entity_id)[0]
    if domain not in (MEDIA_PLAYER_DOMAIN, ASSIST_SATELLITE_DOMAIN):
        return False
    registered = er.async_get(hass).async_get(entity_id)
    if registered is not None and registered.platform == DOMAIN:
        return False
    return hass.states.get(entity_id) is not None or registered is not None


def _is_assist_satellite(entity_id: str) -> bool:
    return split_entity_id(entity_id)[0] == ASSIST_SATELLITE_DOMAIN


@dataclass(slots=True)
class _Entity:
    speaker: EntitySpeaker
    announcer: SpeakerAnnouncer
    unsubscribe: CALLBACK_TYPE


class EntitySpeakers:
    """The media players and other assist satellites the announcer speaks on."""

    def __init__(self, hass: HomeAssistant, announcer: Announcer, clock: Clock) -> None:
        """Players join ``announcer`` (whose ``clock`` they time playback on)."""
        self._hass = hass
        self._announcer = announcer
        self._clock = clock
        self._players: dict[str, _Entity] = {}
        self._engines: dict[str, str] = {}  # the engine a call named, per player

    def add(self, entity_ids: Iterable[str], tts_engine: str | None = None) -> None:
        """Make sure each entity is a speaker; ``tts_engine`` becomes a player's.

        Raises the translated ``no_tts_engine`` when a player would have no
        engine to speak with.
        """
        for entity_id in entity_ids:
            if not _is_assist_satellite(entity_id):
                if tts_engine is not None:
                    self._engines[entity_id] = tts_engine
                self.voice(entity_id)
            if entity_id not in self._players:
                self._add(entity_id)

    def speaker(self, entity_id: str) -> EntitySpeaker | None:
        """The speaker of an entity in the announcer."""
        player = self._players.get(entity_id)
        return None if player is None else player.speaker

    def voice(self, entity_id: str) -> Voice:
        """What ``entity_id`` speaks with now (see the module docstring).

        The pipeline's language and voice go with another engine only where
        that engine has them (else its defaults).
        """
        pipeline = async_get_pipeline(self._hass)
        engine = self._engines.get(entity_id, pipeline.tts_engine)
        instance = (
            None if engine is None else tts.get_engine_instance(self._hass, engine)
        )
        if engine is None or instance is None:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="no_tts_engine",
                translation_placeholders={"pipeline": pipeline.name},
            )
        options = tts_options(pipeline)
        if engine == pipeline.tts_engine:
            return Voice(engine, pipeline.tts_language, options)
        language = pipeline.tts_language
        if language not in (instance.supported_languages or ()):
            language = None
        # A legacy provider may have no default language: then it offers no voices.
        listed = language or instance.default_language
        voices = instance.async_get_supported_voices(listed) if listed else None
        if options.get(tts.ATTR_VOICE) not in {v.voice_id for v in voices or ()}:
            options.pop(tts.ATTR_VOICE, None)
        return Voice(engine, language, options)

    async def remove(self, entity_id: str) -> None:
        """The player leaves the announcer; what waits for it is dropped."""
        player = self._players.pop(entity_id, None)
        self._engines.pop(entity_id, None)
        if player is None:
            return
        player.unsubscribe()
        if isinstance(player.speaker, AssistSatelliteSpeaker):
            player.speaker.release()
        player.announcer.set_online(False)  # nothing more is said on it
        await self._announcer.remove_speaker(entity_id)

    async def remove_all(self) -> None:
        """Every player leaves (the last VoiceStack entry unloads)."""
        for entity_id in list(self._players):
            await self.remove(entity_id)

    @callback
    def forget(self) -> None:
        """Stop following the players (Home Assistant stops; the announcer too)."""
        for player in self._players.values():
            player.unsubscribe()
        self._players.clear()

    def _add(self, entity_id: str) -> None:
        speaker: EntitySpeaker
        if _is_assist_satellite(entity_id):
            speaker = AssistSatelliteSpeaker(self._hass, entity_id, self._clock)
            kind = SpeakerKind.ASSIST_SATELLITE
        else:
            speaker = MediaPlayerSpeaker(
                self._hass, entity_id, lambda: self.voice(entity_id), self._clock
            )
            kind = SpeakerKind.MEDIA_PLAYER
        announcer = self._announcer.add_speaker(
            entity_id,
            speaker.say,
            speaker.stop,
            online=speaker.online,
            prefetch=speaker.prefetch,
            kind=kind,
        )

        @callback
        def state_changed(event: Event[EventStateChangedData]) -> None:
            old, new = event.data["old_state"], event.data["new_state"]
            speaker.state_changed(old, new)
            if new is None:  # removed, or renamed
                self._hass.async_create_task(
                    self.remove(entity_id), f"voicestack remove {entity_id}"
                )
            else:
                announcer.set_online(speaker.online)

        self._players[entity_id] = _Entity(
            speaker,
            announcer,
            async_track_state_change_event(self._hass, [entity_id], state_changed),
        )
