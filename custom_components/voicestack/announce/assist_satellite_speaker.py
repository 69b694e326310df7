"""Say text on another integration's assist satellite: the announcer's ``say``/``stop``.

A Voice PE or another ESPHome satellite, or a stock Wyoming satellite under Home
Assistant's own ``wyoming`` integration, is an ``assist_satellite`` entity that
VoiceStack does not drive. It is spoken on through Home Assistant's own
``assist_satellite.announce``, so the device plays its pre-announce chime, ducks
its media and speaks with its own pipeline's voice, as for any announcement.

Home Assistant's announce cancels a voice request running on the device and
refuses (``SatelliteBusyError``) while another announcement plays. So ``say``
first waits, at most ``idle_wait_s``, for the entity to be ``idle``: a person
talking to the device is not cut off, and an announcement Home Assistant plays
there is let finish. The call blocks until the device has played the message
(the entity is ``responding`` for exactly that time and ``idle`` after; under
Home Assistant's ``wyoming`` integration, until the satellite reports
``played`` or at most the audio's length and 0.5 s after it was sent); it is
bounded by ``ANNOUNCE_TIMEOUT_S`` plus a time per character.

Home Assistant refuses an announcement (``SatelliteBusyError``) while another
plays on the entity. So that an automation's own ``assist_satellite.announce``
(or ``start_conversation``, ``ask_question``) made while ours plays is queued
behind ours rather than refused, ``say`` wraps those three methods on the
entity object (``queue_behind``): a call of Home Assistant's waits for the
lock ours holds, first come first served; ours passes (``_OURS``, a context
variable the blocking service call keeps). They are Home Assistant's own
``async_internal_*`` methods, the same in every supported version (a test
runs on the oldest and the newest); the entity's integration is not touched.
The wrap is put back when the entity leaves the announcer (``release``), and
made again on a new entity object (its integration reloaded).

Nothing escapes as an exception except cancellation: a device busy too long, a
refused or failing call end ``failed``, an unavailable device ``lost``, each
with a log line, and the announcer's retry and drop rules take it from there.
A stock Wyoming satellite that is disconnected is ``failed``, not ``lost``:
Home Assistant keeps its entity available and says nothing when it is back.
A critical cuts the call short (cancelled), which ends Home Assistant's
announcement on the entity; whether the device's own audio stops at once is up
to its integration.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
import logging
from typing import Any, Final

from homeassistant.components.assist_satellite.const import DATA_COMPONENT
from homeassistant.components.assist_satellite.entity import (
    AssistSatelliteEntity,
    AssistSatelliteState,
)
from homeassistant.const import ATTR_ENTITY_ID, STATE_UNAVAILABLE
from homeassistant.core import HomeAssistant, State

from ..core.clock import Clock
from ..core.speaker import PlaybackOutcome
from .media_player_speaker import FAILED

_LOGGER = logging.getLogger(__name__)

ASSIST_SATELLITE_DOMAIN: Final = "assist_satellite"
SERVICE_ANNOUNCE: Final = "announce"
# How long a message waits for the device to finish a conversation or another
# announcement before it is given back to the announcer (which retries it).
IDLE_WAIT_S: Final = 60.0
# The announce call may take this long plus ``SECONDS_PER_CHARACTER`` per
# character (speech runs at about 15 characters a second): a device that never
# reports the end must not hold its announcements for ever.
ANNOUNCE_TIMEOUT_S: Final = 30.0
SECONDS_PER_CHARACTER: Final = 0.2
# Home Assistant's entry points that refuse while an announcement plays.
QUEUED_METHODS: Final = (
    "async_internal_announce",
    "async_internal_start_conversation",
    "async_internal_ask_question",
)
# Set while VoiceStack's own announce call runs: it does not queue behind itself.
_OURS: ContextVar[bool] = ContextVar("voicestack_announcing", default=False)


@dataclass(slots=True)
class SatelliteAnnouncement:
    """One ``say`` on the device, and how it ended (a ``SayResult``)."""

    text: str
    first_audio_at: float | None = None  # clock time the announce call was made
    outcome: str = PlaybackOutcome.PENDING


class AssistSatelliteSpeaker:
    """Says text on one assist satellite of another integration."""

    def __init__(
        self,
        hass: HomeAssistant,
        entity_id: str,
        clock: Clock,
        *,
        idle_wait_s: float = IDLE_WAIT_S,
    ) -> None:
        """Speak on ``entity_id``; ``clock`` is the announcer's.

        ``state_changed`` must be called with every state change of the entity
        (``EntitySpeakers`` follows it).
        """
        self._hass = hass
        self.entity_id = entity_id
        self._clock = clock
        self._idle_wait_s = idle_wait_s
        self._idle = asyncio.Event()
        self._lock = asyncio.Lock()  # held by ours; Home Assistant's calls queue
        self._wrapped: AssistSatelliteEntity | None = None
        self.last: SatelliteAnnouncement | None = None
        self.state_changed(None, hass.states.get(entity_id))

    @property
    def online(self) -> bool:
        """The entity exists and is available."""
        state = self._hass.states.get(self.entity_id)
        return state is not None and state.state != STATE_UNAVAILABLE

    def state_changed(self, _old: State | None, new: State | None) -> None:
        """The entity's state changed: it may be free for the next message."""
        if new is not None and new.state == AssistSatelliteState.IDLE:
            self._idle.set()
        else:
            self._idle.clear()

    def prefetch(self, _text: str) -> None:
        """Nothing to do early: the device's own pipeline synthesizes the message."""

    async def say(self, text: str, ids: tuple[str, ...]) -> SatelliteAnnouncement:
        """Say ``text`` (announcements ``ids``); return once the device played it."""
        announcement = self.last = SatelliteAnnouncement(text)
        if not self.online:
            _LOGGER.info("%s is unavailable; %s waits", self.entity_id, ids)
            announcement.outcome = PlaybackOutcome.LOST
            return announcement
        try:
            async with asyncio.timeout(self._idle_wait_s):
                await self._idle.wait()
        except TimeoutError:
            _LOGGER.warning(
                "%s stayed busy for %s s; %s given back",
                self.entity_id,
                self._idle_wait_s,
                ids,
            )
            announcement.outcome = FAILED
            return announcement
        self.queue_behind()
        try:
            async with self._lock:
                announcement.first_audio_at = self._clock.now()
                ours = _OURS.set(True)
                try:
                    async with asyncio.timeout(
                        ANNOUNCE_TIMEOUT_S + SECONDS_PER_CHARACTER * len(text)
                    ):
                        await self._hass.services.async_call(
                            ASSIST_SATELLITE_DOMAIN,
                            SERVICE_ANNOUNCE,
                            {ATTR_ENTITY_ID: self.entity_id, "message": text},
                            blocking=True,
                        )
                finally:
                    _OURS.reset(ours)
        except asyncio.CancelledError:  # a critical (or shutdown) cut it short
            announcement.outcome = PlaybackOutcome.STOPPED
            raise
        except TimeoutError:
            announcement.outcome = FAILED
            _LOGGER.warning("%s did not finish %s in time", self.entity_id, ids)
            return announcement
        except Exception as err:  # noqa: BLE001 - any device's own failure
            lost = not self.online
            announcement.outcome = PlaybackOutcome.LOST if lost else FAILED
            _LOGGER.warning("%s could not announce %s: %s", self.entity_id, ids, err)
            return announcement
        announcement.outcome = PlaybackOutcome.PLAYED
        return announcement

    async def stop(self) -> None:
        """Nothing to stop: cancelling ``say`` already ended the announcement."""

    def queue_behind(self) -> None:
        """Make Home Assistant's own calls on the entity wait for ours (see above)."""
        component = self._hass.data.get(DATA_COMPONENT)
        entity = None if component is None else component.get_entity(self.entity_id)
        if entity is None or entity is self._wrapped:
            return
        self.release()
        for name in QUEUED_METHODS:
            setattr(entity, name, self._queued(getattr(entity, name)))
        self._wrapped = entity

    def release(self) -> None:
        """Give the entity its own methods back (it leaves the announcer)."""
        if self._wrapped is not None:
            for name in QUEUED_METHODS:
                self._wrapped.__dict__.pop(name, None)
            self._wrapped = None

    def _queued(
        self, method: Callable[..., Awaitable[Any]]
    ) -> Callable[..., Awaitable[Any]]:
        async def queued(*args: Any, **kwargs: Any) -> Any:
            if _OURS.get():
                return await method(*args, **kwargs)
            async with self._lock:
                return await method(*args, **kwargs)

        return queued
