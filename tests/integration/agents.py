"""A scripted conversation agent: stands in for an LLM agent (none can run here).

It is the only fake in the tests that use it; satellite, Home Assistant, whisper
and Piper stay real. ``reply`` decides the answer (and whether it asks back).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import Literal

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import Pipeline, async_update_pipeline
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent
from homeassistant.util.ulid import ulid_now
from pytest_homeassistant_custom_component.common import MockConfigEntry

# The agent's answer to a request, and whether it expects an answer back.
type Reply = Callable[[conversation.ConversationInput], tuple[str, bool]]


class ScriptedAgent(conversation.AbstractConversationAgent):
    """Answers with ``reply``; records every input."""

    def __init__(self, reply: Reply) -> None:
        """No requests seen yet."""
        self.reply = reply
        self.inputs: list[conversation.ConversationInput] = []

    @property
    def texts(self) -> list[str]:
        """What reached the agent, in order."""
        return [user_input.text for user_input in self.inputs]

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Any language."""
        return "*"

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """Record, then answer as scripted."""
        self.inputs.append(user_input)
        speech, ask_back = self.reply(user_input)
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_speech(speech)
        return conversation.ConversationResult(
            response=response,
            conversation_id=user_input.conversation_id,
            continue_conversation=ask_back,
        )


class ChatAgent(ScriptedAgent):
    """A scripted agent that opens a conversation when given none, as real ones do."""

    def __init__(self, reply: Reply) -> None:
        """Not yet an agent of Home Assistant's (``add_chat_agent``)."""
        super().__init__(reply)
        self.agent_id = ""
        self.answered_in: list[str] = []  # the conversation of each answer

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """The scripted answer, in the conversation given or a new one."""
        result = await super().async_process(user_input)
        self.answered_in.append(user_input.conversation_id or ulid_now())
        return replace(result, conversation_id=self.answered_in[-1])


def add_chat_agent(hass: HomeAssistant, reply: Reply) -> ChatAgent:
    """A ``ChatAgent`` answering with ``reply``, an agent of Home Assistant's."""
    agent = ChatAgent(reply)
    entry = MockConfigEntry(domain="test")
    entry.add_to_hass(hass)
    conversation.async_set_agent(hass, entry, agent)
    agent.agent_id = entry.entry_id
    return agent


async def use_agent(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    reply: Reply,
    *,
    agent: ScriptedAgent | None = None,
) -> ScriptedAgent:
    """Make a scripted agent ``pipeline``'s agent until ``stack`` closes.

    ``agent`` if given, else one that answers with ``reply``.
    """
    agent = agent or ScriptedAgent(reply)
    entry = MockConfigEntry(domain="test")
    entry.add_to_hass(hass)
    conversation.async_set_agent(hass, entry, agent)
    stack.callback(conversation.async_unset_agent, hass, entry)
    await async_update_pipeline(hass, pipeline, conversation_engine=entry.entry_id)
    return agent
