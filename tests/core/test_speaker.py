"""The Speaker's contract: one playback at a time, held until ``played``.

A recorder stands in for the link here (the Speaker's logic needs no socket);
the integration tests drive it against the real satellite.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from wyoming.event import Event

from custom_components.voicestack.core.speaker import CHUNK_FRAMES, Speaker
from custom_components.voicestack.core.wav import Pcm


class Recorder:
    """Collects what the Speaker sends; can pretend to be disconnected."""

    def __init__(self, *, connected: bool = True, flush: bool = True) -> None:
        """Connected and flush-capable unless told otherwise."""
        self.sent: list[Event] = []
        self.connected = connected
        self.flush = flush

    async def send(self, event: Event) -> bool:
        """Record ``event``; False while disconnected."""
        if self.connected:
            self.sent.append(event)
        return self.connected

    def supports(self, event_type: str) -> bool:
        """Only the flush extension."""
        return self.flush and event_type == "voicestack-flush"

    def types(self) -> list[str]:
        """Event types sent, in order."""
        return [e.type for e in self.sent]


def pcm(seconds: float, rate: int = 22050) -> Pcm:
    return Pcm(b"\x01\x00" * round(seconds * rate), rate, 2, 1)


async def parts(*items: tuple[str, Pcm]) -> AsyncIterator[tuple[str, Pcm]]:
    for item in items:
        await asyncio.sleep(0)
        yield item


async def test_sentences_stream_in_order_with_offsets() -> None:
    link = Recorder()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(
        speaker.speak(parts(("One.", pcm(0.5)), ("Two.", pcm(0.25))))
    )
    while "audio-stop" not in link.types():
        await asyncio.sleep(0)
    assert speaker.busy
    speaker.played()
    playback = await task

    assert playback.outcome == "played"
    assert [(s.text, s.start_sample, s.samples) for s in playback.sentences] == [
        ("One.", 0, 11025),
        ("Two.", 11025, 5512),
    ]
    types = link.types()
    assert types[0] == "audio-start"
    assert types[-1] == "audio-stop"
    chunks = [e for e in link.sent if e.type == "audio-chunk"]
    assert sum(len(e.payload or b"") for e in chunks) == (11025 + 5512) * 2
    assert max(len(e.payload or b"") for e in chunks) == CHUNK_FRAMES * 2
    assert not speaker.busy


async def test_a_second_playback_waits_for_played() -> None:
    link = Recorder()
    speaker = Speaker(link.send, link.supports)
    first = asyncio.create_task(speaker.speak(parts(("First.", pcm(0.1)))))
    second = asyncio.create_task(speaker.speak(parts(("Second.", pcm(0.1)))))
    for _ in range(50):
        await asyncio.sleep(0)
    assert link.types().count("audio-start") == 1  # the second one waits its turn
    speaker.played()
    assert (await first).outcome == "played"
    while link.types().count("audio-stop") < 2:
        await asyncio.sleep(0)
    speaker.played()
    assert (await second).outcome == "played"


async def test_a_timeout_stops_playback_and_frees_the_speaker() -> None:
    link = Recorder()
    speaker = Speaker(
        link.send, link.supports, playback_timeout_s=0.05, stop_grace_s=0.05
    )
    playback = await speaker.speak(parts(("Hello.", pcm(0.01))))

    assert playback.outcome == "timeout"
    assert link.types()[-1] == "voicestack-flush"
    assert not speaker.busy


async def test_a_playback_cut_short_by_stop_says_so() -> None:
    """A voice response cut by a critical announcement is not ``played``."""
    link = Recorder()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(speaker.speak(parts(("A long answer.", pcm(5.0)))))
    while "audio-stop" not in link.types():
        await asyncio.sleep(0)
    stopping = asyncio.create_task(speaker.stop())
    while "voicestack-flush" not in link.types():
        await asyncio.sleep(0)
    speaker.played()  # the satellite confirms the flush
    assert await stopping
    assert (await task).outcome == "stopped"
    after = asyncio.create_task(speaker.speak(parts(("Next.", pcm(0.01)))))
    while link.types().count("audio-stop") < 2:
        await asyncio.sleep(0)
    speaker.played()
    assert (await after).outcome == "played"  # the next playback starts afresh


async def test_a_lost_link_ends_the_wait() -> None:
    link = Recorder()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(speaker.speak(parts(("Hello.", pcm(0.1)))))
    while "audio-stop" not in link.types():
        await asyncio.sleep(0)
    speaker.lost()
    assert (await task).outcome == "lost"


async def test_a_loss_before_the_audio_started_is_not_this_playbacks() -> None:
    """Lost and back while the first sentence was synthesized: played, once.

    It was counted lost and said again, so the satellite played it twice.
    """
    link = Recorder()
    speaker = Speaker(link.send, link.supports)
    synthesized = asyncio.Event()

    async def slow_parts() -> AsyncIterator[tuple[str, Pcm]]:
        await synthesized.wait()
        yield "Hello.", pcm(0.1)

    task = asyncio.create_task(speaker.speak(slow_parts()))
    await asyncio.sleep(0)
    speaker.lost()  # the satellite restarts meanwhile, and is back
    synthesized.set()
    while "audio-stop" not in link.types():
        await asyncio.sleep(0)
    speaker.played()

    assert (await task).outcome == "played"


async def test_nothing_is_sent_while_disconnected() -> None:
    link = Recorder(connected=False)
    speaker = Speaker(link.send, link.supports)
    playback = await speaker.speak(parts(("Hello.", pcm(0.1))))
    assert playback.outcome == "lost"
    assert (await Speaker(link.send, link.supports).speak(parts())).outcome == "empty"


async def test_a_format_change_opens_a_new_stream_and_waits_for_both() -> None:
    link = Recorder()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(
        speaker.speak(parts(("A.", pcm(0.1, 22050)), ("B.", pcm(0.1, 16000))))
    )
    while link.types().count("audio-stop") < 2:
        await asyncio.sleep(0)
    speaker.played()
    await asyncio.sleep(0)
    assert not task.done()
    speaker.played()
    assert (await task).outcome == "played"


async def test_a_failing_producer_closes_the_stream_and_frees_the_speaker() -> None:
    link = Recorder()
    speaker = Speaker(link.send, link.supports, stop_grace_s=0.05)

    async def broken() -> AsyncIterator[tuple[str, Pcm]]:
        yield "One.", pcm(0.1)
        raise RuntimeError("TTS engine went away")

    task = asyncio.create_task(speaker.speak(broken()))
    while "voicestack-flush" not in link.types():
        await asyncio.sleep(0)
    speaker.played()  # the satellite confirms the flush
    with pytest.raises(RuntimeError):
        await task
    assert link.types()[-2:] == ["audio-stop", "voicestack-flush"]
    assert not speaker.busy
    follow = asyncio.create_task(speaker.speak(parts(("Two.", pcm(0.1)))))
    while link.types().count("audio-stop") < 2:
        await asyncio.sleep(0)
    speaker.played()
    assert (await follow).outcome == "played"
