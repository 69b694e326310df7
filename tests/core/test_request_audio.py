"""RequestAudio: a request's audio is bounded in bytes and in time, exactly.

The deadline runs on a manual clock, so "30 s" is 30 s to the millisecond and
the tests take no time.
"""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.request_audio import (
    BYTES_PER_SECOND,
    MAX_QUEUED_AUDIO_BYTES,
    MAX_REQUEST_S,
    RequestAudio,
)
from devstack.manual_clock import ManualClock

CHUNK = bytes(2560)  # the satellite's 80 ms


class Limits:
    """The ``on_limit`` callback: records each reason."""

    def __init__(self) -> None:
        """Nothing yet."""
        self.reasons: list[str] = []

    def __call__(self, reason: str) -> None:
        """Record ``reason``."""
        self.reasons.append(reason)


def make(
    clock: ManualClock | None = None, **limits: float
) -> tuple[RequestAudio, Limits]:
    told = Limits()
    return RequestAudio(clock or ManualClock(), told, **limits), told


async def drain(audio: RequestAudio) -> list[bytes]:
    """Everything the pipeline would read, up to the end."""
    return [chunk async for chunk in audio.chunks()]


def test_the_stated_limits() -> None:
    assert MAX_QUEUED_AUDIO_BYTES == 320_000 == 10 * BYTES_PER_SECOND
    assert MAX_REQUEST_S == 30.0


async def test_chunks_arrive_in_order_until_the_end() -> None:
    audio, told = make()
    for n in range(3):
        audio.put(bytes([n]) * 10)
    audio.end()
    audio.put(b"late")  # after audio-stop: dropped

    assert await drain(audio) == [b"\x00" * 10, b"\x01" * 10, b"\x02" * 10]
    assert (audio.received_bytes, audio.dropped_bytes) == (34, 4)
    assert (audio.queued_bytes, audio.peak_bytes) == (0, 30)
    assert told.reasons == []  # an ordinary end is no limit


async def test_a_full_queue_ends_the_audio_and_keeps_what_was_queued() -> None:
    audio, told = make(max_bytes=3 * len(CHUNK))
    for _ in range(3):
        audio.put(CHUNK)  # exactly at the bound: still queued
    assert not audio.ended
    for _ in range(100):
        audio.put(CHUNK)

    assert audio.ended
    assert told.reasons == [
        "speech-to-text fell behind: more than 7680 bytes (0.24 s) of audio waiting"
    ]
    assert audio.peak_bytes == 3 * len(CHUNK)
    assert audio.dropped_bytes == 100 * len(CHUNK)
    assert await drain(audio) == [CHUNK] * 3  # transcribed like an audio-stop


async def test_the_bound_holds_while_the_pipeline_reads() -> None:
    """Room made by reading is room for more; the peak never passes the bound."""
    audio, told = make(max_bytes=2 * len(CHUNK))
    stream = audio.chunks()
    read = 0
    for _ in range(50):
        audio.put(CHUNK)
        audio.put(CHUNK)
        read += len(await anext(stream))
        read += len(await anext(stream))
    audio.end()

    assert [chunk async for chunk in stream] == []
    assert told.reasons == []
    assert read == audio.received_bytes == 100 * len(CHUNK)
    assert audio.peak_bytes == 2 * len(CHUNK)


async def test_one_chunk_larger_than_the_bound_ends_the_audio() -> None:
    audio, told = make(max_bytes=1000)
    audio.put(bytes(1001))

    assert len(told.reasons) == 1
    assert audio.peak_bytes == 0
    assert await drain(audio) == []


async def test_the_request_ends_at_its_deadline_to_the_millisecond() -> None:
    clock = ManualClock()
    audio, told = make(clock)
    clock.advance(3600)  # no deadline before speech-to-text starts (wake stage)
    assert not audio.ended

    audio.start_deadline()
    audio.start_deadline()  # one deadline, however often it is started
    assert clock.pending == 1
    audio.put(CHUNK)
    clock.advance(MAX_REQUEST_S - 0.001)
    assert not audio.ended
    clock.advance(0.001)

    assert audio.ended
    assert told.reasons == ["still streaming after 30 s"]
    audio.put(CHUNK)  # the peer streams on: dropped
    assert audio.dropped_bytes == len(CHUNK)
    assert await drain(audio) == [CHUNK]


async def test_an_ended_request_has_no_deadline_left() -> None:
    clock = ManualClock()
    audio, told = make(clock, max_s=5.0)
    audio.start_deadline()
    audio.end()
    audio.end()  # idempotent
    audio.start_deadline()  # too late: nothing to limit

    assert clock.pending == 0
    clock.advance(60)
    assert told.reasons == []
    assert await drain(audio) == []


@pytest.mark.parametrize("max_s", [0.5, 12.0])
async def test_the_deadline_is_what_was_asked(max_s: float) -> None:
    clock = ManualClock()
    audio, told = make(clock, max_s=max_s)
    audio.start_deadline()
    clock.advance(max_s)

    assert told.reasons == [f"still streaming after {max_s:g} s"]
