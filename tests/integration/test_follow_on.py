"""A follow-on after an action, said at a natural pace, is acted on and answered once.

"Turn on the kitchen light." then, a breath later, "and the fan too.": two
fragments of one thought after a turn that changed something. People pause
0.3 to 1.2 s between them, and Piper's own silence is cut, so the gap is what
the test says it is (``devstack.follow_on``). Asserted by ear: what the
satellite played is transcribed, and exactly one answer follows the fragments.
Real Home Assistant, whisper, Piper and satellite; the agent is scripted
(``devstack.switching_agent``: an LLM agent's tools, none can run here).

Newest Home Assistant only (``newest_ha``): the timing is the satellite's and
the debounce's, the same on every version; the fragments' Home Assistant side
runs on both in test_conversations.py.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import async_update_pipeline
from homeassistant.const import STATE_ON
from homeassistant.core import Event, HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.const import EVENT_TURN
from devstack import follow_on, servers, speech
from devstack.switching_agent import SwitchingAgent
from devstack.waiting import wait_for
from tests.integration.assist import LIGHT, set_up_assist, words
from tests.integration.dialog import open_dialog

pytestmark = [pytest.mark.e2e, pytest.mark.newest_ha]

FAN = "input_boolean.fan_power"
HALLWAY = "input_boolean.hallway_light"


@pytest.mark.parametrize("gap_s", [0.3, 0.8, 1.2])
async def test_a_short_follow_on_is_acted_on_and_one_answer_is_heard(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    piper: servers.Server,
    whisper: servers.Server,
    gap_s: float,
) -> None:
    # The hallway and the fan beside the kitchen light's power (one setup).
    booleans = {"kitchen_power": {}, "fan_power": {}, "hallway_light": {}}
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": booleans}
    )
    pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
    agent = SwitchingAgent(hass, {"hallway": HALLWAY, "kitchen": LIGHT, "fan": FAN})
    entry = MockConfigEntry(domain="test")
    entry.add_to_hass(hass)
    conversation.async_set_agent(hass, entry, agent)
    stack.callback(conversation.async_unset_agent, hass, entry)
    await async_update_pipeline(hass, pipeline, conversation_engine=entry.entry_id)
    turns: list[Event] = []
    stack.callback(hass.bus.async_listen(EVENT_TURN, turns.append))
    dialog = await open_dialog(
        hass, stack, tmp_path, options={"follow_up_mode": "always"}
    )

    await dialog.wake_and_say("Turn on the hallway light.")
    _, short = await asyncio.to_thread(follow_on.fragments)
    said = await asyncio.to_thread(follow_on.follow_on, gap_s)
    assert 0.75 <= speech.seconds(short) <= 0.9  # a short fragment
    # (1 s first: the satellite has opened its window when the user speaks.)
    await dialog.mic.say(said, lead_s=1.0)
    await wait_for(lambda: len(turns) >= 2, 60, "the fragments' turn")
    await wait_for(lambda: not dialog.hub.assist_in_progress, 30, "the answer")

    heard = [words(reply) for reply in await asyncio.to_thread(dialog.replies)]
    assert len(agent.texts) == 2, agent.texts  # both fragments in one request
    assert {"kitchen", "fan"} <= set(words(agent.texts[1])), agent.texts
    assert hass.states.get(LIGHT).state == STATE_ON
    assert hass.states.get(FAN).state == STATE_ON
    # The hallway's answer, then exactly one answer for both fragments.
    assert len(heard) == 2, heard
    assert {"kitchen", "fan"} <= set(heard[1]), heard
