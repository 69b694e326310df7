"""Voice loop: end of speech -> first response audio at the satellite, and idle CPU.

VoiceStack against Home Assistant's built-in ``wyoming`` integration (the anchor),
both driving the same voicestack-satellite, with the same whisper and Piper
servers, the same pipeline and the same WAV, in one run (``devstack``
builds the stack: a real Home Assistant 2025.4 in this process, real subprocesses).
The satellite has one owner at a time: each run starts a fresh satellite (its
``--mic-file`` plays once), adds it to one integration, and removes it afterwards.
Runs alternate between the two owners (A B, B A, ...) so drifting machine load
hits both alike.

Two replies from the default conversation agent:

- one sentence: "Turn on the kitchen lights." -> "Turned on the lights";
- three sentences: "Tell me about the house." -> a custom sentence whose
  intent_script answers in three sentences.

What is measured, per run (wall clock, ``time.time()``, one machine):

- end of speech: when the satellite played the last speech sample of its mic
  WAV. ``--mic-file`` starts playing at the satellite's first 80 ms mic tick after
  ``run-satellite``; the satellite reports being run (``--event-command`` state
  ``idle``, stamped in the satellite right after it started the mic) at most one
  tick earlier, so start = that stamp + 40 ms (±40 ms), and end of speech = start +
  the offset of the WAV's last sample louder than -40 dBFS;
- first response audio at the satellite: the satellite's ``speaking`` state,
  stamped when the response's ``audio-start`` reaches it. Both integrations send
  ``audio-start`` and the first ``audio-chunk`` in one burst (HA's wyoming
  satellite in ``_stream_tts``, VoiceStack's Speaker once the first sentence is
  synthesized), so this is when the first audio arrives, before the satellite's
  own playback queue (its "done" chime plays first in both cases);
- also: Home Assistant's VAD end (the satellite's ``thinking`` state, on
  ``voice-stopped``), to split the latency into "VAD" and "after the VAD".

Before measuring: Piper and whisper each answer one request, and one full
command per owner and reply is run and not counted (the default agent loads its
intents on first use). Before every run everything is switched off and Home
Assistant's TTS cache is cleared, so every answer is synthesized (otherwise the
repeated answer would come from HA's memory cache in both paths).

Idle CPU: CPU time of this process (Home Assistant and its threads; engines and
satellite are other processes) over ``--idle-seconds`` each with no satellite
owned, with VoiceStack's link connected to an idle satellite, and with HA's
wyoming satellite connected. Goal: VoiceStack adds no measurable load (pings
every 10 s): at most 0.2 % of one core above the baseline.

    .venv/bin/python -m bench.voice_latency [--runs 5] [--idle-seconds 30]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
import sys
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import figure, header, median, report, verdict
from devstack import speech
from devstack.engines import Engines, start_engines, warm_up
from devstack.errors import StackError
from devstack.home import HA_VERSION, Home, Owner
from devstack.home_config import HOUSE_REPORT_COMMAND, KITCHEN_COMMAND, KITCHEN_LIGHT
from devstack.runner import run_bench
from devstack.satellite import Satellite
from devstack.spoken_request import MicAudio, prepare_mic, spoken_request
from devstack.voice_run import VoiceRun, run_voice_command


@dataclass(frozen=True, slots=True)
class Reply:
    """A command, the reply it gets, and the goal for VoiceStack / stock."""

    name: str
    command: str
    sentences: int
    goal: float  # VoiceStack's median latency over the stock one, at most

    def check(self, run: VoiceRun) -> None:
        """The run did what the command asks (else its timing means nothing)."""
        if run.sentences != self.sentences:
            raise StackError(
                f"{run.owner.label}: expected {self.sentences} sentence(s), "
                f"got {run.answer!r} (heard {run.transcript!r})"
            )
        if self.command == KITCHEN_COMMAND and run.states_after[KITCHEN_LIGHT] != "on":
            raise StackError(f"{run.owner.label}: {KITCHEN_LIGHT} was not switched on")


REPLIES = (
    Reply("one sentence", KITCHEN_COMMAND, 1, 0.8),
    Reply("three sentences", HOUSE_REPORT_COMMAND, 3, 0.6),
)
OWNERS = (Owner.VOICESTACK, Owner.WYOMING)
IDLE_GOAL_PERCENT = 0.2  # of one core, above the baseline
IDLE_SETTLE_S = 3.0


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(
        prog="bench.voice_latency", description=__doc__.split("\n\n", 1)[0]
    )
    parser.add_argument(
        "--runs", type=int, default=5, help="measured runs per owner and reply"
    )
    parser.add_argument(
        "--idle-seconds",
        type=float,
        default=30.0,
        help="length of each idle CPU measurement; 0 skips it (default %(default)s)",
    )
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary dir (logs, WAVs)"
    )
    return parser.parse_args(argv)


# -- latency --------------------------------------------------------------------------


def order(index: int) -> tuple[Owner, ...]:
    """A B, B A, A B, ...: neither owner always runs first."""
    return OWNERS if index % 2 == 0 else OWNERS[::-1]


async def one_run(
    home: Home, owner: Owner, mic: MicAudio, reply: Reply, workdir: Path
) -> VoiceRun:
    """A fresh satellite hears ``mic`` while ``owner`` runs it."""
    await home.reset()
    async with Satellite.running(workdir, mic.path) as satellite:
        run = await run_voice_command(home, satellite, owner, mic)
    reply.check(run)
    return run


def stages(run: VoiceRun) -> tuple[float, float, float]:
    """End of speech -> VAD end -> transcript -> first audio, in seconds."""
    transcript_at = run.transcript_at if run.transcript_at is not None else run.vad_end
    return (
        run.vad_end - run.end_of_speech,
        transcript_at - run.vad_end,
        run.first_audio - transcript_at,
    )


def progress(label: str, run: VoiceRun) -> None:
    """One line per run, as it finishes."""
    vad, stt, respond = stages(run)
    report(
        f"  {label:<9} {run.owner.label:<10} {run.latency:5.2f} s = VAD {vad:4.2f} "
        f"+ STT {stt:4.2f} + answer {respond:4.2f} s: {run.answer!r}"
    )


async def measure_reply(
    home: Home, reply: Reply, mic: MicAudio, runs: int, workdir: Path
) -> dict[Owner, list[VoiceRun]]:
    """Warm-up run per owner, then ``runs`` measured runs per owner, alternating."""
    report(f"{reply.name}: {reply.command!r}")
    for owner in OWNERS:
        run = await one_run(home, owner, mic, reply, workdir / f"warm-{owner}")
        progress("warm-up", run)
    results: dict[Owner, list[VoiceRun]] = {owner: [] for owner in OWNERS}
    for index in range(runs):
        for owner in order(index):
            run = await one_run(home, owner, mic, reply, workdir / f"{index}-{owner}")
            results[owner].append(run)
            progress(f"run {index + 1}", run)
    return results


def table_rows(reply: Reply, results: dict[Owner, list[VoiceRun]]) -> None:
    """One Markdown row per owner: median, spread, and the medians of each stage."""
    for owner, runs in results.items():
        latencies = [run.latency for run in runs]
        split = [median(stage) for stage in zip(*map(stages, runs), strict=True)]
        report(
            f"| {reply.name} | {owner.label} | {median(latencies):.2f} s | "
            f"{min(latencies):.2f}-{max(latencies):.2f} s | "
            + " | ".join(f"{value:.2f} s" for value in split)
            + f" | {len(runs)} |"
        )


def ratio_verdict(reply: Reply, results: dict[Owner, list[VoiceRun]]) -> bool:
    """VoiceStack's median over the stock median, against the goal; True if met."""
    ours = median(run.latency for run in results[Owner.VOICESTACK])
    stock = median(run.latency for run in results[Owner.WYOMING])
    ok = ours / stock <= reply.goal
    figure(
        f"{reply.name}: VoiceStack median",
        ours,
        "s",
        anchor=("HA wyoming median", stock),
        goal=(f"ratio <= {reply.goal}", ok),
        precision=2,
    )
    # The VAD stage is Home Assistant's in both paths; what differs comes after.
    figure(
        f"{reply.name}, after the VAD end: VoiceStack median",
        median(run.first_audio - run.vad_end for run in results[Owner.VOICESTACK]),
        "s",
        anchor=(
            "HA wyoming median",
            median(run.first_audio - run.vad_end for run in results[Owner.WYOMING]),
        ),
        precision=2,
    )
    return ok


