"""A conversation agent that writes its answer in pieces, as an LLM agent streams it.

No LLM can run here; what VoiceStack does with one is start speaking before
the answer is written. This agent writes ``STREAMED_ANSWER`` into Home
Assistant's ``ChatLog`` as deltas of a few characters, ``STREAM_S`` in all
(about an LLM's pace on a local GPU), through the chat log's own
``async_add_delta_content_stream``, the way HA's LLM integrations do. Its
``written`` times say when each delta went in. Used by
``tests/integration/test_streaming_answer.py`` and ``bench/voice_latency.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import time
from typing import Literal

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.helpers import chat_session

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


class StreamingAgent(conversation.AbstractConversationAgent):
    """Answers every request with ``STREAMED_ANSWER``, in deltas over ``STREAM_S``."""

    def __init__(self, hass: HomeAssistant, *, stream_s: float = STREAM_S) -> None:
        """Writes its answers in ``hass``'s chat logs."""
        self.hass = hass
        self.stream_s = stream_s
        self.written: list[float] = []  # wall-clock time of each delta
        self.texts: list[str] = []  # every request, in order

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Any language."""
        return "*"

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """Write the answer into the request's chat log, a few characters at a time."""
        self.texts.append(user_input.text)
        self.written.clear()
        with (
            chat_session.async_get_chat_session(
                self.hass, user_input.conversation_id
            ) as session,
            conversation.async_get_chat_log(self.hass, session, user_input) as log,
        ):
            async for _content in log.async_add_delta_content_stream(
                AGENT_ID, self._deltas()
            ):
                pass
            return conversation.async_get_result_from_chat_log(user_input, log)

    async def _deltas(self) -> AsyncIterator[conversation.AssistantContentDeltaDict]:
        pieces = [
            STREAMED_ANSWER[at : at + DELTA_CHARS]
            for at in range(0, len(STREAMED_ANSWER), DELTA_CHARS)
        ]
        pause = self.stream_s / len(pieces)
        yield {"role": "assistant"}
        for piece in pieces:
            await asyncio.sleep(pause)
            self.written.append(time.time())
            yield {"content": piece}
