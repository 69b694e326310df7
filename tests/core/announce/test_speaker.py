"""The announcer driving the real ``Speaker``: a critical cuts in cleanly.

The orchestrator's ``say``/``stop`` are wired as the glue will wire them:
``Speaker.play`` with synthesized sentences (silence here: the audio's content
does not matter) and ``Speaker.stop``. A link recorder plays the satellite: it
confirms a flush at once and otherwise plays when the test says. The satellite
must never have two streams open, and the critical must start only after the
interrupted stream was flushed and confirmed.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

from wyoming.event import Event

from custom_components.voicestack.core.announce import (
    AnnounceOptions,
    AnnounceRequest,
    DropReason,
    SpeakerAnnouncer,
    Status,
)
from custom_components.voicestack.core.clock import LoopClock
from custom_components.voicestack.core.sentences import split_sentences
from custom_components.voicestack.core.speaker import Playback, Speaker
from custom_components.voicestack.core.wav import Pcm
from voicestack_protocol import FLUSH

from .helpers import Events


class Satellite:
    """The link's far end: counts open streams, confirms flushes at once."""

    def __init__(self) -> None:
        """No speaker attached yet."""
        self.sent: list[str] = []
        self.speaker: Speaker | None = None
        self.open = 0
        self.most_open = 0

    async def send(self, event: Event) -> bool:
        """Record the event; ``audio-start`` opens a stream, a flush ends them."""
        self.sent.append(event.type)
        if event.type == "audio-start":
            self.open += 1
            self.most_open = max(self.most_open, self.open)
        elif event.type == FLUSH:
            asyncio.get_running_loop().call_soon(self.play_all)
        return True

    def supports(self, event_type: str) -> bool:
        """A voicestack-satellite: it can flush."""
        return event_type == FLUSH

    def play_all(self) -> None:
        """Report ``played`` for every open stream."""
        assert self.speaker is not None
        while self.open:
            self.open -= 1
            self.speaker.played()


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(5):
        while not condition():
            await asyncio.sleep(0)


async def test_a_critical_flushes_the_announcement_playing_and_then_plays() -> None:
    satellite = Satellite()
    speaker = Speaker(satellite.send, satellite.supports)
    satellite.speaker = speaker

    async def say(text: str, ids: tuple[str, ...]) -> Playback:
        async def parts() -> AsyncIterator[tuple[str, Pcm]]:
            for sentence in split_sentences(text):
                await asyncio.sleep(0)  # synthesis takes a moment
                yield sentence, Pcm(b"\x00\x00" * 1600, 16000, 2, 1)

        return await speaker.play(parts())

    events = Events()
    announcer = SpeakerAnnouncer(
        "kitchen",
        say,
        speaker.stop,
        clock=LoopClock(),
        options=AnnounceOptions(coalesce_window_s=0),
        on_event=events,
    )
    announcer.submit(AnnounceRequest.create("The washing machine is done."))
    await until(lambda: "audio-stop" in satellite.sent)
    announcer.submit(
        AnnounceRequest.create("Smoke in the kitchen!", priority="critical")
    )
    await until(lambda: satellite.sent.count("audio-start") == 2)
    flush_at = satellite.sent.index(FLUSH)
    second_start = len(satellite.sent) - 1 - satellite.sent[::-1].index("audio-start")
    assert flush_at < second_start
    await until(lambda: satellite.sent[-1] == "audio-stop")
    satellite.play_all()
    await until(lambda: announcer.idle)

    assert satellite.most_open == 1  # never two streams at once
    snap = announcer.snapshot()
    assert (snap.spoken, snap.interrupts, snap.dropped[DropReason.STALE]) == (1, 1, 1)
    assert [e.status for e in events.items] == [
        Status.STARTED,
        Status.INTERRUPTED,  # cut, flushed and confirmed before the critical starts
        Status.STARTED,
        Status.FINISHED,
    ]
    assert events.of(Status.FINISHED)[0].text == "Smoke in the kitchen!"
    assert snap.latency_p50_s is not None
    assert 0 <= snap.latency_p50_s < 1
    await announcer.shutdown()
