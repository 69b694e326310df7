"""What a turn says, as the agent writes it: its answer streamed from the chat log.

An LLM agent writes its answer into Home Assistant's ``ChatLog`` piece by piece
(deltas). Home Assistant's own pipeline starts speaking once 60 characters have
come; here the answer is spoken from its first sentence on, while the agent
writes the rest. An agent that does not stream (the default agent) is said
when it answers, as before.

What is said is the router's own words, then the answer, then the follow-up
loop's closing, in that order (``core.turn.reply_for``); a streamed answer's
words are said as the agent wrote them (every assistant message of the turn,
as Home Assistant's pipeline says them), not its result's final speech.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError

from ..compat import chat_session_for
from ..const import DOMAIN


class AnswerText:
    """The text of one turn's reply, handed on piece by piece as it is known.

    Until the agent streams, nothing is handed on: an agent that does not
    stream is said whole when it answers (``finish``), exactly as before.
    """

    def __init__(self, lead: str | None) -> None:
        """``lead`` (the router's own words) comes before the answer."""
        self._pieces: asyncio.Queue[str | None] = asyncio.Queue()
        self._lead = (lead or "").strip()
        self._said = ""
        self._role: str | None = None
        self.streamed = False  # the agent streamed (some of) its answer

    @property
    def text(self) -> str:
        """Everything handed on so far: what is being said."""
        return self._said.strip()

    @callback
    def on_delta(self, _chat_log: conversation.ChatLog, delta: dict[str, Any]) -> None:
        """A chat log delta: the assistant's words go on at once.

        As Home Assistant's pipeline does: only the assistant's content, and a
        space between two assistant messages (around a tool call).
        """
        if role := delta.get("role"):
            self._role = role
            if role == "assistant" and self.streamed and self._said[-1:] != " ":
                self._put(" ")
        if self._role == "assistant" and (content := delta.get("content")):
            if not self.streamed:
                self.streamed = True
                content = f"{self._lead} {content.lstrip()}".lstrip()
            self._put(content)

    def finish(self, speech: str, closing: str) -> None:
        """The agent is done: all of ``speech``, or only ``closing`` if it streamed."""
        if not self.streamed:
            self._put(speech.strip())
        elif closing := closing.strip():
            self._put(f" {closing}")
        self._pieces.put_nowait(None)

    async def pieces(self) -> AsyncIterator[str]:
        """The text in pieces, as they come, until ``finish``."""
        while (piece := await self._pieces.get()) is not None:
            yield piece

    def _put(self, piece: str) -> None:
        if piece:
            self._said += piece
            self._pieces.put_nowait(piece)


def require_agent(hass: HomeAssistant, agent_id: str | None) -> None:
    """Refuse, translated, an agent Home Assistant no longer has.

    A pipeline keeps naming an agent whose integration was removed; Home
    Assistant's own calls then raise a bare ``ValueError``, which would end the
    request with a traceback instead of one clear line.
    """
    if conversation.async_get_agent(hass, agent_id) is None:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="agent_not_found",
            translation_placeholders={"agent_id": str(agent_id)},
        )


async def prepare_agent(
    hass: HomeAssistant, agent_id: str | None, language: str
) -> None:
    """Ready the agent while speech-to-text listens, as Home Assistant's pipeline does.

    An agent that is gone is left to the request, which reports it once.
    """
    if conversation.async_get_agent(hass, agent_id) is not None:
        await conversation.async_prepare_agent(hass, agent_id, language)


async def converse_streaming(
    hass: HomeAssistant,
    request: conversation.ConversationInput,
    on_delta: Callable[[conversation.ChatLog, dict[str, Any]], None],
) -> conversation.ConversationResult:
    """Ask the agent, with the chat log's deltas going to ``on_delta`` as they come.

    As Home Assistant's pipeline does: the agent writes into the chat log
    opened here (the session's), and the answer of an agent that does not use
    the chat log is added to it, so the next turn's history is whole.
    """
    require_agent(hass, request.agent_id)
    with chat_session_for(hass, request.conversation_id, request.context) as session:
        request = replace(request, conversation_id=session.conversation_id)
        with conversation.async_get_chat_log(
            hass, session, request, chat_log_delta_listener=on_delta
        ) as chat_log:
            result = await conversation.async_converse(
                hass,
                text=request.text,
                conversation_id=request.conversation_id,
                context=request.context,
                language=request.language,
                agent_id=request.agent_id,
                device_id=request.device_id,
                satellite_id=request.satellite_id,
                extra_system_prompt=request.extra_system_prompt,
            )
            speech = result.response.speech.get("plain", {}).get("speech", "")
            if speech and chat_log.content[-1].role == "user":
                chat_log.async_add_assistant_content_without_tools(
                    conversation.AssistantContent(
                        agent_id=request.agent_id, content=speech
                    )
                )
            return result
