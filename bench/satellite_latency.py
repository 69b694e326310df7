"""Latency of the satellite: wake word end -> first audio chunk, and flush -> silence.

(a) The real satellite subprocess (``devstack.satellite``) hears "Hey Jarvis,
turn on the kitchen light." from ``--mic-file``. From the events' arrival times and
the audio itself (the preroll is located in the WAV sample-exactly) it reports:
where the wake word ends in the WAV and where the satellite cut (detection delay in
the audio), the time from the mic delivering the cut chunk to ``detection``, from
``detection`` to the first ``audio-chunk``, and the total from the wake word's end
to the first chunk. The mic tick of the cut chunk is estimated from the live chunks
that follow (each arrives right after its tick). Also: the preroll from the
``voicestack-preroll`` event and counted from the audio burst before live audio,
whether preroll and live audio splice sample-exactly, and how much live audio the
awake chime mutes. Anchor: openWakeWord's 80 ms window.

(b) Flush: how long sound continues after the flush. A model of an ideal sound card
that plays each written sample in real time sits behind the sink. In-process: a
``Player`` on a ``FileSink`` and on a ``CommandSink`` (``cat``, output discarded),
``flush()`` called directly. End to end: the satellite subprocess with
``--snd-command bench/pcm_clock.py`` (which logs when PCM arrives) gets
``voicestack-flush`` over Wyoming. Anchor: one 20 ms player block; goal: at most
20 ms (median).

    .venv/bin/python -m bench.satellite_latency
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
import shlex
import subprocess
import sys
import tempfile
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.event import Event

from bench.common import (
    CHUNK_MS,
    CHUNK_SAMPLES,
    DEFAULTS,
    RATE,
    RawWakeWords,
    chunks,
    figure,
    header,
    median,
    report,
    spoken,
    wake_word_end,
)
from devstack import servers, speech
from devstack.satellite import CLI, read_until, run_satellite, satellite
import voicestack_protocol as protocol
from voicestack_satellite.audio import read_wav
from voicestack_satellite.player import BLOCK_S, Player
from voicestack_satellite.sinks import CommandSink, FileSink, Sink
from voicestack_satellite.sounds import default_path

WAKE_TEXT = "Hey Jarvis, turn on the kitchen light."
LEAD_S, TAIL_S = 1.0, 3.0  # silence around the request in the mic file
LIVE_S = 3.0  # live audio to collect after the cut
WAKE_TRIALS = 3
REPLY_TEXT = (
    "Here is a long answer about the weather, which will be interrupted "
    "long before it comes to an end."
)
FLUSH_TRIALS = 15
WIRE_TRIALS = 8
BLOCK_MS = BLOCK_S * 1000
GOAL_FLUSH_MS = 20.0
PCM_CLOCK = Path(__file__).resolve().with_name("pcm_clock.py")


# -- (a) wake word end -> first audio chunk ------------------------------------


def locate(needle: np.ndarray, haystack: np.ndarray) -> int:
    """Index where ``needle`` occurs sample-exactly in ``haystack`` (or -1)."""
    anchor = int(np.argmax(np.abs(needle)))
    for start in np.flatnonzero(haystack == needle[anchor]) - anchor:
        if start >= 0 and np.array_equal(haystack[start : start + len(needle)], needle):
            return int(start)
    return -1


@dataclass(slots=True)
class WakeTrial:
    """One wake word, measured."""

    wake_end_ms: float  # in the WAV
    cut_ms: float  # where the satellite cut, in the WAV
    cut_to_detection_ms: float  # mic tick of the cut chunk -> detection arrives
    detection_to_audio_ms: float  # detection arrives -> first audio-chunk arrives
    total_ms: float  # wake word end (real time) -> first audio-chunk arrives
    preroll_event: int
    preroll_counted: int
    timestamp_in_wav_ms: float  # detection timestamp, in WAV time
    muted_ms: float  # live audio replaced by silence (awake chime)
    splice_exact: bool


async def collect(client: AsyncTcpClient, samples: int) -> list[tuple[float, Event]]:
    """Events with arrival times until ``samples`` of request audio came."""
    got: list[tuple[float, Event]] = []
    audio = 0
    while audio < samples:
        event = await asyncio.wait_for(client.read_event(), 20)
        arrived = time.perf_counter()
        if event is None:
            raise ConnectionError("satellite closed the connection")
        got.append((arrived, event))
        if AudioChunk.is_type(event.type):
            audio += len(AudioChunk.from_event(event).audio) // 2
    return got


def analyse(
    events: list[tuple[float, Event]], wav: np.ndarray, wake_end: int
) -> WakeTrial:
    """Turn the events of one request into a ``WakeTrial``."""
    by_type = {event.type: (t, event) for t, event in reversed(events)}  # firsts
    detected_at, detection = by_type["detection"]
    preroll_event = int(by_type[protocol.PREROLL][1].data["samples"])
    cut_event = int(by_type[protocol.PREROLL][1].data["cut"])
    audio = [
        (t, np.frombuffer(AudioChunk.from_event(e).audio, np.int16))
        for t, e in events
        if AudioChunk.is_type(e.type)
    ]
    first_at = audio[0][0]
    # The preroll is the first ``preroll_event`` samples (sent at once, in chunks).
    stream = np.concatenate([samples for _t, samples in audio])
    preroll = stream[:preroll_event]
    sent = 0
    live = []
    for t, samples in audio:
        if sent >= preroll_event:
            live.append((t, samples))
        sent += len(samples)
    # The mic as the satellite heard it: silence before the file starts, then it.
    margin = len(preroll) + CHUNK_SAMPLES
    heard = np.concatenate(
        [np.zeros(margin, np.int16), wav, np.zeros(RATE * 10, np.int16)]
    )
    start = locate(preroll, heard)
    if start < 0:
        raise ValueError("the preroll is not a stretch of the mic file")
    cut = start + len(preroll)  # in ``heard``
    splice_exact, muted = True, 0
    for index, (_t, samples) in enumerate(live):
        expected = heard[cut + index * CHUNK_SAMPLES :][: len(samples)]
        if not samples.any() and expected.any():
            muted += len(samples)  # the mic is muted while the awake chime plays
        elif not np.array_equal(samples, expected):
            splice_exact = False
    # Each live chunk arrives just after its mic tick: the earliest gives the tick
    # of the cut chunk (the mic delivers one chunk per 80 ms).
    cut_tick = min(t - (i + 1) * CHUNK_MS / 1000 for i, (t, _s) in enumerate(live))
    cut_in_wav = cut - margin
    delay_s = (cut_in_wav - wake_end) / RATE
    file_start = cut_event - cut_in_wav  # absolute mic sample of the WAV's start
    return WakeTrial(
        wake_end_ms=wake_end * 1000 / RATE,
        cut_ms=cut_in_wav * 1000 / RATE,
        cut_to_detection_ms=(detected_at - cut_tick) * 1000,
        detection_to_audio_ms=(first_at - detected_at) * 1000,
        total_ms=(first_at - (cut_tick - delay_s)) * 1000,
        preroll_event=preroll_event,
        preroll_counted=len(preroll),
        timestamp_in_wav_ms=detection.data["timestamp"] - file_start * 1000 / RATE,
        muted_ms=muted * 1000 / RATE,
        splice_exact=splice_exact and file_start % CHUNK_SAMPLES == 0,
    )


def first_detection_alone(wav: np.ndarray) -> float:
    """Where pyopen-wakeword alone first crosses the threshold in ``wav``, in ms.

    The satellite's mic file starts on a chunk boundary, so the chunks are the same.
    """
    engine = RawWakeWords(["hey_jarvis"])
    end = 0
    try:
        for chunk in chunks(wav):
            end += len(chunk)
            if any(p >= DEFAULTS.wake_threshold for _n, p in engine.process(chunk)):
                return end * 1000 / RATE
    finally:
        engine.close()
    return float("nan")


async def wake_trial(tmp: Path, wav_path: Path, wav: np.ndarray) -> WakeTrial:
    """Run the satellite on the mic file once and measure the request's start."""
    wake_end = round(LEAD_S * RATE) + wake_word_end(spoken(WAKE_TEXT))
    need = round((DEFAULTS.wake_preroll_s + LIVE_S) * RATE)
    async with (
        satellite(tmp, "--mic-file", str(wav_path)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        events = await collect(client, need)
        await client.write_event(Transcript(text="turn on the kitchen light").event())
        await read_until(client, "audio-stop", 5)
    return analyse(events, wav, wake_end)


async def wake_latency() -> None:
    """(a): several satellite runs, medians."""
    wav = np.frombuffer(
        speech.pad(spoken(WAKE_TEXT).tobytes(), LEAD_S, TAIL_S), np.int16
    )
    trials: list[WakeTrial] = []
    with tempfile.TemporaryDirectory() as tmp:
        wav_path = speech.write_wav(Path(tmp) / "mic.wav", wav.tobytes())
        for index in range(WAKE_TRIALS):
            run_dir = Path(tmp) / f"run{index}"
            run_dir.mkdir()
            trials.append(await wake_trial(run_dir, wav_path, wav))
    first = trials[0]
    floor_fires = first_detection_alone(wav)
    report()
    report(
        f"(a) wake word -> request audio: {WAKE_TEXT!r} with {LEAD_S} s silence "
        f"before, real satellite subprocess, {WAKE_TRIALS} runs, median"
    )
    for trial in trials:
        report(
            f"  run: wake word ends {trial.wake_end_ms:.0f} ms, cut {trial.cut_ms:.0f}"
            f" ms, cut tick -> detection {trial.cut_to_detection_ms:.1f} ms, "
            f"detection -> first chunk {trial.detection_to_audio_ms:.2f} ms, "
            f"total {trial.total_ms:.1f} ms"
        )
    anchor = ("openWakeWord window", CHUNK_MS)
    audio_delay = median(t.cut_ms - t.wake_end_ms for t in trials)
    figure("  wake word end -> cut, in the audio", audio_delay, "ms", anchor=anchor)
    figure(
        "  mic tick of the cut chunk -> detection arrives",
        median(t.cut_to_detection_ms for t in trials),
        "ms",
        anchor=anchor,
    )
    figure(
        "  detection arrives -> first audio-chunk arrives",
        median(t.detection_to_audio_ms for t in trials),
        "ms",
        anchor=anchor,
        precision=2,
    )
    figure(
        "  wake word end -> first audio-chunk arrives (total)",
        median(t.total_ms for t in trials),
        "ms",
        anchor=anchor,
    )
    report(
        f"  detection timestamp in WAV time: {first.timestamp_in_wav_ms:.0f} ms "
        f"(wake word ends at {first.wake_end_ms:.0f} ms, cut at {first.cut_ms:.0f} ms);"
        f" pyopen-wakeword alone on the same chunks first fires at {floor_fires:.0f} ms"
    )
    wake_in_preroll = first.wake_end_ms - (
        first.cut_ms - first.preroll_counted * 1000 / RATE
    )
    report(
        f"  preroll: event {first.preroll_event} samples "
        f"({first.preroll_event / RATE:.3f} s), counted before the cut "
        f"{first.preroll_counted} samples ({first.preroll_counted / RATE:.3f} s), "
        f"configured --wake-preroll {DEFAULTS.wake_preroll_s} s; splice "
        f"sample-exact: {all(t.splice_exact for t in trials)}; the preroll holds the "
        f"last {max(0.0, wake_in_preroll):.0f} ms of the wake word"
    )
    chime_ms = len(read_wav(default_path("awake"))) * 1000 / RATE
    report(
        f"  live audio muted after the cut: "
        f"{median(t.muted_ms for t in trials):.0f} ms (the awake chime lasts "
        f"{chime_ms:.0f} ms)"
    )


# -- (b) flush -> silence -------------------------------------------------------


def played_until(sounding: float, now: float, samples: int) -> float:
    """When an ideal card at the output rate falls silent after ``samples`` more."""
    return max(sounding, now) + samples / DEFAULTS.snd_rate


class TimedSink:
    """A sink in front of an ideal sound card that plays each sample in real time.

    Records every write; ``sounding_until`` is when the card would fall silent.
    """

    def __init__(self, inner: Sink) -> None:
        """Wrap ``inner`` (fed at the satellite's output rate)."""
        self._inner = inner
        self.keeps_played = inner.keeps_played
        self.writes: list[float] = []
        self.sounding_until = 0.0

    async def write(self, samples: np.ndarray) -> None:
        """Queue ``samples`` on the modelled card, then hand them on."""
        now = asyncio.get_running_loop().time()
        self.writes.append(now)
        self.sounding_until = played_until(self.sounding_until, now, len(samples))
        await self._inner.write(samples)

    def stream_ended(self, stream_id: str, samples: np.ndarray) -> None:
        """Pass on."""
        self._inner.stream_ended(stream_id, samples)

    async def close(self) -> None:
        """Pass on."""
        await self._inner.close()


@dataclass(slots=True)
class FlushTrial:
    """One flush, in-process."""

    sound_after_ms: float  # the card plays this long after flush()
    writes_after: int  # blocks written after flush()
    busy_after: bool  # player.busy right after flush()


async def flush_in_process(inner: Sink, reply: bytes) -> list[FlushTrial]:
    """Play ``reply`` and flush it at random moments, ``FLUSH_TRIALS`` times."""
    loop = asyncio.get_running_loop()
    sink = TimedSink(inner)
    player = Player(sink, DEFAULTS.snd_rate)
    player.start()
    rng = np.random.default_rng(1)
    trials: list[FlushTrial] = []
    for index in range(FLUSH_TRIALS):
        stream_id = str(index + 1)
        player.begin(stream_id, RATE, 2, 1)
        player.feed(stream_id, reply)
        player.end(stream_id)
        await asyncio.sleep(rng.uniform(0.3, 0.8))
        flushed_at = loop.time()
        player.flush()
        busy = player.busy
        await asyncio.sleep(0.1)
        trials.append(
            FlushTrial(
                sound_after_ms=max(0.0, sink.sounding_until - flushed_at) * 1000,
                writes_after=sum(t > flushed_at for t in sink.writes),
                busy_after=busy,
            )
        )
    await player.close()
    return trials


def start_satellite(tmp: Path, port: int, sound_log: Path) -> subprocess.Popen[bytes]:
    """The satellite with ``pcm_clock.py`` as its sound command.

    ``devstack.satellite`` always plays to a file; here the sound has to arrive
    somewhere with a clock, so the command line is the harness's with
    ``--snd-command``.
    """
    mic = speech.write_wav(tmp / "mic.wav", speech.silence(1.0))
    sound = shlex.join([sys.executable, str(PCM_CLOCK), str(sound_log)])
    with (tmp / "satellite.log").open("wb") as log:
        return subprocess.Popen(
            [
                *CLI,
                "--name",
                "bench",
                "--uri",
                f"tcp://127.0.0.1:{port}",
                "--mic-file",
                str(mic),
                "--snd-command",
                sound,
                "--no-zeroconf",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )


@asynccontextmanager
async def clocked_satellite(tmp: Path, sound_log: Path) -> AsyncIterator[int]:
    """Run ``start_satellite`` until the block ends; yields its port."""
    port = servers.free_port()
    process = await asyncio.to_thread(start_satellite, tmp, port, sound_log)
    try:
        await asyncio.to_thread(
            servers.wait_until_described, process, "127.0.0.1", port, 30.0
        )
        yield port
    finally:
        process.terminate()
        await asyncio.to_thread(process.wait, 10)


async def flush_over_wyoming(tmp: Path, reply: bytes) -> list[float]:
    """Per ``voicestack-flush``, how long the modelled card still sounds, in ms.

    The flush round trip (command -> ``flushed`` progress) is reported too.
    """
    sound_log = tmp / "sound.log"
    rng = np.random.default_rng(2)
    flushes: list[tuple[float, float]] = []  # (reply sent, flush sent)
    round_trips: list[float] = []

    async def send_reply(client: AsyncTcpClient) -> float:
        await client.write_event(AudioStart(rate=RATE, width=2, channels=1).event())
        await client.write_event(
            AudioChunk(rate=RATE, width=2, channels=1, audio=reply).event()
        )
        await client.write_event(AudioStop().event())
        return time.monotonic()

    async with (
        clocked_satellite(tmp, sound_log) as port,
        AsyncTcpClient("127.0.0.1", port) as client,
    ):
        await run_satellite(client)
        await send_reply(client)  # starts the sound command; not measured
        await read_until(client, "played", len(reply) / 2 / RATE + 5)
        for _ in range(WIRE_TRIALS):
            sent = await send_reply(client)
            await asyncio.sleep(rng.uniform(0.3, 0.8))
            flushed = time.monotonic()
            await client.write_event(Event(protocol.FLUSH))
            state = ""
            while state != "flushed":
                event, _ = await read_until(client, protocol.PROGRESS, 5)
                state = event.data["state"]
            round_trips.append((time.monotonic() - flushed) * 1000)
            flushes.append((sent, flushed))
            await read_until(client, "played", 5)
            await asyncio.sleep(0.1)
    report(
        f"  over Wyoming: voicestack-flush -> 'flushed' progress round trip "
        f"{median(round_trips):.1f} ms (max {max(round_trips):.1f} ms)"
    )
    records = [
        (float(when), int(size) // 2)
        for when, size in (line.split() for line in sound_log.read_text().splitlines())
    ]
    after: list[float] = []
    gaps: list[float] = []  # the card ran dry mid-reply (an audible dropout)
    for index, (sent, flushed) in enumerate(flushes):
        stop = flushes[index + 1][0] if index + 1 < len(flushes) else float("inf")
        sounding = 0.0
        for when, samples in records:
            if sent <= when < stop:
                if 0.0 < sounding < when - 0.001:
                    gaps.append((when - sounding) * 1000)
                sounding = played_until(sounding, when, samples)
        after.append(max(0.0, sounding - flushed) * 1000)
    report(
        f"  over Wyoming: dropouts (card ran dry > 1 ms) while playing: {len(gaps)}"
        + (f", longest {max(gaps):.1f} ms" if gaps else "")
    )
    return after


def flush_figure(label: str, sound_after_ms: list[float]) -> None:
    """Median sound after a flush against one block, with the worst case."""
    value = median(sound_after_ms)
    figure(
        f"  {label}",
        value,
        "ms",
        detail=f" (max {max(sound_after_ms):.1f} ms)",
        anchor=("one player block", BLOCK_MS),
        goal=(f"<= {GOAL_FLUSH_MS:.0f} ms", value <= GOAL_FLUSH_MS),
    )


async def flush_latency() -> None:
    """(b): in-process with two sinks, then end to end."""
    reply = spoken(REPLY_TEXT).tobytes()
    report()
    report(
        f"(b) flush -> silence at random moments of a {len(reply) / 2 / RATE:.1f} s "
        f"reply, output {DEFAULTS.snd_rate} Hz, ideal card modelled behind the sink; "
        f"{FLUSH_TRIALS} flushes per sink in-process, {WIRE_TRIALS} over Wyoming"
    )
    with tempfile.TemporaryDirectory() as tmp:
        sinks: list[tuple[str, Sink]] = [
            ("FileSink", FileSink(Path(tmp) / "played.wav", DEFAULTS.snd_rate)),
            ("CommandSink (cat)", CommandSink(["cat"])),
        ]
        for label, inner in sinks:
            trials = await flush_in_process(inner, reply)
            flush_figure(
                f"{label}: sound after flush()", [t.sound_after_ms for t in trials]
            )
            report(
                f"    blocks written after flush(): "
                f"{sum(t.writes_after for t in trials)}; busy right after flush(): "
                f"{sum(t.busy_after for t in trials)} of {len(trials)}"
            )
        run_dir = Path(tmp) / "wire"
        run_dir.mkdir()
        after = await flush_over_wyoming(run_dir, reply)
    flush_figure("over Wyoming (--snd-command): sound after voicestack-flush", after)


async def main() -> None:
    """Both measurements."""
    header("satellite latency (bench/satellite_latency.py)")
    report("times are wall clock (other processes may add to them)")
    await wake_latency()
    await flush_latency()


if __name__ == "__main__":
    asyncio.run(main())
