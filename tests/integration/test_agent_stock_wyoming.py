"""The VoiceStack conversation agent behind a stock Wyoming satellite.

Home Assistant's own ``wyoming`` integration runs our satellite in stock mode (as
in test_stock_wyoming.py); the pipeline's conversation agent is VoiceStack's,
wrapping Home Assistant's. Real whisper and Piper. What the person hears (the
satellite's played audio, transcribed) is the mode's reply, and then the
device's router has the mode open, keyed by the device Home Assistant passes.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import async_update_pipeline
from homeassistant.components.lock import LockState
from homeassistant.core import HomeAssistant
import pytest

from custom_components.voicestack.agent.config import CONF_WRAPPED_AGENT
from custom_components.voicestack.agent.runtime import TEXT_KEY, AgentRuntime
from custom_components.voicestack.core.router import Replies
from devstack import servers, speech
from devstack.satellite import satellite
from devstack.spoken_request import spoken_request
from devstack.waiting import wait_for
from tests.integration.agents import add_chat_agent
from tests.integration.assist import (
    FRONT_DOOR,
    add_wyoming,
    record_states,
    record_unlocks,
    set_up_assist,
    words,
)
from tests.integration.entry_points import QUESTION, SAVED, answer, notes, stock_entry
from tests.integration.test_agent import add_agent, agent_entity, set_options
from tests.integration.test_agent_follow_up import record_session_ends

RUN_TIMEOUT_S = 30.0
REPLIES = Replies()


@pytest.mark.filterwarnings(
    "ignore:Exception ignored in.*Wave_write:pytest.PytestUnraisableExceptionWarning"
)
async def test_dictation_starts_through_the_agent_on_a_stock_satellite(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    mic = speech.write_wav(tmp_path / "mic.wav", spoken_request("Start dictation."))
    async with AsyncExitStack() as stack:
        pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
        created = await add_agent(hass, conversation.HOME_ASSISTANT_AGENT)
        entry = created["result"]
        ours = agent_entity(hass, entry.entry_id)
        await async_update_pipeline(hass, pipeline, conversation_engine=ours)
        log = record_states(hass, stack)
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        await add_wyoming(hass, stack, "127.0.0.1", sat.port)
        await wait_for(log.answered, RUN_TIMEOUT_S, "responding, then idle again")
        # Home Assistant may go idle before the satellite has written what it played.
        await wait_for(
            lambda: any(tmp_path.glob("played.*.wav")), RUN_TIMEOUT_S, "played"
        )
        runtime: AgentRuntime = entry.runtime_data
        modes = {key: found.modes.router.mode for key, found in runtime.devices.items()}

    (played_wav,) = tmp_path.glob("played.*.wav")
    heard = speech.transcribe(speech.read_wav_pcm(played_wav))
    assert words(heard) == words(Replies().dictation_started)
    # The satellite's device id keys its router (not the shared text key), and
    # dictation is open on it.
    assert list(modes.values()) == ["dictation"]
    assert TEXT_KEY not in modes


ASKS = "You have milk. Shall I add bread?"


def shopping(user_input: conversation.ConversationInput) -> tuple[str, bool]:
    """Asks back once, as an LLM agent does (Home Assistant's own never asks)."""
    if "shopping" in words(user_input.text):
        return ASKS, True
    return "Added bread.", False


@pytest.mark.e2e
@pytest.mark.newest_ha
async def test_a_voice_journey_through_dictation_a_confirmation_and_a_follow_up(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    """One stock satellite, one person, the wake word before every request.

    Home Assistant's ``wyoming`` integration ignores ``continue_conversation``,
    so every turn is woken; the agent's router keeps the device's open mode,
    and the follow-up session goes on across the wake word because the request
    comes within the window, in the conversation the question was asked in.
    """
    person = await stock_entry(hass, stack, tmp_path, piper, whisper)
    unlocks = record_unlocks(hass)

    await answer(person, "Start dictation.", REPLIES.dictation_started)
    await answer(person, "Remember to feed the cat.", "")
    await answer(person, "Stop dictation.", SAVED, min_ratio=0.5)
    await answer(person, "Please unlock the front door.", QUESTION)
    asked = hass.states.get(FRONT_DOOR).state
    # tiny.en hears Piper's lone "Unlocking" as "I'm walking": heard, not checked.
    await answer(person, "Yes please.", "Unlocking", min_ratio=0)
    agent = add_chat_agent(hass, shopping)
    await set_options(hass, **{CONF_WRAPPED_AGENT: agent.agent_id})
    ends = record_session_ends(hass)
    await answer(person, "What is on my shopping list?", ASKS)
    await answer(person, "Yes please.", "Added bread.")

    assert words(notes(hass)[-1])[-5:] == ["remember", "to", "feed", "the", "cat"]
    assert asked == LockState.LOCKED
    assert len(unlocks) == 1
    assert hass.states.get(FRONT_DOOR).state == LockState.UNLOCKED
    # The yes was the session's second turn, in the conversation the agent asked in.
    _, second = agent.inputs
    assert words(second.text) == ["yes", "please"]
    assert second.conversation_id == agent.answered_in[0]
    assert [(end["turns"], end["reason"]) for end in ends] == [(2, "answered")]
