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
from devstack.manual_clock import ManualClock


class RecordingLink:
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

    def streams(self) -> list[str]:
        """The stream ids of the ``audio-start`` events sent, in order."""
        return [e.data["stream"] for e in self.sent if e.type == "audio-start"]

    def audio_seconds(self) -> float:
        """Seconds of audio sent in chunks (16-bit mono at 16 kHz)."""
        chunks = [e for e in self.sent if e.type == "audio-chunk"]
        return sum(len(e.payload or b"") for e in chunks) / 32000


def pcm(seconds: float, rate: int = 22050) -> Pcm:
    return Pcm(b"\x01\x00" * round(seconds * rate), rate, 2, 1)


async def parts(*items: tuple[str, Pcm]) -> AsyncIterator[tuple[str, Pcm]]:
    for item in items:
        await asyncio.sleep(0)
        yield item


async def test_sentences_stream_in_order_with_offsets() -> None:
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(
        speaker.play(parts(("One.", pcm(0.5)), ("Two.", pcm(0.25))))
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
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    first = asyncio.create_task(speaker.play(parts(("First.", pcm(0.1)))))
    second = asyncio.create_task(speaker.play(parts(("Second.", pcm(0.1)))))
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
    link = RecordingLink()
    speaker = Speaker(
        link.send, link.supports, playback_timeout_s=0.05, stop_grace_s=0.05
    )
    playback = await speaker.play(parts(("Hello.", pcm(0.01))))

    assert playback.outcome == "timeout"
    assert link.types()[-1] == "voicestack-flush"
    assert not speaker.busy


async def test_a_playback_cut_short_by_stop_says_so() -> None:
    """A voice response cut by a critical announcement is not ``played``."""
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(speaker.play(parts(("A long answer.", pcm(5.0)))))
    while "audio-stop" not in link.types():
        await asyncio.sleep(0)
    stopping = asyncio.create_task(speaker.stop())
    while "voicestack-flush" not in link.types():
        await asyncio.sleep(0)
    speaker.played()  # the satellite confirms the flush
    assert await stopping
    assert (await task).outcome == "stopped"
    after = asyncio.create_task(speaker.play(parts(("Next.", pcm(0.01)))))
    while link.types().count("audio-stop") < 2:
        await asyncio.sleep(0)
    speaker.played()
    assert (await after).outcome == "played"  # the next playback starts afresh


async def test_a_lost_link_ends_the_wait() -> None:
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(speaker.play(parts(("Hello.", pcm(0.1)))))
    while "audio-stop" not in link.types():
        await asyncio.sleep(0)
    speaker.lost()
    assert (await task).outcome == "lost"


async def test_a_loss_before_the_audio_started_is_not_this_playbacks() -> None:
    """Lost and back while the first sentence was synthesized: played, once.

    It was counted lost and said again, so the satellite played it twice.
    """
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    synthesized = asyncio.Event()

    async def slow_parts() -> AsyncIterator[tuple[str, Pcm]]:
        await synthesized.wait()
        yield "Hello.", pcm(0.1)

    task = asyncio.create_task(speaker.play(slow_parts()))
    await asyncio.sleep(0)
    speaker.lost()  # the satellite restarts meanwhile, and is back
    synthesized.set()
    while "audio-stop" not in link.types():
        await asyncio.sleep(0)
    speaker.played()

    assert (await task).outcome == "played"


async def test_nothing_is_sent_while_disconnected() -> None:
    link = RecordingLink(connected=False)
    speaker = Speaker(link.send, link.supports)
    playback = await speaker.play(parts(("Hello.", pcm(0.1))))
    assert playback.outcome == "lost"
    assert (await Speaker(link.send, link.supports).play(parts())).outcome == "empty"


async def test_a_format_change_opens_a_new_stream_and_waits_for_both() -> None:
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(
        speaker.play(parts(("A.", pcm(0.1, 22050)), ("B.", pcm(0.1, 16000))))
    )
    while link.types().count("audio-stop") < 2:
        await asyncio.sleep(0)
    speaker.played()
    await asyncio.sleep(0)
    assert not task.done()
    speaker.played()
    assert (await task).outcome == "played"


async def test_a_failing_producer_closes_the_stream_and_frees_the_speaker() -> None:
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports, stop_grace_s=0.05)

    async def broken() -> AsyncIterator[tuple[str, Pcm]]:
        yield "One.", pcm(0.1)
        raise RuntimeError("TTS engine went away")

    task = asyncio.create_task(speaker.play(broken()))
    while "voicestack-flush" not in link.types():
        await asyncio.sleep(0)
    speaker.played()  # the satellite confirms the flush
    with pytest.raises(RuntimeError):
        await task
    assert link.types()[-2:] == ["audio-stop", "voicestack-flush"]
    assert not speaker.busy
    follow = asyncio.create_task(speaker.play(parts(("Two.", pcm(0.1)))))
    while link.types().count("audio-stop") < 2:
        await asyncio.sleep(0)
    speaker.played()
    assert (await follow).outcome == "played"


