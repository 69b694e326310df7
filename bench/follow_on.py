"""Post-action follow-ons at natural gaps: both actions done, one answer heard.

After a turn that changed something ("Turn on the living room lamp."), the user
goes on: "Turn on the kitchen light." then, 0.3 to 1.2 s after its speech ends,
"and the fan too." (0.84 s of speech). A trial passes when the kitchen light and
the fan both went on during it and exactly one answer was played after the
first one, transcribed by whisper from what the satellite played (it names
both). Gaps
cycle through ``devstack.follow_on.NATURAL_GAPS_S``; Piper's own silence is cut.
Goal: at least 19 of 20 trials.

Anchor (same run): the same words in one breath, "Turn on the kitchen light and
the fan too.", where no gap can split anything.

Each trial: a fresh voicestack-satellite (``--mic-file``) owned by VoiceStack
with follow-up *always*, a real Home Assistant with Piper and whisper, and
``devstack.switching_agent`` as the agent (an LLM agent's tools; none runs here).

    scripts/ha-run .venv/bin/python -m bench.follow_on [--trials 20] [--anchor 5]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
import sys

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homeassistant.components.assist_pipeline import (
    async_get_pipeline,
    async_update_pipeline,
)
from homeassistant.components.conversation.agent_manager import get_agent_manager
from homeassistant.const import EVENT_STATE_CHANGED
from homeassistant.core import Event, EventStateChangedData, callback

from bench.common import figure, header, report
from custom_components.voicestack.const import EVENT_TURN
from devstack import follow_on, speech
from devstack.engines import start_engines, warm_up
from devstack.home import HA_VERSION, Home, Owner
from devstack.home_config import KITCHEN_LIGHT
from devstack.runner import run_bench
from devstack.satellite import Satellite
from devstack.spoken_request import MicAudio, prepare_mic, spoken_request
from devstack.switching_agent import SwitchingAgent, speech_words
from devstack.waiting import wait_for

AGENT_ID = "follow_on_bench"
FAN = "switch.fan"
DEVICES = {"living": "light.living_room_lamp", "kitchen": KITCHEN_LIGHT, "fan": FAN}
LEAD_IN_S = 6.0  # the entry reloads with follow-up "always" meanwhile
ANSWER_ROOM_S = 7.0  # the first answer is played and the window opens
ONE_BREATH = "Turn on the kitchen light and the fan too."
GOAL = 19  # of 20


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """``--trials`` of follow-ons, ``--anchor`` trials in one breath, ``--keep``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=20, help="follow-on trials")
    parser.add_argument("--anchor", type=int, default=5, help="one-breath trials")
    parser.add_argument("--keep", action="store_true", help="keep the work folder")
    args = parser.parse_args(argv)
    if args.trials < 1 or args.anchor < 1:
        parser.error("--trials and --anchor must be at least 1")
    return args