# -- idle CPU -------------------------------------------------------------------------


async def idle_percent(
    home: Home, owner: Owner | None, silence: MicAudio, seconds: float, workdir: Path
) -> float:
    """Home Assistant's CPU (% of one core) with ``owner`` running an idle satellite."""
    async with Satellite.running(workdir, silence.path) as satellite:
        entry = None
        if owner is not None:
            entry = await home.add_satellite(owner, satellite.port)
            await satellite.wait_for_state(
                "idle",
                after=0.0,
                timeout_s=15.0,
                what=f"run-satellite from {owner.label}",
            )
        try:
            await asyncio.sleep(IDLE_SETTLE_S)
            cpu, wall = time.process_time(), time.monotonic()
            await asyncio.sleep(seconds)
            return 100 * (time.process_time() - cpu) / (time.monotonic() - wall)
        finally:
            if entry is not None:
                await home.remove(entry)


async def measure_idle(
    home: Home, silence: MicAudio, seconds: float, workdir: Path
) -> bool:
    """Baseline, VoiceStack and stock idle CPU; True if VoiceStack adds nothing."""
    percent: dict[str, float] = {}
    for label, owner in (
        ("no satellite owned", None),
        ("VoiceStack", Owner.VOICESTACK),
        ("HA wyoming", Owner.WYOMING),
    ):
        percent[label] = await idle_percent(
            home, owner, silence, seconds, workdir / f"idle-{owner}"
        )
        report(f"| idle, {label} | {percent[label]:.3f} % of one core |")
    added = percent["VoiceStack"] - percent["no satellite owned"]
    ok = added <= IDLE_GOAL_PERCENT
    report(
        f"idle CPU added by VoiceStack's link: {added:+.3f} % of one core "
        f"(HA wyoming {percent['HA wyoming'] - percent['no satellite owned']:+.3f} %)"
        f" | goal <= +{IDLE_GOAL_PERCENT} %: {verdict(ok)}"
    )
    return ok


