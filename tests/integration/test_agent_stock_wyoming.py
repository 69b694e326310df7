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
from homeassistant.core import HomeAssistant
import pytest

from custom_components.voicestack.agent.runtime import TEXT_KEY, AgentRuntime
from custom_components.voicestack.core.router import Replies
from devstack import servers, speech
from devstack.satellite import satellite
from devstack.spoken_request import spoken_request
from devstack.waiting import wait_for
from tests.integration.assist import add_wyoming, record_states, set_up_assist, words
from tests.integration.test_agent import add_agent, agent_entity

RUN_TIMEOUT_S = 30.0


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
        runtime: AgentRuntime = entry.runtime_data
        modes = {key: found.modes.router.mode for key, found in runtime.devices.items()}

    (played_wav,) = tmp_path.glob("played.*.wav")
    heard = speech.transcribe(speech.read_wav_pcm(played_wav))
    assert words(heard) == words(Replies().dictation_started)
    # The satellite's device id keys its router (not the shared text key), and
    # dictation is open on it.
    assert list(modes.values()) == ["dictation"]
    assert TEXT_KEY not in modes
