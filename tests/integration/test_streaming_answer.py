"""An agent that streams its answer is heard from its first sentence, whole and in order.

The agent (``devstack.streaming_agent``, standing in for an LLM agent: none can
run here) writes a three-sentence answer into Home Assistant's chat log over
2 s, and after its first sentence it waits until that sentence's audio has
been sent (at most 60 s), as an LLM agent waits for a tool: however slow a
loaded machine's Piper is, the first audio must reach the satellite before the
agent writes the rest, let alone before the rest is synthesized (an answer
spoken only once written would never be sent, and the agent would fail). What
the satellite played, transcribed, must be the whole answer in order, in
three sentences placed back to back. Real Home Assistant, whisper, Piper and
satellite.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
import re

from homeassistant.components.assist_pipeline import async_update_pipeline
from homeassistant.core import HomeAssistant
import pytest

from devstack import servers
from devstack.ear import similarity
from devstack.streaming_agent import STREAMED_ANSWER, add_streaming_agent
from devstack.waiting import wait_for
from tests.integration.assist import set_up_assist
from tests.integration.dialog import open_dialog

pytestmark = pytest.mark.e2e

# The satellite's log line when the owner's audio starts (asctime: local, ms).
SPEAKING = re.compile(r"^(\S+ \S+) DEBUG \S+: State: speaking$", re.MULTILINE)


def speaking_times(log: str) -> list[float]:
    """Wall-clock times the satellite started playing the owner's audio."""
    return [
        datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").astimezone().timestamp()
        for stamp in SPEAKING.findall(log)
    ]


async def test_a_streamed_answer_plays_while_the_agent_writes_it_and_is_heard_whole(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
    dialog = await open_dialog(hass, stack, tmp_path)

    async def first_audio_sent() -> None:
        await wait_for(
            lambda: (
                (played := dialog.hub.speaker.last) is not None
                and played.first_audio_at is not None
            ),
            60,
            "the first sentence's audio",
        )

    agent = await add_streaming_agent(hass, hold=first_audio_sent)
    await async_update_pipeline(hass, pipeline, conversation_engine=agent.entity_id)

    await dialog.wake_and_say("How is the house?")

    assert agent.texts, dialog.heard()
    log = (tmp_path / "satellite.log").read_text(errors="replace")
    (started, *_) = speaking_times(log)
    # The satellite started playing before the agent wrote the rest.
    assert started < agent.written[-1], (started - agent.written[-1], log)
    (heard,) = await asyncio.to_thread(dialog.replies)
    assert similarity(heard, STREAMED_ANSWER) >= 0.8, heard
    playback = dialog.hub.speaker.last
    assert playback is not None
    assert len(playback.sentences) == 3, playback.sentences
    assert " ".join(s.text for s in playback.sentences) == STREAMED_ANSWER
    # One stream, sentence after sentence: offsets back to back.
    offsets = [s.start_sample for s in playback.sentences]
    lengths = [s.samples for s in playback.sentences]
    assert offsets == [sum(lengths[:i]) for i in range(3)]
