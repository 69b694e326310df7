"""Speculative speech-to-text: whether whisper says the same, and what wasted runs cost.

For each command (the voice_latency bench's, the first 20 ``SENTENCES``, and
commands with two 0.5 s pauses inside), in three voices (Piper joe, espeak-ng,
flite), in digital silence and with room noise at 30 dB SNR, the request's audio
is cut as the two paths cut it, in the satellite's 80 ms chunks:

- the normal path: where the satellite's endpointer (``end_of_speech_s`` 0.7 s,
  its own ``Endpointer``) ends the request, the floor measured on 0.3 s before;
- speculation: where Home Assistant's ``PauseWatch`` (``core/pauses.py``) last
  paused with no speech after it, at ``--pause`` seconds.

Both cuts go to the same wyoming-faster-whisper (tiny.en) as Home Assistant
sends them; the transcripts must be equal. Every speculation the rule starts is
transcribed too (a dropped one is a wasted run), and the whisper server's CPU
time (``/proc/<pid>/stat``) is summed per path: the normal path is one run on the
whole request, speculation is every run it started (the used one replaces the
normal path's). Home Assistant's side: ``PauseWatch`` CPU per second of audio.

    scripts/ha-run .venv/bin/python -m bench.speculation [--pause 0.25 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
import os
from pathlib import Path
import sys
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.common import SENTENCES
from custom_components.voicestack.core.pauses import Heard, PauseWatch
from devstack import servers, speech
from devstack.engines import transcribe_with_server
from devstack.home_config import HOUSE_REPORT_COMMAND, KITCHEN_COMMAND
from voicestack_satellite.endpoint import Endpointer
from voicestack_satellite.mic import CHUNK_SAMPLES

END_OF_SPEECH_S = 0.7  # the satellite's default
LEAD_S = 0.3  # quiet before the command (the endpointer's floor)
TAIL_S = 1.5  # quiet after it: more than the endpointer waits
PAUSE_S = 0.5  # the pauses inside the paused commands
CHUNK = 2 * CHUNK_SAMPLES
COMMANDS = 20  # of the shared SENTENCES (the commands among them come first)
PAUSED = (
    ("Add milk", "eggs", "and bread to the shopping list."),
    ("Turn on the kitchen light", "and the living room lamp", "please."),
    ("Set a timer", "for ten minutes", "for the pasta."),
)
VOICES: dict[str, Callable[[str], bytes]] = {
    "joe": speech.speak,
    "espeak": speech.espeak,
    "flite": speech.flite,
}


@dataclass(slots=True)
class Case:
    """One command in one voice and room, cut both ways."""

    label: str
    full: bytes  # what the pipeline gets
    runs: list[bytes] = field(default_factory=list)  # speculations started
    used: bytes | None = None  # the one that holds the whole request


def cut(pcm: bytes, pause_s: float) -> Case:
    """Where the endpointer ends ``pcm``, and the speculations ``PauseWatch`` starts."""
    samples = np.frombuffer(pcm, dtype=np.int16)
    lead = round(LEAD_S * speech.RATE)
    endpointer = Endpointer(END_OF_SPEECH_S)
    endpointer.start(samples[:lead])
    watch = PauseWatch(pause_s)
    case = Case("", b"")
    running: bytes | None = None
    for start in range(0, len(pcm), CHUNK):  # the stream starts with the lead
        chunk = pcm[start : start + CHUNK]
        heard = watch.feed(chunk)
        if heard is Heard.PAUSED:
            running = pcm[: start + len(chunk)]
            case.runs.append(running)
        elif heard is Heard.RESUMED:
            running = None
        if endpointer.process(np.frombuffer(chunk, dtype=np.int16)):
            case.full = pcm[: start + len(chunk)]
            case.used = running if watch.paused else None
            return case
    raise RuntimeError("the endpointer never ended the request")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def materials() -> list[tuple[str, bytes]]:
    """(label, speech) for every command and voice, without padding."""
    commands = [
        "Turn on the fan.",
        KITCHEN_COMMAND,
        HOUSE_REPORT_COMMAND,
        *SENTENCES[:COMMANDS],
    ]
    out: list[tuple[str, bytes]] = []
    for voice, say in VOICES.items():
        out += [(f"{voice}: {text}", say(text)) for text in commands]
        out += [
            (
                f"{voice}: {' … '.join(parts)}",
                speech.with_pauses([say(p) for p in parts], PAUSE_S),
            )
            for parts in PAUSED
        ]
    return out


async def measure(server: servers.Server, case: Case) -> tuple[str, str, float, float]:
    """Normal and speculative transcripts, and the server CPU of each path."""
    pid = server.process.pid
    before = cpu_s(pid)
    normal = await transcribe_with_server(server, case.full)
    normal_cpu = cpu_s(pid) - before
    before = cpu_s(pid)
    speculative = ""
    for run in case.runs:
        text = await transcribe_with_server(server, run)
        if run is case.used:
            speculative = text
    return normal, speculative, normal_cpu, cpu_s(pid) - before


def watch_cpu_us_per_s(pcm: bytes) -> float:
    """``PauseWatch`` CPU per second of audio, fed in 80 ms chunks."""
    watch = PauseWatch(0.3)
    start = time.process_time()
    for _ in range(20):
        for offset in range(0, len(pcm), CHUNK):
            watch.feed(pcm[offset : offset + CHUNK])
    return (time.process_time() - start) / 20 / speech.seconds(pcm) * 1e6


async def bench(pauses: Sequence[float]) -> int:
    """Print agreement and CPU for each ``--pause``; 1 if a transcript differs."""
    spoken = await asyncio.to_thread(materials)
    rooms = {
        "silence": lambda pcm: speech.pad(pcm, LEAD_S, TAIL_S),
        "noise 30 dB": lambda pcm: speech.mix_noise(
            speech.pad(pcm, LEAD_S, TAIL_S), 30.0
        ),
    }
    failed = 0
    with servers.whisper_server() as server:
        await transcribe_with_server(server, spoken[0][1])  # the first run loads
        for pause_s in pauses:
            same = differ = unused = 0
            cpu_normal = cpu_spec = 0.0
            cpu_paused = [0.0, 0.0]
            for label, pcm in spoken:
                for room, make in rooms.items():
                    case = cut(make(pcm), pause_s)
                    case.label = f"{label} [{room}]"
                    normal, spec, n_cpu, s_cpu = await measure(server, case)
                    cpu_normal += n_cpu
                    cpu_spec += s_cpu
                    if "…" in label:
                        cpu_paused[0] += n_cpu
                        cpu_paused[1] += s_cpu
                    if case.used is None:
                        unused += 1
                        print(f"  not used: {case.label} ({len(case.runs)} runs)")
                    elif normal == spec:
                        same += 1
                    else:
                        differ += 1
                        print(f"  DIFFER: {case.label}: {normal!r} vs {spec!r}")
            total = same + differ + unused
            print(
                f"pause {pause_s:.2f} s: {total} requests, speculation used in "
                f"{same + differ}, same transcript {same}, different {differ}, "
                f"not used {unused}; whisper CPU normal {cpu_normal:.1f} s, with "
                f"speculation {cpu_spec:.1f} s ({cpu_spec / cpu_normal:.2f}x); "
                f"commands with two {PAUSE_S} s pauses: {cpu_paused[0]:.1f} s vs "
                f"{cpu_paused[1]:.1f} s ({cpu_paused[1] / cpu_paused[0]:.2f}x)"
            )
            failed += differ
    pcm = rooms["noise 30 dB"](spoken[0][1])
    print(f"PauseWatch CPU: {watch_cpu_us_per_s(pcm):.0f} µs per second of audio")
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pause", type=float, nargs="+", default=[0.25, 0.3])
    args = parser.parse_args(argv)
    return asyncio.run(bench(args.pause))


if __name__ == "__main__":
    sys.exit(main())
