"""The VoiceStack conversation agent: the router in front of the wrapped agent.

``async_process`` routes the text through the asking device's router
(``AgentRuntime``). A route's own words (``speak``: "Dictation started.",
"Unlock the front door? Say yes or no.") are the answer, or come before the
wrapped agent's when the route sends text on (``agent_text``: a base-frame
command, a query, a confirmed action); the wrapped agent gets the device,
satellite, conversation and extra system prompt of the request.

``continue_conversation`` is set when the route expects more speech (a mode
that gathers, a question) or the wrapped agent asked back: a device that
supports it (a Voice PE, the companion app) listens again without a wake word.
"""

from __future__ import annotations

from typing import Literal

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntry
from homeassistant.const import MATCH_ALL
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from homeassistant.helpers.device_registry import DeviceEntryType, DeviceInfo
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util.ulid import ulid_now

from ..const import DOMAIN
from ..core.conversation.turn import reply_for
from ..core.router.route import Route, Utterance
from .config import CONF_WRAPPED_AGENT
from .runtime import AgentRuntime, DeviceModes

MANUFACTURER = "VoiceStack"
type AgentConfigEntry = ConfigEntry[AgentRuntime]


async def async_setup_agent_entity(
    hass: HomeAssistant,
    entry: AgentConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """The entry's one agent entity."""
    async_add_entities([VoiceStackAgent(entry)])


class VoiceStackAgent(conversation.ConversationEntity):
    """Voice modes per device, in front of the wrapped conversation agent."""

    _attr_has_entity_name = True
    _attr_name = None

    def __init__(self, entry: AgentConfigEntry) -> None:
        """One entity, one service device per entry."""
        self.entry = entry
        self._attr_unique_id = entry.entry_id
        self._attr_device_info = DeviceInfo(
            identifiers={(DOMAIN, entry.entry_id)},
            name=entry.title,
            manufacturer=MANUFACTURER,
            model="Conversation agent",
            entry_type=DeviceEntryType.SERVICE,
        )

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Whatever the wrapped agent supports: it is asked per request."""
        return MATCH_ALL

    @property
    def wrapped(self) -> str:
        """The agent this one wraps."""
        return str(self.entry.options[CONF_WRAPPED_AGENT])

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """Route the text on the device's router; say the route, ask the agent."""
        found = self.entry.runtime_data.for_request(user_input, self.wrapped)
        earlier = [await self._act(found, r, user_input) for r in found.take_pending()]
        route = await found.modes.router(
            Utterance(
                text=user_input.text,
                satellite_id=found.device.key,
                conversation_id=user_input.conversation_id,
            )
        )
        result = await self._act(found, route, user_input)
        if earlier:
            said = (*(_speech(r.response) for r in earlier), _speech(result.response))
            result.response.async_set_speech(" ".join(s for s in said if s))
        return result

    async def _act(
        self,
        found: DeviceModes,
        route: Route,
        user_input: conversation.ConversationInput,
    ) -> conversation.ConversationResult:
        """The route's words, then the wrapped agent's answer if it sends text on."""
        conversation_id = user_input.conversation_id or ulid_now()
        answer = ""
        asked_back = False
        response: intent.IntentResponse | None = None
        if route.agent_text is not None:
            result = await conversation.async_converse(
                self.hass,
                text=route.agent_text,
                conversation_id=user_input.conversation_id,
                context=user_input.context,
                language=user_input.language,
                agent_id=found.device.wrapped,
                device_id=user_input.device_id,
                satellite_id=user_input.satellite_id,
                extra_system_prompt=user_input.extra_system_prompt,
            )
            response = result.response
            answer = _speech(response)
            asked_back = result.continue_conversation
            conversation_id = result.conversation_id or conversation_id
        if response is None:
            response = intent.IntentResponse(language=user_input.language)
        response.async_set_speech(reply_for(route, answer=answer).speech)
        return conversation.ConversationResult(
            response=response,
            conversation_id=conversation_id,
            continue_conversation=asked_back or route.listen,
        )


def _speech(response: intent.IntentResponse) -> str:
    return str(response.speech.get("plain", {}).get("speech", ""))
