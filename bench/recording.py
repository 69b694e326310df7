"""Recording requests: event-loop time per audio chunk, recording on vs off.

Every audio chunk a satellite sends runs through the assist satellite entity's
event handler on Home Assistant's event loop (``VoiceStackSatellite._on_event``:
parse the ``audio-chunk``, ``VoiceLoop.on_audio``: queue it for the pipeline
and, while recording, append it to the request's ``Recording``). This times
that real code, one call per chunk, with ``perf_counter_ns``: a 15 s request of
the satellite's 80 ms chunks (188 Wyoming ``audio-chunk`` events of 2,560 bytes),
many times, alternating recording on and off. The request's queue is unbounded
here (the pipeline would drain it as it reads; draining is no part of the
handler). Goal: recording adds < 1 ms per chunk (issue 15).

Anchor, in the same run on the same events: the same handler with recording
off (the turn has no recording), i.e. what every chunk cost before.

Also, for scale: what a finished 15 s request costs once on the loop when it is
handed to the library (``Recording.meta()`` + ``pcm()``; the WAV is written in
the executor).

    scripts/ha-run .venv/bin/python -m bench.recording [--runs 300]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
import statistics
import sys
import time
from types import SimpleNamespace

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from wyoming.audio import AudioChunk
from wyoming.event import Event

from bench.common import CHUNK_SAMPLES, RATE, figure, header, report
from custom_components.voicestack.assist_satellite import VoiceStackSatellite
from custom_components.voicestack.core.conversation.turn import Turn
from custom_components.voicestack.core.recording.recording import Recording
from custom_components.voicestack.request.loop import VoiceLoop
from devstack.manual_clock import ManualClock

REQUEST_S = 15.0
GOAL_US = 1000.0


def request_events() -> list[Event]:
    """A 15 s request as the satellite sends it: noise in 80 ms audio-chunks."""
    rng = np.random.default_rng(15)
    pcm = rng.integers(-3000, 3000, round(REQUEST_S * RATE), dtype=np.int16)
    return [
        AudioChunk(
            rate=RATE, width=2, channels=1, audio=pcm[i : i + CHUNK_SAMPLES].tobytes()
        ).event()
        for i in range(0, len(pcm), CHUNK_SAMPLES)
    ]


def run_once(events: Sequence[Event], *, record: bool) -> list[int]:
    """Nanoseconds of the entity's handler for each chunk of one request."""
    clock = ManualClock()
    turn = Turn(clock, lambda _reason: None, wake_word="hey_jarvis", woken=True)
    turn.audio.max_bytes = 1 << 40  # the pipeline would drain it meanwhile
    if record:
        turn.recording = new_recording(clock)
    voice_loop = SimpleNamespace(_turn=turn)
    voice_loop.on_audio = lambda audio: VoiceLoop.on_audio(voice_loop, audio)  # type: ignore[arg-type]
    entity = SimpleNamespace(voice_loop=voice_loop)
    handle = VoiceStackSatellite._on_event  # noqa: SLF001 - the real handler
    times = []
    for event in events:
        start = time.perf_counter_ns()
        handle(entity, event)  # type: ignore[arg-type]
        times.append(time.perf_counter_ns() - start)
    if record:
        assert turn.recording is not None
        assert turn.recording.samples == round(REQUEST_S * RATE)
    return times


def new_recording(clock: ManualClock) -> Recording:
    """A woken request's recording, as the recorder starts one."""
    return Recording(
        clock,
        started="2026-11-23T22:15:00+00:00",
        entry_id="bench",
        satellite="Bench",
        entity_id="assist_satellite.bench",
        wake_word="hey_jarvis",
        woken=True,
    )


def snapshot_us(events: Sequence[Event], runs: int) -> float:
    """Median µs of ``meta()`` + ``pcm()`` of a finished 15 s recording."""
    clock = ManualClock()
    recording = new_recording(clock)
    for event in events:
        recording.add_audio(AudioChunk.from_event(event).audio)
    recording.preroll(4800, 4800, 0)
    recording.heard("Turn on the kitchen lights.")
    times = []
    for _ in range(runs):
        start = time.perf_counter_ns()
        recording.meta()
        recording.pcm()
        times.append(time.perf_counter_ns() - start)
    return statistics.median(times) / 1000


def p99(values: Sequence[int]) -> float:
    """The 99th percentile."""
    return float(np.percentile(values, 99))


def main(argv: Sequence[str] | None = None) -> None:
    """Print the per-chunk figures and their ratio to recording off."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="requests per case")
    args = parser.parse_args(argv)
    events = request_events()
    header("Recording requests: event-loop time per audio chunk")
    report(
        f"{len(events)} chunks of {CHUNK_SAMPLES} samples ({REQUEST_S:g} s) per"
        f" request, {args.runs} requests per case, alternating"
    )
    for _ in range(20):  # warm-up
        run_once(events, record=True)
        run_once(events, record=False)
    on: list[int] = []
    off: list[int] = []
    for _ in range(args.runs):
        on += run_once(events, record=True)
        off += run_once(events, record=False)
    mean_on, mean_off = statistics.fmean(on) / 1000, statistics.fmean(off) / 1000
    figure(
        "per chunk, recording on, mean",
        mean_on,
        "µs",
        anchor=("recording off", mean_off),
        goal=(f"< {GOAL_US:g} µs added", mean_on - mean_off < GOAL_US),
        precision=2,
    )
    figure(
        "per chunk, recording on, p99",
        p99(on) / 1000,
        "µs",
        anchor=("recording off", p99(off) / 1000),
        precision=2,
    )
    figure(
        "added by recording, mean",
        mean_on - mean_off,
        "µs per chunk",
        goal=(f"< {GOAL_US:g} µs", mean_on - mean_off < GOAL_US),
        precision=2,
    )
    figure(
        "handing a finished 15 s recording to the library (meta + pcm), median",
        snapshot_us(events, 200),
        "µs, once per request",
        precision=1,
    )


if __name__ == "__main__":
    main()
