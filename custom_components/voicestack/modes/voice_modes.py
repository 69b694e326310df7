"""One satellite's voice modes: the frame-stack router plugged into Home Assistant.

``VoiceModes`` builds the HA-free ``VoiceRouter`` (see ``core/router``) from the
entry's options and gives it Home Assistant's parts:

- the agent target asks before acting on locks, garage doors and alarms, using
  ``EntityResolver`` (the default agent's recognizer, nothing is run);
- the gathering frames deliver to the pipeline's agent, a notes file in the
  config directory's ``voicestack`` folder (no link below the config directory
  is followed), a to-do list (``todo.add_item``), a ``voicestack_dictation``
  event or the deferred queue (``Store``);
- shortcuts run scripts; the voice picker offers the pipeline TTS engine's voices;
- the listen mode is sent to the satellite (``voicestack-listen`` continuous),
  again on every reconnect.

The voice loop routes every transcript through ``router``. Routes no transcript
caused (a query submitted on silence, a confirmation that expired, a mode
action's answer) go to whoever subscribed with ``async_subscribe_routes``: the
voice loop again, which says them like an utterance's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
import logging
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.todo import DOMAIN as TODO_DOMAIN, TodoServices
from homeassistant.components.tts.helper import get_engine_instance
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError

from voicestack_protocol import LISTEN, listen_event

from ..const import EVENT_DICTATION
from ..core.clock import LoopClock
from ..core.router import (
    AgentTarget,
    Decision,
    EventTarget,
    Hooks,
    ListenMode,
    NotesFileTarget,
    QueueTarget,
    Target,
    TodoTarget,
    VocabularyError,
    Voice,
    VoiceRouter,
)
from ..core.router.config import ROUTER_OPTIONS, RouterConfig
from ..core.router.route import Route
from ..core.router.rules import ClassifierUnavailableError
from ..deferred_queue import DeferredQueueStore
from ..hub import SatelliteHub
from ..subscriptions import Subscribers
from .recognize import EntityResolver

_LOGGER = logging.getLogger(__name__)

SHORTCUT_DONE = "Done."
type RouteHandler = Callable[[Route], Awaitable[None]]
_BUILT_IN_AGENTS = frozenset({None, conversation.HOME_ASSISTANT_AGENT})


def router_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The entry options that configure the router."""
    return {key: options[key] for key in ROUTER_OPTIONS if key in options}


def router_config(options: dict[str, Any], title: str) -> RouterConfig:
    """The entry's router options; the defaults (with an error) if unusable.

    The options flow never stores invalid options, but a hand-edited or older
    entry must not keep the satellite from working.
    """
    try:
        return RouterConfig.from_options(options)
    except VocabularyError as err:
        _LOGGER.error("%s: voice mode options ignored: %s", title, err)
        return RouterConfig()


