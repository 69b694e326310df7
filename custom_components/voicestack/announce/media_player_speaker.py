"""Say text on one Home Assistant media player: the announcer's ``say`` and ``stop``.

A media player has no Speaker and no ``played`` report, so the text is
synthesized here first, once: Home Assistant's TTS cache keeps the result, and
its length (from the WAV's header and size) says how long the player will be
busy. The player then gets a ``tts`` media-source URL for the same text, engine,
language and options, which Home Assistant resolves from that cache, through
``media_player.play_media`` with ``announce`` where the player supports
``MEDIA_ANNOUNCE`` (it then ducks or pauses its music and resumes it).

The player counts as busy from the ``play_media`` call until the audio's length
has passed and, if it went to ``playing`` after the call, until it has left
``playing`` again (at most ``grace_s`` past the length: a player that resumes
its music keeps playing). So the next announcement never starts earlier.

Nothing escapes as an exception except cancellation (the announcer cancels an
utterance a critical interrupts): an engine without audio ends ``empty``, a
failing engine or player (or one that does not take ``play_media`` within
``PLAY_TIMEOUT_S``) ``failed``, an unavailable player ``lost``, each with a
log line, and the announcer's retry and drop rules take it from there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
import logging
from typing import Final

from homeassistant.components import tts
from homeassistant.components.media_player import (
    ATTR_MEDIA_ANNOUNCE,
    ATTR_MEDIA_CONTENT_ID,
    ATTR_MEDIA_CONTENT_TYPE,
    DOMAIN as MEDIA_PLAYER_DOMAIN,
    SERVICE_PLAY_MEDIA,
    MediaPlayerEntityFeature,
    MediaPlayerState,
    MediaType,
)
from homeassistant.const import (
    ATTR_ENTITY_ID,
    ATTR_SUPPORTED_FEATURES,
    SERVICE_MEDIA_STOP,
    STATE_UNAVAILABLE,
)
from homeassistant.core import HomeAssistant, State

from ..core.clock import Clock
from ..core.speaker import PlaybackOutcome
from ..core.wav import read_wav

_LOGGER = logging.getLogger(__name__)

FAILED: Final = "failed"  # the engine or the player failed: nothing was played
# How long past the audio's length a player may stay ``playing``: it takes a
# moment to fetch and start the audio, and one that resumes its music after the
# announcement never leaves ``playing``.
PLAYING_GRACE_S: Final = 10.0
STOP_TIMEOUT_S: Final = 5.0  # ``media_stop`` may take this long, at most
# ``play_media`` may take this long, at most: an integration waiting for a device
# that does not answer must not hold the player's announcements for ever.
PLAY_TIMEOUT_S: Final = 30.0


@dataclass(frozen=True, slots=True)
class Voice:
    """The text-to-speech engine, language and options a player speaks with."""

    engine: str
    language: str | None
    options: dict[str, str]


@dataclass(slots=True)
class MediaPlayback:
    """One ``say`` on a player, and how it ended (a ``SayResult``)."""

    text: str
    media_id: str | None = None
    seconds: float = 0.0  # the audio's length
    first_audio_at: float | None = None  # clock time ``play_media`` was called
    outcome: str = PlaybackOutcome.PENDING


@dataclass(slots=True)
class _Watch:
    """Waits, after ``play_media``, until the player is done with it."""

    done: asyncio.Future[str]
    length_passed: bool = False
    playing: bool = False  # went to ``playing`` after the call
    left: bool = False  # and left it again

    def on_length(self) -> None:
        self.length_passed = True
        self._check()

    def on_state(self, old: State | None, new: State | None) -> None:
        if new is None or new.state == STATE_UNAVAILABLE:
            self._end(PlaybackOutcome.LOST)
            return
        now_playing = new.state == MediaPlayerState.PLAYING
        was_playing = old is not None and old.state == MediaPlayerState.PLAYING
        if now_playing and not was_playing:
            self.playing, self.left = True, False
        elif was_playing and not now_playing and self.playing:
            self.left = True
        self._check()

    def give_up(self) -> None:
        """Still ``playing`` long after the length: its own music, most likely."""
        self._end(PlaybackOutcome.PLAYED)

    def _check(self) -> None:
        if self.length_passed and (not self.playing or self.left):
            self._end(PlaybackOutcome.PLAYED)

    def _end(self, outcome: str) -> None:
        if not self.done.done():
            self.done.set_result(outcome)


class MediaPlayerSpeaker:
    """Says text on one media player; see the module docstring."""

    def __init__(
        self,
        hass: HomeAssistant,
        entity_id: str,
        voice: Callable[[], Voice],
        clock: Clock,
        *,
        grace_s: float = PLAYING_GRACE_S,
        play_timeout_s: float = PLAY_TIMEOUT_S,
    ) -> None:
        """Speak on ``entity_id`` with the voice ``voice()`` gives at that moment.

        ``state_changed`` must be called with every state change of the player
        (``EntitySpeakers`` follows it). ``clock`` is the announcer's,
        so ``first_audio_at`` is on its time base.
        """
        self._hass = hass
        self.entity_id = entity_id
        self._voice = voice
        self._clock = clock
        self._grace_s = grace_s
        self._play_timeout_s = play_timeout_s
        self.last: MediaPlayback | None = None
        self._watch: _Watch | None = None
        self._cut = False  # an announcement was cut short: ``stop`` stops it

    @property
    def online(self) -> bool:
        """The player exists and is available."""
        state = self._hass.states.get(self.entity_id)
        return state is not None and state.state != STATE_UNAVAILABLE

    def _supports(self, feature: MediaPlayerEntityFeature) -> bool:
        state = self._hass.states.get(self.entity_id)
        features = 0 if state is None else state.attributes.get(ATTR_SUPPORTED_FEATURES)
        return bool((features or 0) & feature)

    def state_changed(self, old: State | None, new: State | None) -> None:
        """The player's state changed (it may end the current playback)."""
        if self._watch is not None:
            self._watch.on_state(old, new)

    def prefetch(self, text: str) -> None:
        """Start synthesizing ``text`` (said next, probably) into the TTS cache."""
        try:
            voice = self._voice()
            stream = tts.async_create_stream(
                self._hass, voice.engine, voice.language, voice.options
            )
            stream.async_set_message(text)
        except Exception as err:  # noqa: BLE001 - said again, and reported, in say
            _LOGGER.debug("No early synthesis on %s: %s", self.entity_id, err)

    async def say(self, text: str, ids: tuple[str, ...]) -> MediaPlayback:
        """Say ``text`` (announcements ``ids``); return once the player is done."""
        playback = self.last = MediaPlayback(text)
        self._cut = False
        seconds = await self._synthesize(playback)
        if seconds is None:
            return playback
        if not self.online:
            _LOGGER.info("%s is unavailable; %s waits", self.entity_id, ids)
            playback.outcome = PlaybackOutcome.LOST
            return playback
        watch = self._watch = _Watch(asyncio.get_running_loop().create_future())
        playback.first_audio_at = self._clock.now()
        timers = (
            self._clock.call_later(seconds, watch.on_length),
            self._clock.call_later(seconds + self._grace_s, watch.give_up),
        )
        try:
            try:
                async with asyncio.timeout(self._play_timeout_s):
                    await self._play(playback.media_id or "")
            except TimeoutError:
                playback.outcome = FAILED
                _LOGGER.warning(
                    "%s did not take %s within %s s (play_media)",
                    self.entity_id,
                    ids,
                    self._play_timeout_s,
                )
                return playback
            except Exception as err:  # noqa: BLE001 - any player's own failure
                lost = not self.online
                playback.outcome = PlaybackOutcome.LOST if lost else FAILED
                _LOGGER.warning("%s could not play %s: %s", self.entity_id, ids, err)
                return playback
            playback.outcome = await watch.done
        except asyncio.CancelledError:  # a critical (or shutdown) cut it short
            playback.outcome = PlaybackOutcome.STOPPED
            self._cut = True
            raise
        finally:
            self._watch = None
            for timer in timers:
                timer.cancel()
        return playback

    async def stop(self) -> None:
        """Stop the announcement just cut short, where the player can stop.

        Only then: the announcer also calls this with nothing of its own playing,
        and the player's own music is not its business. Without ``media_stop``
        the next ``play_media`` (the critical) simply replaces it.
        """
        if not self._cut:
            return
        self._cut = False
        if not (self._supports(MediaPlayerEntityFeature.STOP) and self.online):
            return
        try:
            async with asyncio.timeout(STOP_TIMEOUT_S):
                await self._hass.services.async_call(
                    MEDIA_PLAYER_DOMAIN,
                    SERVICE_MEDIA_STOP,
                    {ATTR_ENTITY_ID: self.entity_id},
                    blocking=True,
                )
        except Exception as err:  # noqa: BLE001 - the critical is said anyway
            _LOGGER.warning("Could not stop %s: %s", self.entity_id, err)

    async def _synthesize(self, playback: MediaPlayback) -> float | None:
        """The audio's length; None (with the outcome set) when there is none."""
        try:
            voice = self._voice()
            playback.media_id = tts.generate_media_source_id(
                self._hass,
                playback.text,
                engine=voice.engine,
                language=voice.language,
                options=voice.options,
            )
            _extension, data = await tts.async_get_media_source_audio(
                self._hass, playback.media_id
            )
            pcm = read_wav(data)
        except Exception as err:  # noqa: BLE001 - any engine's own failure
            _LOGGER.warning(
                "No speech for %r on %s: %s", playback.text, self.entity_id, err
            )
            playback.outcome = FAILED
            return None
        if not pcm.audio:
            _LOGGER.warning(
                "No speech for %r on %s: the engine returned no audio",
                playback.text,
                self.entity_id,
            )
            playback.outcome = PlaybackOutcome.EMPTY
            return None
        playback.seconds = pcm.seconds
        return pcm.seconds

    async def _play(self, media_id: str) -> None:
        data: dict[str, object] = {
            ATTR_ENTITY_ID: self.entity_id,
            ATTR_MEDIA_CONTENT_ID: media_id,
            ATTR_MEDIA_CONTENT_TYPE: MediaType.MUSIC,
        }
        if self._supports(MediaPlayerEntityFeature.MEDIA_ANNOUNCE):
            data[ATTR_MEDIA_ANNOUNCE] = True
        await self._hass.services.async_call(
            MEDIA_PLAYER_DOMAIN, SERVICE_PLAY_MEDIA, data, blocking=True
        )
