"""Announcements on a media player: call -> ``play_media``, VoiceStack vs ``tts.speak``.

Both drive the same ``devstack.recording_player.RecordingPlayer`` (a real
``MediaPlayerEntity`` that records when ``play_media`` was called, on the loop's
clock, and when it had the audio) in one real Home Assistant started in-process
(``devstack.home``), with the same Piper server and pipeline:

- VoiceStack: ``voicestack.announce`` with the player as target. It waits for
  the merge window (300 ms without a new message), synthesizes the whole text
  (to know how long the player is busy), then calls ``play_media``.
- anchor: ``tts.speak`` with ``media_player_entity_id``: ``play_media`` at once,
  with a media source the player resolves, so synthesis happens while the
  player fetches the audio.

So two figures per path: call -> ``play_media`` and call -> audio at the player
(what a listener waits for, roughly). Runs alternate (A B, B A, ...), one warm-up
each, the TTS cache cleared before every run and a different text in every run
pair; each run waits until the player is idle again.

    .venv/bin/python -m bench.announce_media_player [--runs 10]
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
import statistics
import sys

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homeassistant.components.assist_pipeline import async_get_pipeline
from homeassistant.setup import async_setup_component

from bench.announce import MESSAGES
from bench.common import figure, header, median, report
from custom_components.voicestack.announce.service import DATA_ANNOUNCER
from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.core.announce.metrics import percentile
from devstack import speech
from devstack.engines import start_engines, warm_up
from devstack.home import HA_VERSION, Home
from devstack.recording_player import PlayCall, RecordingPlayer, add_players
from devstack.runner import run_bench
from devstack.waiting import wait_for

PATHS = ("voicestack.announce", "tts.speak")


async def voicestack_announce(home: Home, player: str, message: str) -> None:
    """``voicestack.announce`` on ``player`` (returns once queued)."""
    await home.hass.services.async_call(
        DOMAIN, "announce", {"message": message, "entity_id": player}, blocking=True
    )


async def tts_speak(home: Home, player: str, message: str) -> None:
    """``tts.speak`` on ``player`` with the pipeline's engine (returns after play_media)."""
    engine = async_get_pipeline(home.hass).tts_engine
    await home.hass.services.async_call(
        "tts",
        "speak",
        {"entity_id": engine, "media_player_entity_id": player, "message": message},
        blocking=True,
    )


async def one_run(
    home: Home,
    player: RecordingPlayer,
    path: str,
    message: str,
) -> tuple[PlayCall, float]:
    """One call on ``path``; its ``play_media`` and when the call was made."""
    await home.reset()  # TTS cache empty
    call: Callable[[Home, str, str], Awaitable[None]] = (
        voicestack_announce if path == PATHS[0] else tts_speak
    )
    before = len(player.calls)
    loop = asyncio.get_running_loop()
    called = loop.time()
    await call(home, player.entity_id, message)
    await wait_for(lambda: len(player.calls) > before, 60.0, f"{path} play_media")
    played = player.calls[before]
    await wait_for(
        lambda: home.hass.states.is_state(player.entity_id, "idle"), 60.0, "idle"
    )
    speaker = home.hass.data[DATA_ANNOUNCER].speakers.get(player.entity_id)
    await wait_for(lambda: speaker is None or speaker.idle, 60.0, "announcer idle")
    return played, called


def stats(values: list[float]) -> tuple[float, float]:
    """Median and nearest-rank 95th percentile."""
    return median(values), percentile(sorted(values), 95) or 0.0


async def bench(args: argparse.Namespace, workdir: Path) -> int:
    """Everything; returns the exit code."""
    header("Announcements on a media player: voicestack.announce vs tts.speak")
    report(
        f"Home Assistant {HA_VERSION}; {args.runs} runs per path after one warm-up "
        "each; TTS cache cleared before every run"
    )
    async with AsyncExitStack() as stack:
        engines, home = await asyncio.gather(
            start_engines(stack),
            stack.enter_async_context(Home.running(workdir / "config")),
        )
        await warm_up(engines, speech.silence(1.0))
        await home.set_up_assist(engines)
        assert await async_setup_component(home.hass, "media_player", {})
        assert await async_setup_component(home.hass, DOMAIN, {})
        player = RecordingPlayer("Bench")
        platform = await add_players(home.hass, [player])
        stack.push_async_callback(platform.async_reset)
        results: dict[str, list[tuple[float, float]]] = {path: [] for path in PATHS}
        for index in range(args.runs + 1):
            message = MESSAGES[index % len(MESSAGES)]
            order = PATHS if index % 2 == 0 else PATHS[::-1]
            for path in order:
                played, called = await one_run(home, player, path, message)
                play, ready = played.at - called, played.ready_at - called
                label = "warm-up" if index == 0 else f"run {index}"
                report(
                    f"  {label:<7} {path:<19} play_media {play:6.3f} s"
                    f" | audio at the player {ready:6.3f} s"
                    f" | audio {played.seconds:4.1f} s"
                )
                if index > 0:
                    results[path].append((play, ready))
    report()
    report(
        "| path | call -> play_media, median | p95 | call -> audio at player, median | p95 | runs |"
    )
    report("|---|---|---|---|---|---|")
    for path, runs in results.items():
        play50, play95 = stats([r[0] for r in runs])
        ready50, ready95 = stats([r[1] for r in runs])
        report(
            f"| {path} | {play50:.3f} s | {play95:.3f} s | {ready50:.3f} s "
            f"| {ready95:.3f} s | {len(runs)} |"
        )
    ours, anchor = results[PATHS[0]], results[PATHS[1]]
    for index, what in enumerate(("play_media", "audio at the player")):
        figure(
            f"call -> {what}: voicestack.announce median",
            statistics.median(r[index] for r in ours),
            "s",
            anchor=("tts.speak median", statistics.median(r[index] for r in anchor)),
            precision=3,
        )
    return 0


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(
        prog="bench.announce_media_player", description=__doc__.split("\n\n", 1)[0]
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
        "announce_media_player", args.keep, lambda workdir: bench(args, workdir)
    )


if __name__ == "__main__":
    sys.exit(main())
