"""Announcements on another integration's assist satellite, and a mixed burst.

One real Home Assistant in-process (``devstack.home``) with Piper, a VoiceStack
satellite is not needed here: the device is
``devstack.recording_satellite.RecordingSatellite`` (an ESPHome-style
``AssistSatelliteEntity`` that Home Assistant's own announce reaches and that
plays the audio for its length). Two paths, alternating (A B, B A, ...), one
warm-up each, a new text each pair, the TTS cache cleared before every run:

- VoiceStack: ``voicestack.announce`` with the device as target (the merge
  window, then ``assist_satellite.announce`` on it);
- anchor: ``assist_satellite.announce`` called directly.

Per run: call -> the device has the audio, synthesized and decoded (what a
listener waits for, roughly), and
end of the audio -> the entity ``idle`` again (busy after its audio ended).
Then one mixed burst (three messages at once) on the device, a media player
(``RecordingPlayer``) and a stock Wyoming satellite (our satellite in stock mode
under Home Assistant's own ``wyoming`` integration, ``devstack.stock_satellite``,
fetching the message over Home Assistant's HTTP): what each played (the stock
one's audio transcribed), whether any call raised, and how long the stock
satellite's entity stayed busy after its audio ended.

    scripts/ha-run .venv/bin/python -m bench.announce_assist_satellite [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from contextlib import AsyncExitStack
from pathlib import Path
import statistics
import sys

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import Event, EventStateChangedData, callback
from homeassistant.helpers.event import async_track_state_change_event
from homeassistant.setup import async_setup_component

from bench.announce import MESSAGES
from bench.announce_media_player import stats
from bench.common import figure, header, report
from custom_components.voicestack.const import DOMAIN
from devstack import speech
from devstack.engines import start_engines, warm_up
from devstack.home import HA_VERSION, Home, Owner
from devstack.recording_player import RecordingPlayer, add_players
from devstack.recording_satellite import RecordingSatellite, add_satellites
from devstack.runner import run_bench
from devstack.stock_satellite import StockSatellite, hearing_silence
from devstack.waiting import wait_for

PATHS = ("voicestack.announce", "assist_satellite.announce")


async def one_run(
    home: Home, device: RecordingSatellite, path: str, message: str
) -> tuple[float, float]:
    """One call on ``path``: (call -> audio at the device, audio end -> idle)."""
    await home.reset()  # TTS cache empty
    idle_at: list[float] = []
    loop = asyncio.get_running_loop()

    @callback
    def changed(event: Event[EventStateChangedData]) -> None:
        new = event.data["new_state"]
        if new is not None and new.state == AssistSatelliteState.IDLE:
            idle_at.append(loop.time())

    unsubscribe = async_track_state_change_event(home.hass, [device.entity_id], changed)
    before = len(device.announced)
    called = loop.time()
    domain = DOMAIN if path == PATHS[0] else "assist_satellite"
    await home.hass.services.async_call(
        domain,
        "announce",
        {"message": message, "entity_id": device.entity_id},
        blocking=True,
    )
    await wait_for(lambda: len(device.announced) > before and idle_at, 60.0, "said")
    unsubscribe()
    said = device.announced[before]
    return said.ready - called, idle_at[-1] - said.ended


async def stock_satellite(
    home: Home, stack: AsyncExitStack, workdir: Path
) -> StockSatellite:
    """Our satellite in stock mode, added to Home Assistant's ``wyoming``."""
    process = await stack.enter_async_context(
        hearing_silence(workdir / "stock", "bench-stock")
    )
    entry = await home.add_satellite(Owner.WYOMING, process.port)
    stack.push_async_callback(home.remove, entry)  # before the process stops
    entity_id = home.entity_of(entry, "assist_satellite")
    await wait_for(
        lambda: home.hass.states.get(entity_id).state == AssistSatelliteState.IDLE,  # type: ignore[union-attr]
        30.0,
        "the stock satellite connected",
    )
    return StockSatellite(entity_id, process, home.entity_states)


