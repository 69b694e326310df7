"""A follow-on after an action, said at a natural pace, is acted on and answered once.

"Turn on the kitchen light." then, a breath later, "and the fan too.": two
fragments of one thought after a turn that changed something. People pause
0.3 to 1.2 s between them, and Piper's own silence is cut, so the gap is what
the test says it is (``devstack.follow_on``). Asserted by ear: what the satellite played is
transcribed, and exactly one answer follows the fragments. Real Home
Assistant, whisper, Piper and satellite; the agent is scripted (an LLM agent's
tools: it switches what the request names, in the request's context).
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.const import STATE_ON
from homeassistant.core import Event, HomeAssistant
from homeassistant.helpers import intent
import pytest

from custom_components.voicestack.const import EVENT_TURN
from devstack import follow_on, speech
from devstack.waiting import wait_for
from tests.integration.agents import ScriptedAgent, use_agent
from tests.integration.assist import SWITCH, words
from tests.integration.dialog import open_dialog

pytestmark = pytest.mark.e2e

FAN = "fan.ceiling"


class SwitchingAgent(ScriptedAgent):
    """Turns on what the request names (kitchen, fan) and says what it did.

    The kitchen is the kitchen light's power (a service call, as an LLM
    agent's tool makes); the fan a state it sets, both in the request's
    context. "Hallway" is an action too (reported as its target, as the
    default agent does), with nothing to switch here.
    """

    def __init__(self, hass: HomeAssistant) -> None:
        """Acting in ``hass``."""
        super().__init__(lambda _input: ("", False))
        self.hass = hass

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """Record, switch on, and answer "Turned on the kitchen light and the fan."."""
        self.inputs.append(user_input)
        said = set(words(user_input.text))
        named = [name for name in ("hallway", "kitchen", "fan") if name in said]
        if "kitchen" in named:
            await self.hass.services.async_call(
                "input_boolean",
                "turn_on",
                {"entity_id": SWITCH},
                blocking=True,
                context=user_input.context,
            )
        if "fan" in named:
            self.hass.states.async_set(FAN, STATE_ON, context=user_input.context)
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_results(
            [
                intent.IntentResponseTarget(
                    type=intent.IntentResponseTargetType.ENTITY, name=name, id=name
                )
                for name in named
            ]
        )
        things = " and the ".join(
            {"hallway": "hallway light", "kitchen": "kitchen light"}.get(n, n)
            for n in named
        )
        response.async_set_speech(f"Turned on the {things}." if things else "Okay.")
        return conversation.ConversationResult(
            response=response, conversation_id=user_input.conversation_id
        )


@pytest.mark.parametrize("gap_s", [0.3, 0.8, 1.2])
async def test_a_short_follow_on_is_acted_on_and_one_answer_is_heard(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    gap_s: float,
) -> None:
    agent = SwitchingAgent(hass)
    await use_agent(hass, stack, pipeline, agent.reply, agent=agent)
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
    assert hass.states.get(SWITCH).state == STATE_ON
    assert hass.states.get(FAN).state == STATE_ON
    # The hallway's answer, then exactly one answer for both fragments.
    assert len(heard) == 2, heard
    assert {"kitchen", "fan"} <= set(heard[1]), heard
