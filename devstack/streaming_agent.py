"""A conversation agent that writes its answer in pieces, as an LLM agent streams it.

No LLM can run here; what VoiceStack does with one is start speaking before
the answer is written. This agent writes ``STREAMED_ANSWER`` into Home
Assistant's ``ChatLog`` as deltas of a few characters, ``STREAM_S`` in all
(about an LLM's pace on a local GPU), through the chat log's own
``async_add_delta_content_stream``, as a conversation entity, the way HA's
LLM integrations do. Its
``written`` times say when each delta went in. Used by
``tests/integration/test_streaming_answer.py`` and ``bench/voice_latency.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
import time
from typing import Literal

from homeassistant.components import conversation
from homeassistant.components.conversation.const import DATA_COMPONENT
from homeassistant.core import HomeAssistant

AGENT_ID = "conversation.devstack_streaming"
# Three sentences; the first short, as an LLM's answer often starts. Home
# Assistant's pipeline starts speaking a streamed answer only once 60
# characters have come.
STREAMED_ANSWER = (
    "Sure, here it is. The kitchen light is off and the living room lamp is off. "
    "The fan is off too, so everything is quiet."
)
STREAM_S = 2.0
DELTA_CHARS = 4
# Where a held agent waits (``hold``): its first sentence and enough of the
# next to show that the first has ended.
HOLD_AFTER = len("Sure, here it is. The kitchen light ")

Hold = Callable[[], Awaitable[None]]  # an awaitable the agent waits for


class StreamingAgent(conversation.ConversationEntity):
    """Answers every request with ``STREAMED_ANSWER``, in deltas over ``stream_s``.

    A conversation entity, as HA's LLM agents are, so both owners' pipelines
    accept it as their agent (``add_streaming_agent``).
    """

    _attr_should_poll = False

    def __init__(self, *, stream_s: float = STREAM_S, hold: Hold | None = None) -> None:
        """Writes each answer over ``stream_s`` seconds.

        ``hold``: awaited once ``HOLD_AFTER`` characters are written, before the
        rest (an LLM agent's tool call in the middle of its answer); a test
        holds the agent until what it wrote so far was heard.
        """
        self.entity_id = AGENT_ID
        self._attr_name = "Devstack streaming agent"
        self.stream_s = stream_s
        self.hold = hold
        self.written: list[float] = []  # wall-clock time of each delta
        self.texts: list[str] = []  # every request, in order

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Any language."""
        return "*"

    async def _async_handle_message(
        self, user_input: conversation.ConversationInput, chat_log: conversation.ChatLog
    ) -> conversation.ConversationResult:
        """Write the answer into the request's chat log, a few characters at a time."""
        self.texts.append(user_input.text)
        self.written.clear()
        async for _content in chat_log.async_add_delta_content_stream(
            AGENT_ID, self._deltas()
        ):
            pass
        return conversation.async_get_result_from_chat_log(user_input, chat_log)

    async def _deltas(self) -> AsyncIterator[conversation.AssistantContentDeltaDict]:
        pieces = [
            STREAMED_ANSWER[at : at + DELTA_CHARS]
            for at in range(0, len(STREAMED_ANSWER), DELTA_CHARS)
        ]
        pause = self.stream_s / len(pieces)
        yield {"role": "assistant"}
        for index, piece in enumerate(pieces):
            if self.hold is not None and index * DELTA_CHARS == HOLD_AFTER:
                await self.hold()
            await asyncio.sleep(pause)
            self.written.append(time.time())
            yield {"content": piece}


async def add_streaming_agent(
    hass: HomeAssistant, *, stream_s: float = STREAM_S, hold: Hold | None = None
) -> StreamingAgent:
    """A streaming agent, ``AGENT_ID``, among ``hass``'s conversation entities.

    ``await agent.async_remove()`` takes it away again.
    """
    agent = StreamingAgent(stream_s=stream_s, hold=hold)
    await hass.data[DATA_COMPONENT].async_add_entities([agent])
    return agent
