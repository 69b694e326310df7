"""Follow-up questions: when the agent expects an answer, no second wake word.

The agent is scripted: it stands in for an LLM agent (none can run here) and is
the only fake; satellite, Home Assistant, whisper and Piper are real.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Literal

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import async_update_pipeline
from homeassistant.core import Event, HomeAssistant
from homeassistant.helpers import intent
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.const import EVENT_UTTERANCE
from tests import servers, speech
from tests.integration.assist import add_voicestack, set_up_assist, wait_for, words
from tests.satellite.harness import satellite

pytestmark = pytest.mark.e2e

QUESTION = "What is on my shopping list?"
ANSWER = "Add bread."


class ScriptedAgent(conversation.AbstractConversationAgent):
    """Asks back after the first request, then confirms."""

    def __init__(self) -> None:
        """No requests seen yet."""
        self.inputs: list[conversation.ConversationInput] = []

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Any language."""
        return "*"

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """First turn: a question back; second turn: done."""
        self.inputs.append(user_input)
        first = len(self.inputs) == 1
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_speech(
            "You have milk. Do you want to add something?" if first else "Added bread."
        )
        return conversation.ConversationResult(
            response=response,
            conversation_id=user_input.conversation_id,
            continue_conversation=first,
        )


async def test_a_question_back_listens_without_a_wake_word(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    wake_and_ask = speech.pad(speech.speak("Hey Jarvis."), 0.5, 0.7) + speech.speak(
        QUESTION
    )
    # The answer comes well after the question back has been played.
    mic_pcm = wake_and_ask + speech.silence(12.5 - speech.seconds(wake_and_ask))
    mic_pcm += speech.speak(ANSWER) + speech.silence(3.0)
    mic = speech.write_wav(tmp_path / "mic.wav", mic_pcm)
    utterances: list[Event] = []
    hass.bus.async_listen(EVENT_UTTERANCE, utterances.append)
    agent = ScriptedAgent()
    agent_entry = MockConfigEntry(domain="test")
    agent_entry.add_to_hass(hass)

    async with AsyncExitStack() as stack:
        pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
        conversation.async_set_agent(hass, agent_entry, agent)
        stack.callback(conversation.async_unset_agent, hass, agent_entry)
        await async_update_pipeline(
            hass, pipeline, conversation_engine=agent_entry.entry_id
        )
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        await add_voicestack(hass, stack, sat)
        await wait_for(
            lambda: len(agent.inputs) == 2, 40, "the answer reached the agent"
        )
        await wait_for(
            lambda: len(list(tmp_path.glob("played.*.wav"))) == 2, 10, "both replies"
        )

    first, second = agent.inputs
    assert words(first.text) == words(QUESTION)
    assert words(second.text) == words(ANSWER)
    assert second.conversation_id == first.conversation_id
    assert [u.data["wake_word"] for u in utterances] == ["hey_jarvis", None]
