"""Barge-in's figures (issue 13), against the anchors, in one run.

- **Onset to paused** and **intruder onset to resumed**: a real satellite in
  ``devstack.room.Room`` (in ``simple``, its answer back in the mic at -10 dB,
  40 ms late) plays a three-sentence Piper answer; an espeak-ng voice talks over it
  ``TRIALS`` times. The owner is this process, deciding with Home Assistant's
  own HA-free core (``core.barge_in.BargeIn``: resume at the sentence's
  start); the times are the room's: when the voice's first loud sample sounds,
  when the speaker went quiet, when it played again. Anchors: LiveKit's 0.5 s
  minimum interruption speech, and its resume 2.0 s after the false
  interruption's speech ended (the voice's length + 2.0 s, per trial).
- **Self-interruptions per hour of played answers**: the same room with the
  echo only, ``ECHO_S`` of answers per echo handling: ``aec`` (the *Echo
  cancellation* switch on), ``gate`` (off), and ``external`` with nothing
  removing the echo (what a satellite without echo handling would do).
- **Gate equal-error rate** on the test voices (``bench/barge_in_gate.py``).
- **Added satellite CPU per second of audio**: echo handling and barge-in's VAD
  on every mic chunk, and one verdict's embedding, against the wake word
  engine's own CPU per second in the same run.

Rooms: ``devstack.room_presets`` by name (``simple`` unless named; each
room's figures in turn, docs/development.md, "The listening harness").

    scripts/ha-run .venv/bin/python -m bench.barge_in             # about 5 minutes
    scripts/ha-run .venv/bin/python -m bench.barge_in simple hard  # per room
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import itertools
from pathlib import Path
import re
import sys
import tempfile
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from wyoming.event import Event

from bench.barge_in_gate import equal_error_rate, gate_scores
from bench.common import RATE, chunks, figure, header, median, report, spoken
from custom_components.voicestack.core.barge_in.policy import (
    BargeInKind,
    BargeInRecord,
    Verdict,
)
from custom_components.voicestack.core.barge_in.verdict import BargeIn
from custom_components.voicestack.core.clock import LoopClock
from devstack import room_presets, speech
from devstack.room import Room
from devstack.satellite import play_answer, read_until, run_satellite, satellite
import voicestack_protocol as protocol
from voicestack_satellite.capture import Capture, VoiceStart
from voicestack_satellite.echo_path import EchoPath
from voicestack_satellite.vad import WINDOW_SAMPLES, SpeechDetector

SENTENCES = (
    "Here is the news from your home tonight, room by room, as it stands.",
    "The kitchen light is off, and the living room lamp has been on since six.",
    "The fan is off, and everything else in the house is quiet and calm.",
)
INTRUDERS = (
    "Excuse me, is anybody there?",
    "And now, the weather for tomorrow.",
    "Did you see where I left my keys?",
    "Breaking news from the city tonight.",
)
TRIALS = 8
ECHO_S = 60.0
PAUSE_GOAL_S, PAUSE_ANCHOR_S = 0.150, 0.5
RESUME_GOAL_S, RESUME_AFTER_S = 1.8, 2.0


def answer() -> tuple[bytes, list[tuple[str, int]]]:
    """The answer's audio and its sentences with their lengths (samples)."""
    parts = [speech.speak(text) for text in SENTENCES]
    return b"".join(parts), [
        (t, len(p) // 2) for t, p in zip(SENTENCES, parts, strict=True)
    ]


def config(voiceprint: list[float] | None) -> Event:
    """Barge-in on, with joe's voiceprint if given."""
    voices = [] if voiceprint is None else [{"person": "joe", "embedding": voiceprint}]
    data = {"enabled": True, "min_speech_s": 0.3, "echo_cancel": True}
    return Event(
        protocol.BARGE_IN_CONFIG, {**data, "threshold": 0.7, "voiceprints": voices}
    )


async def latencies(
    folder: Path, voiceprint: list[float], preset: str
) -> list[tuple[float, float, float]]:
    """(onset to paused, onset to resumed, the voice's length) per trial."""
    pcm, sentences = answer()
    results = []
    async with Room(folder, preset) as room, satellite(folder, room=room) as sat:
        owner = sat.connect()
        await owner.connect()
        await run_satellite(owner)
        await owner.write_event(config(voiceprint))
        for trial in range(TRIALS):
            records: list[BargeInRecord] = []
            core = BargeIn(LoopClock(), records.append, lambda: True)
            token = core.start_response(" ".join(SENTENCES))
            for text, samples in sentences:
                core.add_sentence(token, text, samples)
            core.finish(token)
            stream = f"t{trial}"
            await play_answer(owner, pcm, stream)
            await asyncio.sleep(2.0 + 1.5 * (trial % 3))
            voice = speech.espeak(INTRUDERS[trial % len(INTRUDERS)], voice="en-gb")
            heard = room.say_now(voice)
            report_event, _ = await read_until(owner, protocol.BARGE_IN, 8)
            core.pause(token, report_event.data["played"])
            verdict, _ = await read_until(owner, protocol.VOICE, 8)
            core.verdict(
                token, Verdict.ENROLLED if verdict.data["person"] else Verdict.OTHER
            )
            (decided,) = [r for r in records if r.kind is not BargeInKind.PAUSE]
            if decided.kind is BargeInKind.RESUME:
                await owner.write_event(
                    Event(protocol.RESUME, {"offset": decided.resume_from})
                )
            else:
                await owner.write_event(Event(protocol.FLUSH, {}))
            await read_until(owner, "played", 40)
            paused, resumed = (
                room.pause_after(heard.at - 0.05),
                room.resume_after(heard.at - 0.05),
            )
            if paused is None or resumed is None:
                report(f"trial {trial}: {decided.kind} ({decided.reason}): not timed")
                continue
            results.append(
                (paused - heard.at, resumed - heard.at, len(voice) / 2 / RATE)
            )
    return results


async def self_interruptions(
    folder: Path, mode: str, preset: str
) -> tuple[int, int, float]:
    """(barge-ins reported, pauses, seconds of answers played) with the echo only."""
    texts = itertools.cycle(
        [
            *SENTENCES,
            "Tomorrow will be sunny in the morning, with rain in the afternoon.",
        ]
    )
    reported = played_s = 0
    async with (
        Room(folder, preset) as room,
        satellite(folder, "--echo-cancel", mode, room=room) as sat,
    ):
        owner = sat.connect()
        await owner.connect()
        await run_satellite(owner)
        await owner.write_event(config(None))
        index = 0
        while played_s < ECHO_S:
            pcm = b"".join(speech.speak(next(texts)) for _ in range(3))
            await play_answer(owner, pcm, f"e{index}")
            index += 1
            while True:
                event = await asyncio.wait_for(owner.read_event(), 60)
                assert event is not None
                if event.type == protocol.BARGE_IN:
                    reported += 1  # answered as the gate would (nobody enrolled): on
                    await owner.write_event(Event(protocol.RESUME, {}))
                elif event.type == "played":
                    break
            played_s += len(pcm) / 2 / RATE
        log = sat.log_text()
    return reported, len(re.findall("Paused stream", log)), played_s


def cpu_per_second() -> tuple[float, float, float, float]:
    """CPU ms per second of audio: AEC path, gate path, barge-in's VAD; wake word engine."""
    from bench.common import RawWakeWords

    audio = np.concatenate([spoken(text) for text in SENTENCES * 3])
    pieces = list(chunks(audio))
    seconds = len(pieces) * 1280 / RATE

    def timed(process: Callable[[np.ndarray], object]) -> float:
        started = time.process_time()
        for chunk in pieces:
            process(chunk)
        return (time.process_time() - started) / seconds * 1000

    def echo_path(mode: str) -> Callable[[np.ndarray], None]:
        path, at = EchoPath(mode, 16000), itertools.count(0, 1280)

        def process(chunk: np.ndarray) -> None:
            n = next(at)
            path.clock.heard(n + 1280, n / RATE)
            path.on_written(chunk, n / RATE)
            path.process(chunk, n)
            path.echo_levels()

        return process

    detector, capture, voice = SpeechDetector(), Capture(1.0), VoiceStart(15)

    def listening(chunk: np.ndarray) -> None:  # what BargeIn does per chunk
        detector.windows(chunk)
        capture.heard(chunk, chunk)
        for at in range(0, len(chunk), WINDOW_SAMPLES):  # each window's level
            window = chunk[at : at + WINDOW_SAMPLES].astype(np.float64)
            voice.window(np.sqrt(np.mean(window**2)) > 100.0, at)

    wake = RawWakeWords(["hey_jarvis"])
    floor = timed(wake.process)
    wake.close()
    return timed(echo_path("aec")), timed(echo_path("gate")), timed(listening), floor


def embed_ms() -> float:
    """One verdict's embedding (1.3 s of speech), median of 10."""
    from voicestack_satellite.voiceprint import SpeakerEncoder

    encoder = SpeakerEncoder.from_resemblyzer()
    clip = spoken("Excuse me, is anybody there at all?")[: round(1.3 * RATE)]
    encoder.embed_pcm(clip)
    times = []
    for _ in range(10):
        started = time.perf_counter()
        encoder.embed_pcm(clip)
        times.append((time.perf_counter() - started) * 1000)
    return median(times)


def joe_voiceprint() -> list[float]:
    """Joe's voiceprint as enrollment makes it (three phrases, normalized mean)."""
    from bench.barge_in_gate import ENROLL_PHRASES
    from voicestack_satellite.voiceprint import SpeakerEncoder

    encoder = SpeakerEncoder.from_resemblyzer()
    mean = np.mean([encoder.embed_pcm(spoken(t)) for t in ENROLL_PHRASES], axis=0)
    return (mean / np.linalg.norm(mean)).tolist()


async def rooms(preset: str) -> None:
    """The figures that need a satellite in a room, in the ``preset`` room."""
    report(f"room: {preset}")
    with tempfile.TemporaryDirectory() as folder:
        trials = await latencies(Path(folder), joe_voiceprint(), preset)
    paused = [t[0] for t in trials]
    resumed = [t[1] for t in trials]
    anchors = [t[2] + RESUME_AFTER_S for t in trials]
    report(f"{len(trials)} of {TRIALS} trials timed (espeak-ng en-gb over Piper joe)")
    figure(
        "onset to paused (median)",
        median(paused),
        "s",
        detail=f" (min {min(paused):.3f}, max {max(paused):.3f})",
        anchor=("LiveKit minimum interruption speech", PAUSE_ANCHOR_S),
        goal=(f"<= {PAUSE_GOAL_S} s", median(paused) <= PAUSE_GOAL_S),
        precision=3,
    )
    figure(
        "intruder onset to resumed (median)",
        median(resumed),
        "s",
        detail=f" (min {min(resumed):.3f}, max {max(resumed):.3f})",
        anchor=("LiveKit: 2.0 s after the voice ended", median(anchors)),
        goal=(f"<= {RESUME_GOAL_S} s", median(resumed) <= RESUME_GOAL_S),
        precision=3,
    )
    for mode in ("aec", "gate", "external"):
        with tempfile.TemporaryDirectory() as folder:
            reported, pauses, played_s = await self_interruptions(
                Path(folder), mode, preset
            )
        per_hour = reported * 3600 / played_s
        report(
            f"self-interruptions, echo {mode}: {reported} barge-ins ({per_hour:.0f} per"
            f" hour) and {pauses} pauses in {played_s:.0f} s of answers"
        )


def main() -> None:
    """Print every figure, the room's in each room named on the command line."""
    header("barge-in (issue 13)")
    for preset in sys.argv[1:] or ["simple"]:
        asyncio.run(rooms(room_presets.preset(preset).name))
    genuine, impostor = gate_scores()
    figure(
        "gate equal-error rate (1.3 s of speech)",
        100 * equal_error_rate(genuine, impostor),
        "%",
        detail=(
            f"; joe {min(genuine):.3f}-{max(genuine):.3f}, espeak-ng"
            f" {min(impostor):.3f}-{max(impostor):.3f}, threshold 0.70"
        ),
    )
    aec, gate, vad, floor = cpu_per_second()
    anchor = ("the wake word engine", floor)
    figure(
        "added CPU, echo cancellation (AEC3)", aec, "ms per s of audio", anchor=anchor
    )
    figure("added CPU, reference gate", gate, "ms per s of audio", anchor=anchor)
    figure(
        "added CPU, barge-in VAD and capture", vad, "ms per s of audio", anchor=anchor
    )
    figure("one verdict's embedding (1.3 s)", embed_ms(), "ms")


if __name__ == "__main__":
    main()
