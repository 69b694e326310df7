"""CPU per second of audio while the satellite listens for its wake word(s).

Drives a real ``SatelliteCoordinator`` (run by an idle owner, with a ``Player`` on a
``FileSink``) chunk by chunk through ``process_mic`` — preroll, VAD, wake words —
as fast as it can, and compares its CPU time with the floor: pyopen-wakeword alone
(features plus the same models) on the same audio in the same run. CPU is process
time (all threads; TFLite uses more than one), so other processes on the machine do
not inflate it. Audio: 60 s of Piper speech without wake words, with pauses.

Goal: the satellite costs at most 1.2x the floor.

    .venv/bin/python -m bench.satellite_cpu
"""

from __future__ import annotations

import asyncio
from pathlib import Path
import sys
import tempfile
import time
from typing import cast

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from wyoming.event import Event
from wyoming.satellite import RunSatellite

from bench.common import (
    CHUNK_SAMPLES,
    DEFAULTS,
    RATE,
    SENTENCES,
    RawWakeWords,
    chunks,
    figure,
    header,
    median,
    report,
    talk,
    wake_detector,
)
from voicestack_satellite.echo_path import EchoPath
from voicestack_satellite.peer import Peer
from voicestack_satellite.player import Player
from voicestack_satellite.satellite import SatelliteCoordinator
from voicestack_satellite.sinks import FileSink
from voicestack_satellite.sounds import Sounds
from voicestack_satellite.vad import SpeechDetector

AUDIO_S = 60.0
PAUSES_S = (0.6, 1.2, 0.4, 2.0, 0.8)
REPEATS = 3
GOAL_RATIO = 1.2
WAKE_SETS = (("hey_jarvis",), ("hey_jarvis", "okay_nabu", "hey_mycroft"))


class IdleOwner:
    """A peer that runs the satellite, then only listens (Home Assistant idle).

    It records what the satellite sends.
    """

    name = "bench-owner"

    def __init__(self) -> None:
        """Not yet read by the coordinator."""
        self.closed = False
        self.extensions = True  # said voicestack-hello, as VoiceStack does
        self.end_of_speech_s: float | None = None  # the satellite's own endpointing
        self.sent: list[Event] = []
        self.running = asyncio.Event()  # run-satellite was handled
        self._asked = False

    async def read(
        self, max_payload: int, idle_timeout_s: float | None = None
    ) -> Event | None:
        """``run-satellite`` first, then nothing until cancelled."""
        if not self._asked:
            self._asked = True
            return RunSatellite().event()
        self.running.set()
        await asyncio.Event().wait()
        return None

    def send(self, event: Event) -> None:
        """Keep the event (``Peer.send`` never waits)."""
        self.sent.append(event)

    def close(self) -> None:
        """Mark closed (``Peer.close`` never waits)."""
        self.closed = True


async def measure(
    names: tuple[str, ...], audio: list[np.ndarray], tmp: Path
) -> tuple[float, float, int]:
    """CPU seconds of the satellite and of the floor over ``audio``, and wake words.

    Both process every chunk in turn (alternating which goes first), so load from
    other processes and cache effects hit both alike.
    """
    wake = wake_detector(names)
    player = Player(FileSink(tmp / "played.wav", DEFAULTS.snd_rate), DEFAULTS.snd_rate)
    sounds = Sounds.load(awake=None, done=None, timer=None)  # the shipped ones
    echo = EchoPath("aec", DEFAULTS.snd_rate)
    coordinator = SatelliteCoordinator(DEFAULTS, wake, player, sounds=sounds, echo=echo)
    floor = RawWakeWords(names)
    player.start()
    owner = IdleOwner()
    serving = asyncio.create_task(coordinator.handle_peer(cast("Peer", owner)))
    await owner.running.wait()
    satellite_cpu = floor_cpu = 0.0
    for index, chunk in enumerate(audio):
        if index % 2:
            start = time.process_time()
            floor.process(chunk)
            floor_cpu += time.process_time() - start
        start = time.process_time()
        await coordinator.process_mic(chunk)
        satellite_cpu += time.process_time() - start
        if not index % 2:
            start = time.process_time()
            floor.process(chunk)
            floor_cpu += time.process_time() - start
    serving.cancel()
    await asyncio.gather(serving, return_exceptions=True)
    await player.close()
    wake.close()
    floor.close()
    detections = sum(event.type == "detection" for event in owner.sent)
    return satellite_cpu, floor_cpu, detections


def vad_cpu(audio: list[np.ndarray]) -> float:
    """CPU seconds of the satellite's VAD alone (for the breakdown)."""
    vad = SpeechDetector(DEFAULTS.vad_threshold)
    start = time.process_time()
    for chunk in audio:
        vad.process(chunk)
    return time.process_time() - start


async def main() -> None:
    """Measure both wake-word sets, ``REPEATS`` runs each."""
    header("satellite CPU while listening (bench/satellite_cpu.py)")
    audio = list(chunks(talk(((s, 1.0) for s in SENTENCES), PAUSES_S, AUDIO_S)))
    seconds = len(audio) * CHUNK_SAMPLES / RATE
    report(f"audio: {seconds:.0f} s of Piper speech and pauses, no wake word")
    report(
        f"runs: {REPEATS} per figure, median; CPU = process time, all threads; "
        "satellite and floor take turns on every chunk"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for names in WAKE_SETS:
            satellite_runs: list[float] = []
            floor_runs: list[float] = []
            detections = 0
            for _ in range(REPEATS):
                sat_cpu, floor_cpu, sent = await measure(names, audio, Path(tmp))
                satellite_runs.append(sat_cpu)
                floor_runs.append(floor_cpu)
                detections += sent
            sat = median(satellite_runs) / seconds
            floor = median(floor_runs) / seconds
            report()
            report(f"{len(names)} wake word(s): {', '.join(names)}")
            report(
                "  runs (CPU s): satellite "
                + ", ".join(f"{c:.2f}" for c in satellite_runs)
                + "; floor "
                + ", ".join(f"{c:.2f}" for c in floor_runs)
            )
            figure(
                "  satellite idle listening",
                sat * 1000,
                "ms CPU per s of audio",
                anchor=("pyopen-wakeword alone", floor * 1000),
                goal=(f"<= {GOAL_RATIO}x", sat <= GOAL_RATIO * floor),
            )
            report(
                f"  = {sat * 100:.1f} % of one core; "
                f"{sat * 80:.2f} ms CPU per 80 ms chunk; "
                f"false wake words during the runs: {detections}"
            )
    vad = median(vad_cpu(audio) for _ in range(REPEATS)) / seconds
    report()
    report(
        f"breakdown: VAD alone (pymicro-vad, 10 ms frames) {vad * 1000:.1f} ms CPU "
        "per s of audio"
    )


if __name__ == "__main__":
    asyncio.run(main())
