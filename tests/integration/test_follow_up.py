"""Follow-up questions: when the agent expects an answer, no second wake word.

The agent is scripted: it stands in for an LLM agent (none can run here) and is
the only fake; satellite, Home Assistant, whisper and Piper are real.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.components import conversation
from homeassistant.core import Event, HomeAssistant
import pytest

from custom_components.voicestack.const import EVENT_UTTERANCE
from devstack import servers, speech
from devstack.satellite import satellite
from devstack.waiting import wait_for
from tests.integration.agents import use_agent
from tests.integration.assist import (
    add_voicestack,
    set_up_assist,
    words,
)

pytestmark = pytest.mark.e2e

QUESTION = "What is on my shopping list?"
ANSWER = "Add bread."


def ask_back_once(user_input: conversation.ConversationInput) -> tuple[str, bool]:
    """First turn: a question back; then done."""
    if "shopping list" in user_input.text.lower():
        return "You have milk. Do you want to add something?", True
    return "Added bread.", False


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

    async with AsyncExitStack() as stack:
        pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
        agent = await use_agent(hass, stack, pipeline, ask_back_once)
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