async def mixed_burst(
    home: Home,
    device: RecordingSatellite,
    player: RecordingPlayer,
    stock: StockSatellite,
) -> None:
    """Three messages at once on all three; each hears the merged text once."""
    errors = 0
    targets = [device.entity_id, player.entity_id, stock.entity_id]
    for door in ("Front", "Back", "Garage"):
        try:
            await home.hass.services.async_call(
                DOMAIN,
                "announce",
                {
                    "message": f"{door} door opened",
                    "category": "warning",
                    "source": door,
                    "entity_id": targets,
                },
                blocking=True,
            )
        except Exception:  # noqa: BLE001 - counted: the goal is none
            errors += 1
    await wait_for(
        lambda: bool(device.announced and player.calls and stock.played()),
        60.0,
        "the burst",
    )
    await asyncio.sleep(3.0)  # anything said twice would come within this
    report(f"mixed burst: device said {[a.message for a in device.announced]}")
    report(f"mixed burst: player played {len(player.calls)} time(s); errors {errors}")
    report(f"mixed burst: stock Wyoming satellite heard {stock.heard()}")
    report(
        "mixed burst: stock satellite busy after its audio ended "
        f"{stock.busy_after_played_s():.3f} s (negative: idle before the end)"
    )
    states = {
        e: home.hass.states.get(e).state  # type: ignore[union-attr]
        for e in targets
    }
    report(f"mixed burst: states after {states}")


async def bench(args: argparse.Namespace, workdir: Path) -> int:
    """Everything; returns the exit code."""
    header("Announcements on another integration's assist satellite")
    report(f"Home Assistant {HA_VERSION}; {args.runs} runs per path after a warm-up")
    async with AsyncExitStack() as stack:
        engines, home = await asyncio.gather(
            start_engines(stack),
            stack.enter_async_context(Home.running(workdir / "config")),
        )
        await warm_up(engines, speech.silence(1.0))
        await home.set_up_assist(engines)
        for component in ("assist_satellite", "media_player", DOMAIN):
            assert await async_setup_component(home.hass, component, {})
        device = RecordingSatellite("Bench")
        satellites = await add_satellites(home.hass, [device])
        stack.push_async_callback(satellites.async_reset)
        results: dict[str, list[tuple[float, float]]] = {path: [] for path in PATHS}
        for index in range(args.runs + 1):
            message = MESSAGES[index % len(MESSAGES)]
            for path in PATHS if index % 2 == 0 else PATHS[::-1]:
                heard, busy_after = await one_run(home, device, path, message)
                label = "warm-up" if index == 0 else f"run {index}"
                report(
                    f"  {label:<7} {path:<25} audio at the device {heard:6.3f} s"
                    f" | busy after its end {busy_after:6.3f} s"
                )
                if index > 0:
                    results[path].append((heard, busy_after))
        player = RecordingPlayer("Bench player")
        players = await add_players(home.hass, [player])
        stack.push_async_callback(players.async_reset)
        stock = await stock_satellite(home, stack, workdir)
        device.announced.clear()
        await mixed_burst(home, device, player, stock)
    report()
    report(
        "| path | call -> audio at the device, median / p95 | busy after its end, max |"
    )
    report("|---|---|---|")
    for path, runs in results.items():
        heard50, heard95 = stats([r[0] for r in runs])
        report(
            f"| {path} | {heard50:.3f} / {heard95:.3f} s "
            f"| {max(r[1] for r in runs):.3f} s |"
        )
    ours, anchor = results[PATHS[0]], results[PATHS[1]]
    figure(
        "call -> audio at the device: voicestack.announce median",
        statistics.median(r[0] for r in ours),
        "s",
        anchor=(
            "assist_satellite.announce median",
            statistics.median(r[0] for r in anchor),
        ),
        precision=3,
    )
    return 0


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(
        prog="bench.announce_assist_satellite", description=__doc__.split("\n\n", 1)[0]
    )
    parser.add_argument("--runs", type=int, default=10, help="measured runs per path")
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary dir (logs)"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; non-zero only when the stack itself fails."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_bench(
        "announce_assist_satellite", args.keep, lambda workdir: bench(args, workdir)
    )


if __name__ == "__main__":
    sys.exit(main())