# -- the whole benchmark --------------------------------------------------------------


def make_mics(workdir: Path) -> tuple[dict[str, MicAudio], MicAudio]:
    """The spoken commands and a silent mic for the idle measurement (blocking)."""
    workdir.mkdir(parents=True, exist_ok=True)
    mics = {
        reply.name: prepare_mic(
            workdir / f"{reply.name.replace(' ', '-')}.wav",
            spoken_request(reply.command),
        )
        for reply in REPLIES
    }
    return mics, prepare_mic(workdir / "silence.wav", speech.silence(1.0))


async def start(
    stack: AsyncExitStack, workdir: Path
) -> tuple[Engines, Home, dict[str, MicAudio], MicAudio]:
    """Mics, engines and Home Assistant at once; the engines warmed up."""
    results = await asyncio.gather(
        asyncio.to_thread(make_mics, workdir / "mics"),
        start_engines(stack),
        stack.enter_async_context(Home.running(workdir / "config")),
        return_exceptions=True,
    )
    for result in results:
        if isinstance(result, BaseException):
            raise result
    (mics, silence), engines, home = results
    assert isinstance(engines, Engines)
    assert isinstance(home, Home)
    await warm_up(engines, mics[REPLIES[0].name].pcm)
    await home.set_up_assist(engines)
    return engines, home, mics, silence


async def bench(args: argparse.Namespace, workdir: Path) -> int:
    """Everything; returns the exit code (0 even when a goal is missed)."""
    header("Voice loop: end of speech -> first response audio at the satellite")
    report(
        f"Home Assistant {HA_VERSION}; {args.runs} runs per owner and reply after "
        "one warm-up each; TTS cache cleared before every run"
    )
    async with AsyncExitStack() as stack:
        _engines, home, mics, silence = await start(stack, workdir)
        all_results = {
            reply.name: await measure_reply(
                home, reply, mics[reply.name], args.runs, workdir / reply.name
            )
            for reply in REPLIES
        }
        idle_ok = None
        if args.idle_seconds > 0:
            report(f"idle CPU, {args.idle_seconds:.0f} s each:")
            idle_ok = await measure_idle(
                home, silence, args.idle_seconds, workdir / "idle"
            )
    report()
    report(
        "| reply | owner | median | min-max | end of speech -> VAD end "
        "| VAD end -> transcript | transcript -> first audio | runs |"
    )
    report("|---|---|---|---|---|---|---|---|")
    for reply in REPLIES:
        table_rows(reply, all_results[reply.name])
    verdicts = [ratio_verdict(reply, all_results[reply.name]) for reply in REPLIES]
    if idle_ok is not None:
        verdicts.append(idle_ok)
    header("after the run")  # the load average again: contention during the run
    report(f"goals met: {sum(verdicts)} of {len(verdicts)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; non-zero only when the stack itself fails."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_bench("voice_latency", args.keep, lambda workdir: bench(args, workdir))


if __name__ == "__main__":
    sys.exit(main())
