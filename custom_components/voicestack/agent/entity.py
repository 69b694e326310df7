"""The VoiceStack conversation agent: the router in front of the wrapped agent.

``async_process`` routes the text through the asking device's router
(``AgentRuntime``). A route's own words (``speak``: "Dictation started.",
"Unlock the front door? Say yes or no.") are the answer, or come before the
wrapped agent's when the route sends text on (``agent_text``: a base-frame
command, a query, a confirmed action); the wrapped agent gets the device,
satellite, conversation and extra system prompt of the request.

``continue_conversation`` is set when the route expects more speech (a mode
that gathers, a question) or the device's follow-up session goes on
(``follow_up.py``: the satellite's turn limit, stop words and memory policy):
a device that supports it (a Voice PE, the companion app) listens again
without a wake word. At the turn limit an answer that asks back ends with the
closing ("Say the wake word to go on."); a stop word in a follow-up turn ends
the session, and nothing is said.
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
from ..core.conversation.follow_up import Session
from ..core.conversation.turn import reply_for
from ..core.router.route import Route, Utterance
from .config import CONF_WRAPPED_AGENT
from .follow_up import AgentFollowUps, DeviceFollowUp
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

    async def async_added_to_hass(self) -> None:
        """The devices' follow-up sessions, with the entry's options."""
        await super().async_added_to_hass()
        self.follow_ups = AgentFollowUps(self.hass, self.entry)

    async def async_will_remove_from_hass(self) -> None:
        """Open sessions end as cancelled."""
        self.follow_ups.close()
        await super().async_will_remove_from_hass()

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """Route the text on the device's router; say the route, ask the agent."""
        runtime = self.entry.runtime_data
        found = runtime.for_request(user_input, self.wrapped)
        follow = self.follow_ups.for_device(found.device.key, runtime.devices)
        session = follow.begin(user_input)
        conversation_id = user_input.conversation_id or ulid_now()
        if follow.is_stop(session, user_input.text):
            follow.loop.stop()  # nothing goes to the router or the agent
            return _result(user_input, "", conversation_id, listen=False)
        earlier = [
            (r, await self._ask(found, r, user_input, follow, session))
            for r in found.take_pending()
        ]
        route = await found.modes.router(
            Utterance(
                text=user_input.text,
                satellite_id=found.device.key,
                conversation_id=user_input.conversation_id,
            )
        )
        answer, asked_back, response = await self._ask(
            found, route, user_input, follow, session
        )
        # At the turn limit an answer's question would go unheard: say so.
        reply = reply_for(
            route,
            answer=answer,
            closing=follow.loop.closing(answer, asked_back),
            follow_up_s=follow.answered(conversation_id, asked_back),
        )
        said = (*(reply_for(r, answer=a[0]).speech for r, a in earlier), reply.speech)
        return _result(
            user_input,
            " ".join(s for s in said if s),
            conversation_id,
            listen=reply.listen_s is not None,
            response=response,
        )

    async def _ask(
        self,
        found: DeviceModes,
        route: Route,
        user_input: conversation.ConversationInput,
        follow: DeviceFollowUp,
        session: Session,
    ) -> tuple[str, bool, intent.IntentResponse | None]:
        """The wrapped agent's answer if the route sends text on, if it asked back.

        Its conversation is the memory policy's; the one it answered in is
        remembered for the session's next turn.
        """
        if route.agent_text is None:
            return "", False, None
        result = await conversation.async_converse(
            self.hass,
            text=route.agent_text,
            conversation_id=follow.wrapped_conversation(session, user_input),
            context=user_input.context,
            language=user_input.language,
            agent_id=found.device.wrapped,
            device_id=user_input.device_id,
            satellite_id=user_input.satellite_id,
            extra_system_prompt=user_input.extra_system_prompt,
        )
        follow.loop.remember(result.conversation_id)
        answer = _speech(result.response)
        return answer, result.continue_conversation, result.response


def _result(
    user_input: conversation.ConversationInput,
    speech: str,
    conversation_id: str,
    *,
    listen: bool,
    response: intent.IntentResponse | None = None,
) -> conversation.ConversationResult:
    """What is said (the wrapped agent's response, if any, keeps its data)."""
    if response is None:
        response = intent.IntentResponse(language=user_input.language)
    response.async_set_speech(speech)
    return conversation.ConversationResult(
        response=response,
        conversation_id=conversation_id,
        continue_conversation=listen,
    )


def _speech(response: intent.IntentResponse) -> str:
    return str(response.speech.get("plain", {}).get("speech", ""))
