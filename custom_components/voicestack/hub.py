"""One satellite's link, Speaker and shared state, with subscriptions to them.

The hub owns the connection (``SatelliteLink``) and the Speaker, listens to the
link, and tells whoever subscribed: ``async_subscribe_events`` for the
satellite's events, ``async_subscribe_connection`` for connects and losses,
``async_add_listener`` for any change an entity shows (connectivity,
assist-in-progress, mute, counters). Each returns its own unsubscribe function;
entities hand it to ``async_on_remove``, the way ESPHome's entry data does it.
The hub knows none of its subscribers: the voice modes, the announcer and the
assist satellite entity are built on it, not into it.

It also answers what the satellite's settings entities chose (pipeline, VAD
sensitivity), so code that needs them does not need the entities.
"""

from __future__ import annotations

from collections.abc import Callable
import logging

from homeassistant.components.assist_pipeline import (
    OPTION_PREFERRED,
    Pipeline,
    async_get_pipeline,
    async_get_pipelines,
    vad,
)
from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import CALLBACK_TYPE, Context, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er, issue_registry as ir
from wyoming.event import Event
from wyoming.satellite import PauseSatellite, RunSatellite
from wyoming.snd import Played

from voicestack_protocol import HELLO, PROTOCOL_VERSION, hello_event, parse_played

from .const import DOMAIN
from .core.identity import Identity, identify
from .core.link import SatelliteLink
from .core.speaker import Speaker
from .request.speculation import SpeculationCounts
from .subscriptions import Subscribers

_LOGGER = logging.getLogger(__name__)

CONF_VOICE = "voice"  # option: the TTS voice picked by voice
DEFAULT_END_OF_SPEECH_S = 0.7  # Home Assistant's default VAD sensitivity
MIN_END_OF_SPEECH_S = 0.3  # shorter splits a request at a pause between words
ISSUE_BUSY = "satellite_busy"  # repair issue: another connection runs it
ISSUE_PROTOCOL = "protocol_mismatch"  # repair issue: other extension protocol

type EventListener = Callable[[Event], None]
type ConnectionListener = Callable[[bool], None]


def satellite_id_of(entry: ConfigEntry) -> str:
    """The id a satellite's entities and device are keyed on (its MAC, usually)."""
    return entry.unique_id or entry.entry_id


