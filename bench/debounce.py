"""Post-action debounce: end of the last fragment -> first answer audio.

After a turn that changed something, VoiceStack collects the next fragments
("Turn on the kitchen light." … 0.8 s … "And the living room lamp.") and sends
them to the agent as one request once the user paused ``quiet_s`` (1.5 s). The
price is that pause: the goal is at most ``quiet_s`` + 0.2 s over the same words
said as one request (the anchor), measured in the same run.

Each run: a fresh voicestack-satellite (``--mic-file``) owned by VoiceStack with
follow-up *always*, in a real Home Assistant with the default agent and real
Piper and whisper. The mic WAV: 6 s of silence (the options reload), the wake
word and a first command, 7 s for its answer, then the follow-up:

- debounce: "Turn off the kitchen light." first (an action: the buffer arms),
  then the two fragments 0.8 s apart;
- anchor: "What time is it?" first (no action: nothing is buffered), then
  "Turn on the kitchen light and the living room lamp." in one breath.

Measured (wall clock, one machine): the end of the last speech sample of the
WAV (the satellite's mic start, ±40 ms, plus its offset) to the first
``speaking`` state the satellite stamps after it (the answer's ``audio-start``
reached it). Runs alternate debounce / anchor; one warm-up each; everything off
and the TTS cache cleared before every run.

    .venv/bin/python -m bench.debounce [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
import sys

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homeassistant.core import Event

from bench.common import figure, header, median, report
from custom_components.voicestack.const import EVENT_TURN
from custom_components.voicestack.core.conversation.debounce import QUIET_S
from devstack import speech
from devstack.engines import start_engines, warm_up
from devstack.errors import StackError
from devstack.home import HA_VERSION, Home, Owner
from devstack.runner import run_bench
from devstack.satellite import Satellite
from devstack.spoken_request import MicAudio, prepare_mic, spoken_request
from devstack.voice_run import MIC_TICK_S
from devstack.waiting import wait_for

LEAD_IN_S = 6.0  # the entry reloads with follow-up "always" meanwhile
ANSWER_ROOM_S = 7.0  # the first answer is played and the window opens
FRAGMENT_PAUSE_S = 0.8
GOAL_OVER_S = 0.2


@dataclass(frozen=True, slots=True)
class Case:
    """One way of saying the follow-up."""

    name: str
    first: str  # the command after the wake word
    follow_up: tuple[str, ...]  # said one after another, FRAGMENT_PAUSE_S apart
    fragments: int  # what the follow-up turn must report


DEBOUNCE = Case(
    "debounce",
    "Turn off the kitchen light.",
    ("Turn on the kitchen light.", "And the living room lamp."),
    2,
)
ANCHOR = Case(
    "one request",
    "What time is it?",
    ("Turn on the kitchen light and the living room lamp.",),
    1,
)
CASES = (DEBOUNCE, ANCHOR)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """``--runs`` per case (after one warm-up), ``--keep`` the work folder."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="measured runs per case")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    return args


def make_mic(case: Case, workdir: Path) -> MicAudio:
    """The case's WAV (blocking: in a thread)."""
    follow_up = speech.silence(FRAGMENT_PAUSE_S).join(map(speech.speak, case.follow_up))
    pcm = (
        speech.silence(LEAD_IN_S)
        + spoken_request(case.first, trailing_s=ANSWER_ROOM_S)
        + follow_up
        + speech.silence(6.0)
    )
    workdir.mkdir(parents=True, exist_ok=True)
    return prepare_mic(workdir / f"{case.name.replace(' ', '-')}.wav", pcm)


async def one_run(home: Home, case: Case, mic: MicAudio, workdir: Path) -> float:
    """A fresh satellite hears ``mic``; seconds from its last speech to the answer."""
    await home.reset()
    turns: list[Event] = []
    unsubscribe = home.hass.bus.async_listen(EVENT_TURN, turns.append)
    try:
        async with Satellite.running(workdir, mic.path) as satellite:
            entry = await home.add_satellite(Owner.VOICESTACK, satellite.port)
            try:
                claimed = await satellite.wait_for_state(
                    "idle", after=0.0, timeout_s=15.0, what="run-satellite"
                )
                home.hass.config_entries.async_update_entry(
                    entry, options={**entry.options, "follow_up_mode": "always"}
                )
                end_of_speech = claimed.at + MIC_TICK_S / 2 + mic.speech_end_s
                first_audio = await satellite.wait_for_state(
                    "speaking",
                    after=end_of_speech,
                    timeout_s=mic.seconds + 30.0,
                    what="the answer to the follow-up",
                )
                # The turn's event comes once its answer was played.
                await wait_for(
                    lambda: any(t.data["turn"] == 2 for t in turns),
                    30.0,
                    "the follow-up turn's event",
                )
            finally:
                await home.remove(entry)
    finally:
        unsubscribe()
    follow_up = [t.data for t in turns if t.data["turn"] == 2]
    if not follow_up or follow_up[0]["fragments"] != case.fragments:
        raise StackError(f"{case.name}: the follow-up turn was {follow_up!r}")
    latency = first_audio.at - end_of_speech
    report(f"  {case.name:<12} {latency:5.2f} s  heard {follow_up[0]['text']!r}")
    return latency


async def bench(args: argparse.Namespace, workdir: Path) -> int:
    """Warm-up, then alternating runs; the figures and the goal."""
    header("Post-action debounce: end of the last fragment -> first answer audio")
    report(
        f"Home Assistant {HA_VERSION}; {args.runs} runs per case after one warm-up; "
        f"quiet {QUIET_S} s; fragments {FRAGMENT_PAUSE_S} s apart"
    )
    async with AsyncExitStack() as stack:
        mics_task = asyncio.gather(
            *(asyncio.to_thread(make_mic, case, workdir / "mics") for case in CASES)
        )
        engines = await start_engines(stack)
        home = await stack.enter_async_context(Home.running(workdir / "config"))
        mics = dict(zip(CASES, await mics_task, strict=True))
        await warm_up(engines, mics[ANCHOR].pcm)
        await home.set_up_assist(engines)
        for case in CASES:
            await one_run(home, case, mics[case], workdir / f"warm-{case.name}")
        results: dict[Case, list[float]] = {case: [] for case in CASES}
        for index in range(args.runs):
            for case in CASES if index % 2 == 0 else CASES[::-1]:
                run_dir = workdir / f"{index}-{case.name}"
                results[case].append(await one_run(home, case, mics[case], run_dir))
    debounced, anchor = median(results[DEBOUNCE]), median(results[ANCHOR])
    goal = QUIET_S + GOAL_OVER_S
    report()
    figure(
        "last fragment -> first answer audio (median)",
        debounced,
        "s",
        detail=f" ({min(results[DEBOUNCE]):.2f}-{max(results[DEBOUNCE]):.2f} s)",
        anchor=("the same words as one request", anchor),
        goal=(
            f"at most {goal:.1f} s over the anchor (quiet {QUIET_S} s + {GOAL_OVER_S} s)",
            debounced - anchor <= goal,
        ),
        precision=2,
    )
    header("after the run")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; non-zero only when the stack itself fails."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_bench("debounce", args.keep, lambda workdir: bench(args, workdir))


if __name__ == "__main__":
    sys.exit(main())
