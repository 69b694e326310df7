"""Actions that drive voice modes from automations and dashboards.

``voicestack.start_dictation`` / ``start_inventory`` / ``start_query`` open a
frame on the target satellites (optionally delivering somewhere else than
configured), ``switch_voice`` opens the voice picker, ``abort_mode`` closes every
frame without sending anything, ``submit_mode`` delivers what the open frame
gathered now, and ``drain_queue`` returns (and empties) the deferred queue.

Each request is serialized with speech on the satellite's router and answered
aloud there, like the spoken command would be; the response data carries the
router's explanation.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
)
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
import voluptuous as vol

from ..const import DOMAIN
from ..core.router import Decision, VoiceRouter
from ..core.router.config import DESTINATIONS
from ..runtime import SatelliteRuntime, runtimes_for_entities
from .voice_modes import VoiceModes

ATTR_DESTINATION = "destination"
ATTR_TODO_ENTITY = "todo_entity"

TARGET_SCHEMA = vol.Schema({vol.Required(ATTR_ENTITY_ID): cv.comp_entity_ids})
START_SCHEMA = TARGET_SCHEMA.extend(
    {
        vol.Optional(ATTR_DESTINATION): vol.In(DESTINATIONS),
        vol.Optional(ATTR_TODO_ENTITY): cv.entity_domain("todo"),
    }
)

type Request = Callable[[VoiceModes, ServiceCall], Awaitable[Decision]]


def _start(kind: str) -> Request:
    async def start(modes: VoiceModes, call: ServiceCall) -> Decision:
        destination = call.data.get(ATTR_DESTINATION)
        todo_entity = call.data.get(ATTR_TODO_ENTITY)
        if destination == "todo" and not (todo_entity or modes.config.todo_entity):
            raise ServiceValidationError(
                translation_domain=DOMAIN, translation_key="todo_entity_required"
            )
        target = modes.target(destination, todo_entity)
        return await modes.router.start(kind, target)

    return start


def _call(operation: Callable[[VoiceRouter], Awaitable[Decision]]) -> Request:
    async def call(modes: VoiceModes, _call: ServiceCall) -> Decision:
        return await operation(modes.router)

    return call


REQUESTS: dict[str, tuple[vol.Schema, Request]] = {
    "start_dictation": (START_SCHEMA, _start("dictation")),
    "start_inventory": (START_SCHEMA, _start("inventory")),
    "start_query": (START_SCHEMA, _start("query")),
    "switch_voice": (
        TARGET_SCHEMA,
        _call(lambda router: router.start("voice_picker")),
    ),
    "abort_mode": (TARGET_SCHEMA, _call(VoiceRouter.abort)),
    "submit_mode": (TARGET_SCHEMA, _call(VoiceRouter.submit)),
}


def async_setup_mode_actions(hass: HomeAssistant) -> None:
    """Register the mode actions and ``drain_queue``."""
    for name, (schema, request) in REQUESTS.items():
        hass.services.async_register(
            DOMAIN,
            name,
            _handler(hass, request),
            schema=schema,
            supports_response=SupportsResponse.OPTIONAL,
        )

    async def drain(call: ServiceCall) -> ServiceResponse:
        drained: dict[str, Any] = {}
        for runtime in runtimes_for_entities(hass, call.data[ATTR_ENTITY_ID]):
            drained[_entity_id(runtime)] = await runtime.modes.queue.drain()
        return {"queues": drained}

    hass.services.async_register(
        DOMAIN,
        "drain_queue",
        drain,
        schema=TARGET_SCHEMA,
        supports_response=SupportsResponse.OPTIONAL,
    )


def _handler(
    hass: HomeAssistant, request: Request
) -> Callable[[ServiceCall], Coroutine[Any, Any, ServiceResponse]]:
    async def handle(call: ServiceCall) -> ServiceResponse:
        results: dict[str, Any] = {}
        for runtime in runtimes_for_entities(hass, call.data[ATTR_ENTITY_ID]):
            modes = runtime.modes
            decision = await modes.request(request(modes, call))
            results[_entity_id(runtime)] = {
                "mode": modes.router.mode,
                "stack": list(decision.stack),
                "reason": decision.reason,
                "speak": decision.speak,
            }
        return {"satellites": results}

    return handle


def _entity_id(runtime: SatelliteRuntime) -> str:
    hub = runtime.hub
    return hub.satellite_entity_id() or hub.satellite_id
