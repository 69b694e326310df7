"""Everything one satellite entry holds while loaded (``entry.runtime_data``).

The hub owns the link and the Speaker, listens to the link, and fans changes out
to the entities: connectivity, assist-in-progress, mute. Satellite events go to
the assist satellite entity, which runs the voice loop.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
import logging
from typing import TYPE_CHECKING

from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import entity_registry as er, issue_registry as ir
from wyoming.event import Event
from wyoming.satellite import PauseSatellite, RunSatellite
from wyoming.snd import Played

from .const import DOMAIN
from .core.identity import Identity, identify
from .core.link import SatelliteLink
from .core.protocol import HELLO, PROTOCOL_VERSION, hello_event, parse_played
from .core.router import ListenMode
from .core.routing import Router, pass_through
from .core.speaker import Playback, Speaker
from .core.wav import Pcm

if TYPE_CHECKING:
    from .assist_satellite import VoiceStackSatellite
    from .core.announce import SatelliteAnnouncer
    from .modes import VoiceModes

_LOGGER = logging.getLogger(__name__)

CONF_VOICE = "voice"  # option: the TTS voice picked by voice
DEFAULT_END_OF_SPEECH_S = 0.7  # Home Assistant's default VAD sensitivity
MIN_END_OF_SPEECH_S = 0.3  # shorter splits a request at a pause between words
ISSUE_BUSY = "satellite_busy"  # repair issue: another connection runs it
ISSUE_PROTOCOL = "protocol_mismatch"  # repair issue: other extension protocol

type VoiceStackConfigEntry = ConfigEntry[SatelliteHub]


class SatelliteHub:
    """The link, the Speaker and the shared state of one satellite."""

    def __init__(
        self, hass: HomeAssistant, entry: VoiceStackConfigEntry, identity: Identity
    ) -> None:
        """Nothing connects until ``start``."""
        self.hass = hass
        self.entry = entry
        self.identity = identity
        self.satellite_id = entry.unique_id or entry.entry_id
        host, port = entry.data[CONF_HOST], entry.data[CONF_PORT]
        self.link = SatelliteLink(host, port, self, name=entry.title)
        self.speaker = Speaker(self.link.send, self.link.supports)
        self.router: Router = pass_through
        self.modes: VoiceModes | None = None  # the voice modes (router) when set up
        # The assist satellite entity while it is added (pipeline, voice loop).
        self.satellite: VoiceStackSatellite | None = None
        # The TTS voice picked on this satellite (None: the pipeline's).
        self.voice: str | None = entry.options.get(CONF_VOICE)
        self.muted = False
        self.assist_in_progress = False
        # Requests whose speech-to-text found no words (a sensor counts them).
        self.empty_transcripts = 0
        self.on_satellite_event: Callable[[Event], None] = lambda _event: None
        self.on_link_lost: Callable[[], None] = lambda: None
        # Says text on the satellite, after an optional sound (set by its entity,
        # which knows the pipeline).
        self.say: Callable[[str, Pcm | None], Awaitable[Playback]] | None = None
        # Sounds to play before announcements, by announcement id (preannounce).
        self.preambles: dict[str, Pcm] = {}
        self.announcer: SatelliteAnnouncer | None = None
        # Starts synthesizing text that will probably be said soon.
        self.prefetch: Callable[[str], None] = lambda _text: None
        # Seconds of quiet that end a request (the VAD sensitivity select).
        self.end_of_speech_s: Callable[[], float] = lambda: DEFAULT_END_OF_SPEECH_S
        self._listeners: list[CALLBACK_TYPE] = []

    @property
    def connected(self) -> bool:
        """The satellite is connected and run by us."""
        return self.link.connected

    def start(self) -> None:
        """Connect (and keep reconnecting) in the background."""
        self.link.start()

    async def stop(self) -> None:
        """Disconnect; the Speaker's waiters end as if the link was lost."""
        await self.link.stop()
        self.speaker.lost()

    # -- LinkListener -------------------------------------------------------------

    def link_connected(self, info: Event) -> None:
        """Refresh what the satellite says about itself; re-apply the mute."""
        host, port = self.entry.data[CONF_HOST], self.entry.data[CONF_PORT]
        self.identity = identify(host, port, info)
        ir.async_delete_issue(self.hass, DOMAIN, self._issue_id(ISSUE_BUSY))
        self._check_protocol()
        self.send_hello()
        if self.muted:
            self.send_soon(PauseSatellite().event())
        if self.announcer is not None:
            self.announcer.set_online(True)
        if self.always_listening and self.modes is not None:
            self.entry.async_create_background_task(
                self.hass, self.modes.apply_listen_mode(), "voicestack listen mode"
            )
        self.notify()

    def link_lost(self, reason: str) -> None:
        """Playback and any request in flight are gone with the connection."""
        _LOGGER.debug("%s: link lost (%s)", self.entry.title, reason)
        self.speaker.lost()
        if self.announcer is not None:
            self.announcer.set_online(False)
        self.on_link_lost()
        self.notify()

    def link_refused(self, reason: str) -> None:
        """Another connection runs the satellite: a repair issue says what to do."""
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            self._issue_id(ISSUE_BUSY),
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=ISSUE_BUSY,
            translation_placeholders={"name": self.entry.title, "reason": reason},
        )

    def _check_protocol(self) -> None:
        """A voicestack-satellite on another protocol version gets a repair issue.

        Its extensions are then not used (stock Wyoming still works).
        """
        issue_id = self._issue_id(ISSUE_PROTOCOL)
        block = self.identity.voicestack
        if block is None or block.protocol == PROTOCOL_VERSION:
            ir.async_delete_issue(self.hass, DOMAIN, issue_id)
            return
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            issue_id,
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key=ISSUE_PROTOCOL,
            translation_placeholders={
                "name": self.entry.title,
                "satellite": str(block.protocol),
                "ours": str(PROTOCOL_VERSION),
            },
        )

    def remove_issues(self) -> None:
        """The entry is unloaded: its repair issues go with it."""
        for kind in (ISSUE_BUSY, ISSUE_PROTOCOL):
            ir.async_delete_issue(self.hass, DOMAIN, self._issue_id(kind))

    def _issue_id(self, kind: str) -> str:
        return f"{kind}_{self.entry.entry_id}"

    def link_event(self, event: Event) -> None:
        """``played`` completes the Speaker's turn; the rest is the entity's."""
        if Played.is_type(event.type):
            try:
                report = parse_played(event)
            except ValueError as err:
                _LOGGER.warning("%s: ignoring %s", self.entry.title, err)
            else:
                self.speaker.played(report.stream, report.state)
        self.on_satellite_event(event)

    # -- shared state -------------------------------------------------------------

    @property
    def always_listening(self) -> bool:
        """The satellite streams every speech segment (the router's listen mode)."""
        return self.modes is not None and self.modes.router.listen_mode is (
            ListenMode.ALWAYS_LISTENING
        )

    def set_voice(self, voice_id: str | None) -> None:
        """Speak in ``voice_id`` from now on; kept in the entry's options."""
        self.voice = voice_id
        self.hass.config_entries.async_update_entry(
            self.entry, options={**self.entry.options, CONF_VOICE: voice_id}
        )

    async def speak_text(self, text: str, ids: tuple[str, ...] = ()) -> Playback:
        """Say ``text`` (announcements ``ids``) through the Speaker.

        If one of the merged announcements asked for a preannounce sound, it is
        played first, once.
        """
        if self.say is None:
            raise RuntimeError(f"{self.entry.title}: satellite entity not ready")
        preamble = next((self.preambles[i] for i in ids if i in self.preambles), None)
        return await self.say(text, preamble)

    async def async_set_muted(self, muted: bool) -> None:
        """Mute: the satellite stops listening (``pause-satellite``) until unmuted."""
        self.muted = muted
        await self.link.send(
            PauseSatellite().event() if muted else RunSatellite().event()
        )
        self.notify()

    @callback
    def set_assist_in_progress(self, active: bool) -> None:
        """A request runs (from wake word to the end of the response)."""
        if active != self.assist_in_progress:
            self.assist_in_progress = active
            self.notify()

    @callback
    def async_add_listener(self, listener: CALLBACK_TYPE) -> CALLBACK_TYPE:
        """Call ``listener`` on any change; returns the remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def send_hello(self) -> None:
        """Ask a voicestack-satellite for its extension events.

        It is also asked to end requests itself once the room is quiet again,
        much sooner than a VAD model notices (see the satellite's endpoint.py).
        """
        if self.link.connected and self.link.supports(HELLO):
            try:
                silence = max(MIN_END_OF_SPEECH_S, self.end_of_speech_s())
            except ValueError:  # the select has no valid state yet
                silence = DEFAULT_END_OF_SPEECH_S
            self.send_soon(hello_event(end_of_speech_s=silence))

    def send_soon(self, event: Event) -> None:
        """Send ``event`` to the satellite in the background (fire and forget)."""
        self.entry.async_create_background_task(
            self.hass, self.link.send(event), f"voicestack send {event.type}"
        )

    def notify(self) -> None:
        """Tell the entities something changed."""
        for listener in list(self._listeners):
            listener()

    def entity_id(self, platform: str, key: str) -> str | None:
        """The entity id of this satellite's entity ``key`` on ``platform``."""
        return er.async_get(self.hass).async_get_entity_id(
            platform, DOMAIN, f"{self.satellite_id}-{key}"
        )


def hub_for_entity(hass: HomeAssistant, entity_id: str) -> SatelliteHub | None:
    """The hub behind ``entity_id`` if it is a loaded VoiceStack assist satellite."""
    entity = er.async_get(hass).async_get(entity_id)
    if entity is None or entity.domain != "assist_satellite":
        return None
    entry = (
        hass.config_entries.async_get_entry(entity.config_entry_id)
        if entity.config_entry_id
        else None
    )
    if (
        entry is None
        or entry.domain != DOMAIN
        or entry.state is not ConfigEntryState.LOADED
    ):
        return None
    hub: SatelliteHub = entry.runtime_data
    return hub


def hubs_for_entities(
    hass: HomeAssistant, entity_ids: Iterable[str]
) -> list[SatelliteHub]:
    """The hubs behind ``entity_ids`` (loaded VoiceStack assist satellites).

    Anything else is the caller's mistake: a translated validation error.
    """
    hubs = []
    for entity_id in entity_ids:
        hub = hub_for_entity(hass, entity_id)
        if hub is None:
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="not_a_satellite_entity",
                translation_placeholders={"entity_id": entity_id},
            )
        hubs.append(hub)
    return hubs