class SatelliteHub:
    """The link, the Speaker and the shared state of one satellite."""

    def __init__(
        self, hass: HomeAssistant, entry: ConfigEntry, identity: Identity
    ) -> None:
        """Nothing connects until ``start``."""
        self.hass = hass
        self.entry = entry
        self.identity = identity
        self.satellite_id = satellite_id_of(entry)
        host, port = entry.data[CONF_HOST], entry.data[CONF_PORT]
        self.link = SatelliteLink(host, port, self, name=entry.title)
        self.speaker = Speaker(self.link.send, self.link.supports)
        # The TTS voice picked on this satellite (None: the pipeline's).
        self.tts_voice: str | None = entry.options.get(CONF_VOICE)
        self.muted = False
        self.assist_in_progress = False
        # Requests whose speech-to-text found no words (a sensor counts them).
        self.empty_transcripts = 0
        # Speculative transcripts started, used and dropped (request/speculation.py).
        self.stt_speculations = SpeculationCounts()
        # The context of the current (or last) request: service calls made for
        # it (a to-do item, a script) carry it, so automations see the cause.
        self.request_context = Context()
        self._listeners = Subscribers[CALLBACK_TYPE]()
        self._event_listeners = Subscribers[EventListener]()
        self._connection_listeners = Subscribers[ConnectionListener]()

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
        self._connection_changed(True)

    def link_lost(self, reason: str) -> None:
        """Playback and any request in flight are gone with the connection."""
        _LOGGER.debug("%s: link lost (%s)", self.entry.title, reason)
        self.speaker.lost()
        self._connection_changed(False)

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
        for listener in self._event_listeners:
            listener(event)

    def _connection_changed(self, connected: bool) -> None:
        for listener in self._connection_listeners:
            listener(connected)
        self.notify()

    # -- subscriptions ------------------------------------------------------------

    @callback
    def async_subscribe_events(self, listener: EventListener) -> CALLBACK_TYPE:
        """Call ``listener`` with every event the satellite sends; the remover.

        ``played`` has reached the Speaker before listeners hear it.
        """
        return self._event_listeners.add(listener)

    @callback
    def async_subscribe_connection(self, listener: ConnectionListener) -> CALLBACK_TYPE:
        """Call ``listener(True)`` on every connect and ``(False)`` on every loss."""
        return self._connection_listeners.add(listener)

    @callback
    def async_add_listener(self, listener: CALLBACK_TYPE) -> CALLBACK_TYPE:
        """Call ``listener`` on any change an entity shows; the remover."""
        return self._listeners.add(listener)

    # -- shared state -------------------------------------------------------------

    def set_tts_voice(self, voice_id: str | None) -> None:
        """Speak in ``voice_id`` from now on; kept in the entry's options."""
        self.tts_voice = voice_id
        self.hass.config_entries.async_update_entry(
            self.entry, options={**self.entry.options, CONF_VOICE: voice_id}
        )

    def new_request_context(self) -> Context:
        """A request starts now: a fresh context for it."""
        self.request_context = Context()
        return self.request_context

    def pipeline(self) -> Pipeline:
        """The pipeline chosen on the satellite's select (or the preferred one)."""
        chosen = None
        if (
            (entity_id := self.entity_id("select", "pipeline"))
            and (state := self.hass.states.get(entity_id))
            and state.state != OPTION_PREFERRED
        ):
            chosen = next(
                (p.id for p in async_get_pipelines(self.hass) if p.name == state.state),
                None,
            )
        return async_get_pipeline(self.hass, chosen)

    def end_of_speech_s(self) -> float:
        """Seconds of quiet that end a request (the VAD sensitivity select).

        Raises ``ValueError`` while the select holds no valid state yet.
        """
        if (entity_id := self.entity_id("select", "vad_sensitivity")) is None or (
            state := self.hass.states.get(entity_id)
        ) is None:
            return DEFAULT_END_OF_SPEECH_S
        return vad.VadSensitivity.to_seconds(vad.VadSensitivity(state.state))

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

    def send_hello(self, end_of_speech_s: float | None = None) -> None:
        """Ask a voicestack-satellite for its extension events.

        It is also asked to end requests itself once the room is quiet for
        ``end_of_speech_s`` (default: what the VAD select holds), much sooner
        than a VAD model notices (see the satellite's endpoint.py).
        """
        if not (self.link.connected and self.link.supports(HELLO)):
            return
        if end_of_speech_s is None:
            try:
                end_of_speech_s = self.end_of_speech_s()
            except ValueError:  # the select has no valid state yet
                end_of_speech_s = DEFAULT_END_OF_SPEECH_S
        silence = max(MIN_END_OF_SPEECH_S, end_of_speech_s)
        self.send_soon(hello_event(end_of_speech_s=silence))

    def send_soon(self, event: Event) -> None:
        """Send ``event`` to the satellite in the background (fire and forget)."""
        self.entry.async_create_background_task(
            self.hass, self.link.send(event), f"voicestack send {event.type}"
        )

    def notify(self) -> None:
        """Tell the entities something changed."""
        for listener in self._listeners:
            listener()

    def entity_id(self, platform: str, key: str) -> str | None:
        """The entity id of this satellite's entity ``key`` on ``platform``."""
        return er.async_get(self.hass).async_get_entity_id(
            platform, DOMAIN, f"{self.satellite_id}-{key}"
        )

    def satellite_entity_id(self) -> str | None:
        """The assist satellite entity's id (None before it was registered)."""
        return self.entity_id("assist_satellite", "assist_satellite")

    def device_id(self) -> str | None:
        """The satellite's device (through its assist satellite entity)."""
        registry = er.async_get(self.hass)
        entity_id = self.satellite_entity_id()
        entity = registry.async_get(entity_id) if entity_id else None
        return entity.device_id if entity is not None else None


def loaded_entry_for_entity(hass: HomeAssistant, entity_id: str) -> ConfigEntry | None:
    """The loaded VoiceStack entry behind ``entity_id`` if it is its assist satellite."""
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
    return entry
