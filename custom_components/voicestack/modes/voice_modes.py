"""One device's voice modes: the frame-stack router plugged into Home Assistant.

``VoiceModes`` builds the HA-free ``VoiceRouter`` (see ``core/router``) from the
entry's options and gives it Home Assistant's parts, for one ``ModesDevice``
(``modes/device.py``: a VoiceStack satellite, or a device that talks through the
VoiceStack conversation agent):

- the agent target asks before acting on locks, garage doors and alarms, using
  ``EntityResolver`` (the default agent's recognizer, nothing is run);
- the gathering frames deliver to the pipeline's agent, a notes file in the
  config directory's ``voicestack`` folder (no link below the config directory
  is followed), a to-do list (``todo.add_item``), a ``voicestack_dictation``
  event or the deferred queue (``Store``);
- shortcuts run scripts;
- on a VoiceStack satellite (``SatelliteControls``) the voice picker offers the
  pipeline TTS engine's voices and the listen mode is sent to it
  (``voicestack-listen`` continuous), again on every reconnect.

The voice loop routes every transcript through ``router``. Routes no transcript
caused (a query submitted on silence, a confirmation that expired, a mode
action's answer) go to whoever subscribed with ``async_subscribe_routes``: the
voice loop again, which says them like an utterance's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
import logging
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.todo import DOMAIN as TODO_DOMAIN, TodoServices
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError

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
    VoiceRouter,
)
from ..core.router.config import ROUTER_OPTIONS, RouterConfig
from ..core.router.route import Route
from ..core.router.rules import ClassifierUnavailableError
from ..deferred_queue import DeferredQueueStore
from ..subscriptions import Subscribers
from .device import ModesDevice, SatelliteControls
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
    """The router of one device and the Home Assistant parts it uses."""

    def __init__(
        self,
        hass: HomeAssistant,
        device: ModesDevice,
        queue: DeferredQueueStore,
        controls: SatelliteControls | None = None,
    ) -> None:
        """Build the router from the entry's options (it starts in the base frame).

        ``controls``: the device is a VoiceStack satellite (voices, listen mode).
        """
        self.hass = hass
        self.device = device
        self.controls = controls
        self.queue = queue
        self._options = router_options(device.entry.options)
        self.config = router_config(self._options, device.name)
        self._route_handlers = Subscribers[RouteHandler]()
        self.router = VoiceRouter(
            self.config.settings,
            self._hooks(),
            clock=LoopClock(hass.loop),
            emit=self._emit,
            name=device.name,
        )
        self._unsubscribe = [self.router.add_listener(device.notify)]
        if controls is not None:
            self._unsubscribe.append(
                controls.async_subscribe_connection(self._on_connection)
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
        if self.controls is not None and self.controls.connected:
            self.device.entry.async_create_background_task(
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
                "%s: could not say %r: %s", self.device.name, route.speak, err
            )
        except Exception:
            _LOGGER.exception("%s: could not say %r", self.device.name, route.speak)

    @callback
    def _on_connection(self, connected: bool) -> None:
        """A satellite that reconnects forgot it was always listening: tell it."""
        if connected and self.always_listening and self.controls is not None:
            self.device.entry.async_create_background_task(
                self.hass,
                self.controls.set_listen_mode(self.router.listen_mode),
                "voicestack listen mode",
            )

    # -- hooks ------------------------------------------------------------------------

    def _hooks(self) -> Hooks:
        device = self.device
        resolver = self.resolver = EntityResolver(
            self.hass,
            device.language,
            device.device_id,
            device.entity_id,
            device.agent_id,
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
        controls = self.controls
        return Hooks(
            agent=agent,
            targets=targets,
            run_shortcut=self._run_shortcut,
            list_voices=controls.list_voices if controls else None,
            set_voice=controls.set_voice if controls else None,
            set_listen_mode=controls.set_listen_mode if controls else None,
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
            context=self.device.context,
        )

    def _fire(self, event_type: str, data: dict[str, Any]) -> None:
        self.hass.bus.async_fire(
            event_type,
            {
                "entity_id": self.device.entity_id(),
                "device_id": self.device.device_id(),
                **data,
            },
            context=self.device.context,
        )

    async def _run_shortcut(self, script_entity_id: str) -> str | None:
        """Start the script and answer at once (it may run for a while)."""
        await self.hass.services.async_call(
            "script",
            "turn_on",
            {"entity_id": script_entity_id},
            blocking=True,
            context=self.device.context,
        )
        return SHORTCUT_DONE

    async def _classify(self, prompt: str, labels: tuple[str, ...]) -> str:
        """Ask the pipeline's agent (an LLM) to pick one of ``labels``.

        Home Assistant's built-in agent only knows its sentences: asking it
        would just cost time, so it is not asked (the rule falls back).
        """
        device = self.device
        agent_id = device.agent_id()
        if agent_id in _BUILT_IN_AGENTS:
            raise ClassifierUnavailableError("the built-in agent cannot classify")
        result = await conversation.async_converse(
            self.hass,
            text=prompt,
            conversation_id=None,
            context=device.context,
            language=device.language(),
            agent_id=agent_id,
            device_id=device.device_id(),
            satellite_id=device.entity_id(),
        )
        return str(result.response.speech.get("plain", {}).get("speech", ""))

    async def _emit(self, route: Route) -> None:
        """A route no transcript caused: whoever subscribed says it."""
        for handler in self._route_handlers:
            await handler(route)
