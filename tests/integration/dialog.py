"""A spoken dialog with a real satellite: its mic is a live pipe fed in real time.

Each turn waits for the satellite's reply and its listening again, then answers
without a wake word, as a person would.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path

from homeassistant.core import Event, HomeAssistant

from custom_components.voicestack.const import EVENT_UTTERANCE
from custom_components.voicestack.hub import SatelliteHub
from custom_components.voicestack.runtime import SatelliteRuntime
from devstack import speech
from devstack.satellite import satellite
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack
from tests.live_mic import LiveMic

TURN_TIMEOUT_S = 30.0


@dataclass(slots=True)
class Dialog:
    """A satellite with a live mic, and what Home Assistant made of each turn."""

    hass: HomeAssistant
    runtime: SatelliteRuntime
    mic: LiveMic
    utterances: list[Event]
    tmp_path: Path

    @property
    def hub(self) -> SatelliteHub:
        """The satellite's hub (link, Speaker, shared state)."""
        return self.runtime.hub

    async def wake_and_say(self, text: str) -> Event:
        """Say "Hey Jarvis", pause for the chime, then say ``text``."""
        wake = await asyncio.to_thread(speech.speak, "Hey Jarvis.")
        request = await asyncio.to_thread(speech.speak, text)
        return await self._turn(speech.pad(wake, 0.0, 0.7) + request)

    async def answer(self, text: str) -> Event:
        """``text`` without a wake word (the satellite must be listening)."""
        return await self._turn(await asyncio.to_thread(speech.speak, text))

    async def _turn(self, pcm: bytes) -> Event:
        count = len(self.utterances) + 1
        await self.mic.say(pcm)
        await wait_for(
            lambda: len(self.utterances) >= count, TURN_TIMEOUT_S, "the transcript"
        )
        # The request ends after the reply has been played and the satellite
        # has been told to listen on.
        await wait_for(
            lambda: not self.hub.assist_in_progress, TURN_TIMEOUT_S, "the reply"
        )
        return self.utterances[count - 1]

    def heard(self) -> list[tuple[str, str, str]]:
        """Transcript, frame and rule of every turn (failure messages)."""
        return [
            (u.data["text"], u.data["frame"], u.data["rule"]) for u in self.utterances
        ]

    def replies(self) -> list[str]:
        """What the satellite played, transcribed, in order."""
        played = sorted(
            self.tmp_path.glob("played.*.wav"),
            key=lambda path: int(path.stem.partition(".")[2]),
        )
        return [speech.transcribe(speech.read_wav_pcm(path)) for path in played]


async def open_dialog(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    options: dict[str, object] | None = None,
    satellite_args: tuple[str, ...] = (),
) -> Dialog:
    """A connected satellite with a live mic, owned by VoiceStack (``options``)."""
    sat = await stack.enter_async_context(
        satellite(tmp_path, "--mic-stdin", *satellite_args, stdin=True)
    )
    assert sat.process.stdin is not None
    mic = await stack.enter_async_context(LiveMic(sat.process.stdin))
    utterances: list[Event] = []
    stack.callback(hass.bus.async_listen(EVENT_UTTERANCE, utterances.append))
    entry = await add_voicestack(hass, stack, sat, options=options)
    await wait_for(lambda: entry.runtime_data.hub.connected, 10, "connected")
    return Dialog(hass, entry.runtime_data, mic, utterances, tmp_path)