def make_mic(path: Path, follow: bytes) -> MicAudio:
    """The first action, room for its answer, then ``follow`` (blocking)."""
    pcm = (
        speech.silence(LEAD_IN_S)
        + spoken_request("Turn on the living room lamp.", trailing_s=ANSWER_ROOM_S)
        + follow
        + speech.silence(8.0)
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    return prepare_mic(path, pcm)


def heard_in(workdir: Path) -> list[list[str]]:
    """The words of every stream the satellite played, in order (blocking)."""
    played = sorted(
        workdir.glob("played.*.wav"), key=lambda p: int(p.stem.partition(".")[2])
    )
    return [speech_words(speech.transcribe(speech.read_wav_pcm(p))) for p in played]


async def one_trial(home: Home, name: str, mic: MicAudio, workdir: Path) -> bool:
    """A fresh satellite hears ``mic``; whether both devices went on, answered once."""
    await home.reset()
    turns: list[Event] = []
    switched_on: set[str] = set()

    @callback
    def went_on(event: Event[EventStateChangedData]) -> None:
        if (new := event.data["new_state"]) is not None and new.state == "on":
            switched_on.add(new.entity_id)

    unsubscribe = home.hass.bus.async_listen(EVENT_TURN, turns.append)
    unwatch = home.hass.bus.async_listen(EVENT_STATE_CHANGED, went_on)
    try:
        async with Satellite.running(workdir, mic.path) as satellite:
            entry = await home.add_satellite(Owner.VOICESTACK, satellite.port)
            try:
                await satellite.wait_for_state(
                    "idle", after=0.0, timeout_s=15.0, what="run-satellite"
                )
                home.hass.config_entries.async_update_entry(
                    entry, options={**entry.options, "follow_up_mode": "always"}
                )
                await asyncio.sleep(mic.seconds)  # the mic WAV plays in real time
                await wait_for(
                    lambda: not entry.runtime_data.hub.assist_in_progress,
                    30.0,
                    "the last answer",
                )
            finally:
                await home.remove(entry)
    finally:
        unsubscribe()
        unwatch()
    heard = await asyncio.to_thread(heard_in, workdir)
    ok = (
        {KITCHEN_LIGHT, FAN} <= switched_on
        and len(heard) == 2
        and {"kitchen", "fan"} <= set(heard[1])
    )
    said = [t.data["text"] for t in turns]
    states = home.device_states()
    on = [device for device in (KITCHEN_LIGHT, FAN) if states[device] == "on"]
    report(
        f"  {name:<10} {'ok  ' if ok else 'MISS'}"
        f" went on {sorted(switched_on & {KITCHEN_LIGHT, FAN})}"
        f" (on now {on}) turns {said!r}"
        f" heard {heard!r}"
    )
    return ok


async def bench(args: argparse.Namespace, workdir: Path) -> int:
    """Follow-on trials across the gaps, then the anchor; the figures and goal."""
    header("Post-action follow-ons: both actions done, one answer heard")
    gaps = [
        follow_on.NATURAL_GAPS_S[i % len(follow_on.NATURAL_GAPS_S)]
        for i in range(args.trials)
    ]
    report(f"Home Assistant {HA_VERSION}; gaps {sorted(set(gaps))} s; Piper joe")
    async with AsyncExitStack() as stack:
        mics_task = asyncio.gather(
            *(
                asyncio.to_thread(
                    make_mic,
                    workdir / "mics" / f"gap-{gap}.wav",
                    follow_on.follow_on(gap),
                )
                for gap in sorted(set(gaps))
            ),
            asyncio.to_thread(
                make_mic,
                workdir / "mics" / "one-breath.wav",
                follow_on.trimmed(speech.speak(ONE_BREATH)),
            ),
        )
        engines = await start_engines(stack)
        home = await stack.enter_async_context(Home.running(workdir / "config"))
        *gap_mics, breath = await mics_task
        mics = dict(zip(sorted(set(gaps)), gap_mics, strict=True))
        await warm_up(engines, breath.pcm)
        await home.set_up_assist(engines)
        get_agent_manager(home.hass).async_set_agent(
            AGENT_ID, SwitchingAgent(home.hass, DEVICES)
        )
        await async_update_pipeline(
            home.hass,
            async_get_pipeline(home.hass, home.pipeline_id),
            conversation_engine=AGENT_ID,
        )
        passed = 0
        for index, gap in enumerate(gaps):
            trial = workdir / f"follow-on-{index}"
            passed += await one_trial(home, f"gap {gap} s", mics[gap], trial)
        anchored = 0
        for index in range(args.anchor):
            trial = workdir / f"anchor-{index}"
            anchored += await one_trial(home, "one breath", breath, trial)
    report()
    goal = GOAL * args.trials / 20
    figure(
        "follow-ons done and answered once",
        100 * passed / args.trials,
        "%",
        detail=f" ({passed} of {args.trials})",
        anchor=("the same words in one breath", 100 * anchored / args.anchor),
        goal=(f"at least {GOAL} of 20", passed >= goal),
    )
    header("after the run")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; non-zero only when the stack itself fails."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_bench("follow_on", args.keep, lambda workdir: bench(args, workdir))


if __name__ == "__main__":
    sys.exit(main())