@pytest.mark.parametrize(
    ("confirmed", "outcome"), [("flushed", "flushed"), (None, "stopped")]
)
async def test_a_cancelled_playback_says_how_it_ended(
    confirmed: str | None, outcome: str
) -> None:
    """A barge-in's request cancels its answer: flushed, not left pending."""
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports, stop_grace_s=0.05)
    task = asyncio.create_task(speaker.play(parts(("One.", pcm(0.1)))))
    await until_sent(link, "audio-stop")
    playback = speaker.last
    assert playback is not None
    task.cancel()
    await until_sent(link, "voicestack-flush")
    if confirmed:
        speaker.played(link.streams()[0], confirmed)
    with pytest.raises(asyncio.CancelledError):
        await task

    assert playback.outcome == outcome
    assert not speaker.busy


async def until_sent(link: RecordingLink, event_type: str, count: int = 1) -> None:
    while link.types().count(event_type) < count:
        await asyncio.sleep(0)


async def test_every_stream_has_its_own_id() -> None:
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(
        speaker.play(parts(("A.", pcm(0.1, 22050)), ("B.", pcm(0.1, 16000))))
    )
    await until_sent(link, "audio-stop", 2)
    first, second = link.streams()
    speaker.played(first, "played")
    speaker.played(second, "played")
    assert (await task).outcome == "played"
    again = asyncio.create_task(speaker.play(parts(("C.", pcm(0.1)))))
    await until_sent(link, "audio-stop", 3)
    (third,) = link.streams()[2:]
    speaker.played(third, "played")
    await again

    assert len({first, second, third}) == 3


async def test_a_played_of_a_stream_not_open_is_ignored() -> None:
    """The late ``played`` of an old stream used to end the current playback.

    A satellite frozen during playback kept playing the old owner's audio after
    the reconnect; its ``played`` freed the Speaker while the announcement said
    again was still to come, so both were heard.
    """
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(speaker.play(parts(("Hello.", pcm(0.1)))))
    await until_sent(link, "audio-stop")
    speaker.played("a-stream-from-before", "played")
    for _ in range(20):
        await asyncio.sleep(0)
    assert not task.done()
    assert speaker.busy
    (stream,) = link.streams()
    speaker.played(stream, "played")
    assert (await task).outcome == "played"


async def test_a_bare_played_ends_the_oldest_stream() -> None:
    """A stock satellite's ``played`` has no id: it is the oldest stream's."""
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(
        speaker.play(parts(("A.", pcm(0.1, 22050)), ("B.", pcm(0.1, 16000))))
    )
    await until_sent(link, "audio-stop", 2)
    speaker.played()
    for _ in range(20):
        await asyncio.sleep(0)
    assert not task.done()
    speaker.played()
    assert (await task).outcome == "played"


async def test_a_stream_the_satellite_flushed_was_not_played() -> None:
    """Cut short at the satellite (a wake word): ``flushed``, not ``played``."""
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports)
    task = asyncio.create_task(speaker.play(parts(("A long answer.", pcm(5.0)))))
    await until_sent(link, "audio-stop")
    (stream,) = link.streams()
    speaker.played(stream, "flushed")
    assert (await task).outcome == "flushed"


async def test_audio_is_sent_at_most_the_lead_ahead_of_playback() -> None:
    """A fast speech engine does not fill the satellite's bounded player."""
    clock = ManualClock()
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports, lead_s=1.0, clock=clock)
    chunk_s = CHUNK_FRAMES / 16000
    task = asyncio.create_task(speaker.play(parts(("A story.", pcm(3.0, 16000)))))
    for step, elapsed in ((0.0, 0.0), (0.5, 0.5), (1.0, 1.5)):
        clock.advance(step)
        for _ in range(100):
            await asyncio.sleep(0)
        assert 1.0 + elapsed < link.audio_seconds() <= 1.0 + elapsed + chunk_s
    clock.advance(1.0)
    await until_sent(link, "audio-stop")
    assert link.audio_seconds() == pytest.approx(3.0)
    (stream,) = link.streams()
    speaker.played(stream, "played")
    assert (await task).outcome == "played"


async def test_nothing_more_is_sent_once_stopped() -> None:
    """A response cut by a critical stops sending: the critical waits for it."""
    clock = ManualClock()
    link = RecordingLink()
    speaker = Speaker(link.send, link.supports, lead_s=1.0, clock=clock)
    task = asyncio.create_task(
        speaker.play(parts(("One.", pcm(2.0, 16000)), ("Two.", pcm(2.0, 16000))))
    )
    for _ in range(100):
        await asyncio.sleep(0)
    stopping = asyncio.create_task(speaker.stop())
    await until_sent(link, "voicestack-flush")
    (stream,) = link.streams()
    speaker.played(stream, "flushed")  # the satellite confirms the flush
    assert await stopping
    sent = link.audio_seconds()
    clock.advance(10.0)

    assert (await task).outcome == "stopped"
    assert link.audio_seconds() == sent
    assert link.streams() == [stream]