class VoiceModes:
    """The router of one satellite and the Home Assistant parts it uses."""

    def __init__(
        self, hass: HomeAssistant, hub: SatelliteHub, queue: DeferredQueueStore
    ) -> None:
        """Build the router from the entry's options (it starts in the base frame)."""
        self.hass = hass
        self.hub = hub
        self.queue = queue
        self._options = router_options(hub.entry.options)
        self.config = router_config(self._options, hub.entry.title)
        self.router = VoiceRouter(
            self.config.settings,
            self._hooks(),
            clock=LoopClock(hass.loop),
            emit=self._emit,
            name=hub.entry.title,
        )
        self._route_handlers = Subscribers[RouteHandler]()
        self._unsubscribe = (
            self.router.add_listener(hub.notify),
            hub.async_subscribe_connection(self._on_connection),
        )

    def options_changed(self, options: Mapping[str, Any]) -> bool:
        """Whether ``options`` configure the router differently (needs a reload)."""
        return router_options(options) != self._options

    @property
    def notes_path(self) -> Path:
        """Where ``notes`` submissions are appended (``<config>/voicestack/…``)."""
        return Path(self.hass.config.path(self.config.notes_file))

    @property
    def always_listening(self) -> bool:
        """The satellite streams every speech segment (the router's listen mode)."""
        return self.router.listen_mode is ListenMode.ALWAYS_LISTENING

    @callback
    def async_subscribe_routes(self, handler: RouteHandler) -> CALLBACK_TYPE:
        """Hand ``handler`` every route no transcript caused; the remover."""
        return self._route_handlers.add(handler)

    async def close(self) -> None:
        """Unload: frames close without submitting, timers stop."""
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        await self.router.close()

    async def request(self, decision: Awaitable[Decision]) -> Decision:
        """Run a request from Home Assistant (select, action); speak its answer.

        The satellite says what the frame says ("Dictation started.") and, when the new
        frame expects speech, listens without a wake word.
        """
        done = await decision
        if self.hub.connected:
            self.hub.entry.async_create_background_task(
                self.hass, self._reply(done.route()), "voicestack mode reply"
            )
        return done

    async def _reply(self, route: Route) -> None:
        """Say a request's answer; failing to (no TTS engine) only logs.

        The request itself succeeded: the caller has its decision already.
        """
        try:
            await self._emit(route)
        except HomeAssistantError as err:
            _LOGGER.warning(
                "%s: could not say %r: %s", self.hub.entry.title, route.speak, err
            )
        except Exception:
            _LOGGER.exception("%s: could not say %r", self.hub.entry.title, route.speak)

    @callback
    def _on_connection(self, connected: bool) -> None:
        """A satellite that reconnects forgot it was always listening: tell it."""
        if connected and self.always_listening:
            self.hub.entry.async_create_background_task(
                self.hass,
                self._send_listen_mode(self.router.listen_mode),
                "voicestack listen mode",
            )

    # -- hooks ------------------------------------------------------------------------

    def _hooks(self) -> Hooks:
        resolver = EntityResolver(
            self.hass,
            self._language,
            self.hub.device_id,
            self.hub.satellite_entity_id,
            self._agent_id,
        )
        agent = AgentTarget(
            resolver,
            self.config.policy,
            known=resolver.known,
            reused=resolver.reused,
            clock=LoopClock(self.hass.loop),
        )
        targets: dict[str, Target] = {}
        for frame, destination in self.config.destinations.items():
            targets[frame] = (
                agent if destination == "agent" else self._target(destination)
            )
        return Hooks(
            agent=agent,
            targets=targets,
            run_shortcut=self._run_shortcut,
            list_voices=self._list_voices,
            set_voice=self._set_voice,
            set_listen_mode=self._send_listen_mode,
            classify=self._classify,
        )

    def _target(self, destination: str) -> Target:
        if destination == "notes":
            return NotesFileTarget(self.notes_path, within=self.hass.config.config_dir)
        if destination == "todo":
            return TodoTarget(self._add_todo_item)
        if destination == "event":
            return EventTarget(self._fire, event_type=EVENT_DICTATION)
        return QueueTarget(self.queue)

    def target(self, destination: str | None, todo_entity: str | None) -> Target | None:
        """A target chosen by an action (``None``: the configured one)."""
        if destination is None:
            return None
        if destination == "todo" and todo_entity:
            return TodoTarget(lambda text: self._add_todo_item(text, todo_entity))
        if destination == "agent":
            return self.router.kit.hooks.agent
        return self._target(destination)

    async def _add_todo_item(self, text: str, entity_id: str | None = None) -> None:
        await self.hass.services.async_call(
            TODO_DOMAIN,
            TodoServices.ADD_ITEM,
            {"item": text},
            target={"entity_id": entity_id or self.config.todo_entity},
            blocking=True,
            context=self.hub.request_context,
        )

    def _fire(self, event_type: str, data: dict[str, Any]) -> None:
        self.hass.bus.async_fire(
            event_type,
            {
                "entity_id": self.hub.satellite_entity_id(),
                "device_id": self.hub.device_id(),
                **data,
            },
            context=self.hub.request_context,
        )

    async def _run_shortcut(self, script_entity_id: str) -> str | None:
        """Start the script and answer at once (it may run for a while)."""
        await self.hass.services.async_call(
            "script",
            "turn_on",
            {"entity_id": script_entity_id},
            blocking=True,
            context=self.hub.request_context,
        )
        return SHORTCUT_DONE

    async def _list_voices(self) -> Sequence[Voice]:
        pipeline = self.hub.pipeline()
        engine = (
            get_engine_instance(self.hass, pipeline.tts_engine)
            if pipeline.tts_engine
            else None
        )
        if engine is None:
            return ()
        # A legacy provider may have no default language: then it offers no voices.
        language = pipeline.tts_language or engine.default_language
        voices = (
            engine.async_get_supported_voices(language) if language else None
        ) or []
        current = self.hub.tts_voice or pipeline.tts_voice
        return [
            Voice(voice.voice_id, voice.name)
            for voice in voices
            if voice.voice_id != current
        ]

    async def _classify(self, prompt: str, labels: tuple[str, ...]) -> str:
        """Ask the pipeline's agent (an LLM) to pick one of ``labels``.

        Home Assistant's built-in agent only knows its sentences: asking it
        would just cost time, so it is not asked (the rule falls back).
        """
        pipeline = self.hub.pipeline()
        if pipeline.conversation_engine in _BUILT_IN_AGENTS:
            raise ClassifierUnavailableError("the built-in agent cannot classify")
        result = await conversation.async_converse(
            self.hass,
            text=prompt,
            conversation_id=None,
            context=self.hub.request_context,
            language=pipeline.conversation_language,
            agent_id=pipeline.conversation_engine,
            device_id=self.hub.device_id(),
            satellite_id=self.hub.satellite_entity_id(),
        )
        return str(result.response.speech.get("plain", {}).get("speech", ""))

    async def _set_voice(self, voice: Voice) -> None:
        self.hub.set_tts_voice(voice.voice_id)

    async def _send_listen_mode(self, mode: ListenMode) -> None:
        if not self.hub.link.supports(LISTEN):
            if mode is ListenMode.ALWAYS_LISTENING:
                raise RuntimeError("the satellite cannot listen without a wake word")
            return
        continuous = mode is ListenMode.ALWAYS_LISTENING
        await self.hub.link.send(listen_event(continuous=continuous))

    async def _emit(self, route: Route) -> None:
        """A route no transcript caused: whoever subscribed says it."""
        for handler in self._route_handlers:
            await handler(route)

    # -- per request --------------------------------------------------------------------

    def _language(self) -> str:
        return self.hub.pipeline().conversation_language

    def _agent_id(self) -> str | None:
        return self.hub.pipeline().conversation_engine
