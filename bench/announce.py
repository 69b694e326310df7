"""Announcements: call -> first audio at the satellite, and a burst, VoiceStack vs stock.

VoiceStack (``voicestack.announce``) against ``assist_satellite.announce`` through
Home Assistant's built-in ``wyoming`` integration (the anchor), both driving the same
voicestack-satellite with the same Piper server and pipeline, in one run
(``devstack`` builds the stack, as for ``bench/voice_latency.py``). The
satellite has one owner at a time; every run starts a fresh satellite.

Between Home Assistant and the satellite sits a transparent Wyoming tap (a TCP
relay on loopback that parses what HA sends and stamps it with ``time.time()``), so
both owners are observed the same way, at the satellite's socket:

(b) latency: the time from the action call to the first ``audio-chunk`` reaching
    the satellite, for a two-sentence message; runs alternate between the owners
    (A B, B A, ...), one warm-up each, Home Assistant's TTS cache cleared before
    every run and a different text in every run pair. The satellite's own
    ``speaking`` state (``--event-command``, stamped when ``audio-start`` reaches
    it) is printed too: VoiceStack sends ``audio-start`` with its first chunk, but
    stock HA sends ``audio-start`` before it has synthesized anything, so for the
    stock path ``speaking`` is not "first audio". Goal: VoiceStack median / stock
    median <= 0.5.
(c) burst: 10 announcements from 3 sources within 0.9 s. Stock: each call is its own
    task awaiting ``assist_satellite.announce`` (as 10 automation runs would); counted
    are the calls that raised (``SatelliteBusyError`` etc.) and the streams the
    satellite actually played (its ``--snd-file`` WAVs). VoiceStack: every message's
    fate from the ``voicestack_announcement`` events (ids in ``finished`` events,
    whole or merged into a summary, vs ``dropped``), the utterances and the WAVs.
    The tap also counts the most streams ever open at once (overlap).

    .venv/bin/python -m bench.announce [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
import sys
import time
from typing import Any

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from homeassistant.core import Event
from wyoming.event import async_read_event, async_write_event

from bench.common import figure, header, median, report, verdict
from custom_components.voicestack.const import EVENT_ANNOUNCEMENT
from devstack import speech
from devstack.engines import start_engines, warm_up
from devstack.errors import StackError
from devstack.home import HA_VERSION, Home, Owner
from devstack.runner import run_bench
from devstack.satellite import Satellite
from devstack.servers import LOOPBACK
from devstack.spoken_request import MicAudio, prepare_mic
from devstack.waiting import wait_for

GOAL = 0.5  # VoiceStack's median latency over the stock one, at most
OWNERS = (Owner.VOICESTACK, Owner.WYOMING)
MESSAGES = (
    (
        "The washing machine has finished its cycle. "
        "Please empty it before the clothes start to smell."
    ),
    "The dishwasher is done. Please open the door so the dishes can dry.",
    (
        "The front door has been open for five minutes. "
        "Please close it to keep the heat inside."
    ),
    "Rain is expected within the hour. The laundry is still on the line outside.",
    "The freezer temperature is rising. Please check that its door is closed.",
    "The car has finished charging. It is ready for tomorrow's drive to work.",
    "The garage door is still open. It will close automatically in ten minutes.",
    "The postman has delivered a parcel. It is waiting on the front porch.",
)
BURST = (  # (source, category, message); one every BURST_STEP_S
    ("doors", "warning", "Front door opened"),
    ("laundry", "general", "The washing machine is done."),
    ("doors", "warning", "Back door opened"),
    ("weather", "general", "It starts raining in ten minutes."),
    ("doors", "warning", "Garage door opened"),
    ("laundry", "general", "The dryer is done."),
    ("weather", "general", "Wind gusts up to sixty kilometres per hour."),
    ("doors", "warning", "Patio door opened"),
    ("laundry", "general", "The iron is still on."),
    ("weather", "general", "The temperature is dropping below zero tonight."),
)
BURST_STEP_S = 0.1
CLAIM_TIMEOUT_S = 15.0
SETTLE_S = 2.0  # after the last play, for the satellite to write its last WAV


# -- the tap --------------------------------------------------------------------------


@dataclass(slots=True)
class Tap:
    """A Wyoming relay in front of the satellite; stamps what Home Assistant sends."""

    target_port: int
    port: int = 0
    starts: list[float] = field(default_factory=list)  # audio-start
    first_chunks: list[float] = field(default_factory=list)  # first chunk per stream
    max_open: int = 0  # most streams open at once, over all connections
    _open: int = 0
    _server: asyncio.Server | None = None
    _tasks: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> None:
        """Listen on a free loopback port."""
        self._server = await asyncio.start_server(self._connected, LOOPBACK, 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and relaying."""
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def first_chunk_after(self, at: float) -> float | None:
        """When the first audio chunk of a stream reached the satellite after ``at``."""
        return next((t for t in self.first_chunks if t >= at), None)

    async def _connected(
        self, ha_reader: asyncio.StreamReader, ha_writer: asyncio.StreamWriter
    ) -> None:
        try:
            sat_reader, sat_writer = await asyncio.open_connection(
                LOOPBACK, self.target_port
            )
        except OSError:
            ha_writer.close()
            return
        tasks = [
            asyncio.ensure_future(self._downstream(ha_reader, sat_writer)),
            asyncio.ensure_future(self._upstream(sat_reader, ha_writer)),
        ]
        self._tasks.update(tasks)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
                self._tasks.discard(task)
            for writer in (sat_writer, ha_writer):
                writer.close()

    async def _downstream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Home Assistant -> satellite, event by event, stamping the audio."""
        streaming = False  # this connection has a stream open
        chunk_seen = False
        try:
            while (event := await async_read_event(reader)) is not None:
                now = time.time()
                if event.type == "audio-start":
                    self.starts.append(now)
                    if not streaming:
                        self._open += 1
                        self.max_open = max(self.max_open, self._open)
                    streaming, chunk_seen = True, False
                elif event.type == "audio-chunk" and streaming and not chunk_seen:
                    self.first_chunks.append(now)
                    chunk_seen = True
                elif event.type == "audio-stop" and streaming:
                    self._open -= 1
                    streaming = False
                await async_write_event(event, writer)
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            if streaming:
                self._open -= 1

    @staticmethod
    async def _upstream(
        reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Satellite -> Home Assistant, bytes as they come."""
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except ConnectionError:
            pass


# -- a satellite owned by one integration ---------------------------------------------


@dataclass(slots=True)
class Owned:
    """A fresh satellite behind a tap, owned by one integration."""

    owner: Owner
    satellite: Satellite
    tap: Tap
    entity_id: str
    entry: Any
    events: list[dict[str, Any]]

    def played(self) -> int:
        """Streams the satellite played to the end (its numbered WAVs)."""
        return len(list(self.satellite.workdir.glob("played.*.wav")))


@dataclass(frozen=True, slots=True)
class Latency:
    """One announcement's timings, seconds after the action call."""

    owner: Owner
    first_chunk: float
    speaking: float
    done: float
    started: float | None = None  # VoiceStack's ``started`` event (batch flushed)


async def owned(
    stack: AsyncExitStack, home: Home, owner: Owner, silence: MicAudio, workdir: Path
) -> Owned:
    """Start a satellite and a tap, give the tap's port to ``owner``; undone by ``stack``."""
    satellite = await stack.enter_async_context(
        Satellite.running(workdir, silence.path)
    )
    tap = Tap(satellite.port)
    await tap.start()
    stack.push_async_callback(tap.close)
    entry = await home.add_satellite(owner, tap.port)
    stack.push_async_callback(home.remove, entry)
    await satellite.wait_for_state(
        "idle", after=0.0, timeout_s=CLAIM_TIMEOUT_S, what=f"{owner.label} claim"
    )
    if owner is Owner.VOICESTACK:
        await wait_for(
            lambda: entry.runtime_data.hub.connected, 10.0, "VoiceStack link up"
        )
    events: list[dict[str, Any]] = []

    def record(event: Event) -> None:
        events.append({**event.data, "at": time.time()})

    stack.callback(home.hass.bus.async_listen(EVENT_ANNOUNCEMENT, record))
    return Owned(
        owner,
        satellite,
        tap,
        home.entity_of(entry, "assist_satellite"),
        entry,
        events,
    )


async def stock_announce(home: Home, entity_id: str, message: str) -> None:
    """``assist_satellite.announce`` as an automation calls it (waits until played)."""
    await home.hass.services.async_call(
        "assist_satellite",
        "announce",
        {"entity_id": entity_id, "message": message},
        blocking=True,
    )


async def voicestack_announce(
    home: Home, message: str, **data: Any
) -> list[dict[str, Any]]:
    """``voicestack.announce``; the receipts (it returns once queued)."""
    response = await home.hass.services.async_call(
        Owner.VOICESTACK.value,
        "announce",
        {"message": message, **data},
        blocking=True,
        return_response=True,
    )
    assert response is not None
    return list(response["announcements"])


async def voicestack_idle(sat: Owned, timeout_s: float) -> None:
    """Until VoiceStack has nothing queued or playing for this satellite."""
    runtime = sat.entry.runtime_data
    await wait_for(
        lambda: (
            runtime.announcements.announcer.snapshot().queued == 0
            and not runtime.hub.speaker.busy
        ),
        timeout_s,
        "VoiceStack queue empty",
    )


# -- (b) latency ----------------------------------------------------------------------


async def latency_run(
    home: Home, owner: Owner, message: str, silence: MicAudio, workdir: Path
) -> Latency:
    """One announcement of ``message`` on a fresh satellite owned by ``owner``."""
    await home.reset()  # TTS cache empty
    async with AsyncExitStack() as stack:
        sat = await owned(stack, home, owner, silence, workdir)
        await asyncio.sleep(0.5)  # let the claim settle
        called = time.time()
        if owner is Owner.VOICESTACK:
            (receipt,) = await voicestack_announce(home, message)
            await wait_for(
                lambda: any(
                    e["status"] == "finished" and receipt["id"] in e["ids"]
                    for e in sat.events
                ),
                60.0,
                "VoiceStack announcement finished",
            )
        else:
            await stock_announce(home, sat.entity_id, message)
        done = time.time()
        first_chunk = sat.tap.first_chunk_after(called)
        started = next(
            (e["at"] - called for e in sat.events if e["status"] == "started"), None
        )
        speaking = await sat.satellite.wait_for_state(
            "speaking", after=called, timeout_s=5.0, what="speaking state"
        )
    if first_chunk is None:
        raise StackError(f"{owner.label}: no audio reached the satellite")
    return Latency(
        owner, first_chunk - called, speaking.at - called, done - called, started
    )


async def measure_latency(
    home: Home, runs: int, silence: MicAudio, workdir: Path
) -> dict[Owner, list[Latency]]:
    """One warm-up per owner, then ``runs`` per owner, alternating A B, B A, ..."""
    results: dict[Owner, list[Latency]] = {owner: [] for owner in OWNERS}
    texts = [MESSAGES[i % len(MESSAGES)] for i in range(runs + 1)]
    for index, text in enumerate(texts):
        order = OWNERS if index % 2 == 0 else OWNERS[::-1]
        for owner in order:
            run = await latency_run(
                home, owner, text, silence, workdir / f"b-{index}-{owner}"
            )
            label = "warm-up" if index == 0 else f"run {index}"
            report(
                f"  {label:<7} {owner.label:<10} first chunk {run.first_chunk:5.3f} s"
                f" | speaking {run.speaking:5.3f} s | call to done {run.done:5.2f} s"
                + ("" if run.started is None else f" | started {run.started:5.3f} s")
            )
            if index > 0:
                results[owner].append(run)
    return results


def latency_report(results: dict[Owner, list[Latency]]) -> bool:
    """Table, figures, verdict; True if the goal is met."""
    report()
    report(
        "| owner | first audio chunk, median | min-max | `speaking` state, median "
        "| call to done, median | runs |"
    )
    report("|---|---|---|---|---|---|")
    for owner, runs in results.items():
        first = [r.first_chunk for r in runs]
        report(
            f"| {owner.label} | {median(first):.3f} s | {min(first):.3f}-"
            f"{max(first):.3f} s | {median(r.speaking for r in runs):.3f} s | "
            f"{median(r.done for r in runs):.2f} s | {len(runs)} |"
        )
    ours = median(r.first_chunk for r in results[Owner.VOICESTACK])
    stock = median(r.first_chunk for r in results[Owner.WYOMING])
    ok = ours / stock <= GOAL
    figure(
        "(b) call -> first audio chunk at the satellite: VoiceStack median",
        ours,
        "s",
        anchor=("HA wyoming assist_satellite.announce median", stock),
        goal=(f"ratio <= {GOAL}", ok),
        precision=3,
    )
    waits = [r.started for r in results[Owner.VOICESTACK] if r.started is not None]
    if waits:
        report(
            f"VoiceStack split (medians): call -> `started` event (collect + merge "
            f"window, idle flush) {median(waits):.3f} s; `started` -> first chunk "
            f"(first sentence synthesized) "
            f"{median(r.first_chunk - (r.started or 0.0) for r in results[Owner.VOICESTACK]):.3f} s"
        )
    return ok


# -- (c) burst ------------------------------------------------------------------------


async def burst_stock(home: Home, silence: MicAudio, workdir: Path) -> dict[str, Any]:
    """10 concurrent ``assist_satellite.announce`` calls on HA's wyoming satellite."""
    await home.reset()
    async with AsyncExitStack() as stack:
        sat = await owned(stack, home, Owner.WYOMING, silence, workdir)
        await asyncio.sleep(0.5)
        started = time.time()
        tasks = []
        for index, (_source, _category, message) in enumerate(BURST):
            tasks.append(
                asyncio.ensure_future(stock_announce(home, sat.entity_id, message))
            )
            if index < len(BURST) - 1:
                await asyncio.sleep(BURST_STEP_S)
        called_s = time.time() - started
        outcomes = await asyncio.gather(*tasks, return_exceptions=True)
        await asyncio.sleep(SETTLE_S)
        errors = Counter(
            type(o).__name__ for o in outcomes if isinstance(o, BaseException)
        )
        return {
            "called_s": called_s,
            "ok": sum(not isinstance(o, BaseException) for o in outcomes),
            "errors": dict(errors),
            "played": sat.played(),
            "streams": len(sat.tap.starts),
            "max_open": sat.tap.max_open,
            "all_done_s": time.time() - started - SETTLE_S,
        }


async def burst_voicestack(
    home: Home, silence: MicAudio, workdir: Path
) -> dict[str, Any]:
    """The same 10 messages through ``voicestack.announce``."""
    await home.reset()
    async with AsyncExitStack() as stack:
        sat = await owned(stack, home, Owner.VOICESTACK, silence, workdir)
        await asyncio.sleep(0.5)
        started = time.time()
        receipts: list[dict[str, Any]] = []
        for index, (source, category, message) in enumerate(BURST):
            receipts += await voicestack_announce(
                home, message, source=source, category=category
            )
            if index < len(BURST) - 1:
                await asyncio.sleep(BURST_STEP_S)
        called_s = time.time() - started
        await voicestack_idle(sat, 120.0)
        all_done_s = time.time() - started
        await asyncio.sleep(SETTLE_S)
        snapshot = sat.entry.runtime_data.announcements.announcer.snapshot()
        ids = {r["id"] for r in receipts}
        finished = [e for e in sat.events if e["status"] == "finished"]
        heard = {i for e in finished for i in e["ids"]} & ids
        whole = {i for e in finished if len(e["ids"]) == 1 for i in e["ids"]} & ids
        dropped = Counter(
            e["reason"]
            for e in sat.events
            if e["status"] == "dropped" and set(e["ids"]) & ids
        )
        return {
            "called_s": called_s,
            "received": snapshot.received,
            "heard": len(heard),
            "whole": len(whole),
            "merged": len(heard - whole),
            "dropped": dict(dropped),
            "interrupted": sum(e["status"] == "interrupted" for e in sat.events),
            "utterances": [e["text"] for e in finished],
            "played": sat.played(),
            "streams": len(sat.tap.starts),
            "max_open": sat.tap.max_open,
            "balanced": snapshot.balanced,
            "all_done_s": all_done_s,
        }


def burst_report(stock: dict[str, Any], ours: dict[str, Any]) -> None:
    """The (c) table."""
    report()
    report(
        f"(c) burst: {len(BURST)} announcements from 3 sources, one every "
        f"{BURST_STEP_S * 1000:.0f} ms (called within {stock['called_s']:.2f} s "
        f"stock / {ours['called_s']:.2f} s VoiceStack)"
    )
    report(
        "| path | messages heard | calls failed | streams played (WAVs) "
        "| most streams open at once | all done after |"
    )
    report("|---|---|---|---|---|---|")
    errors = ", ".join(f"{n} {name}" for name, n in stock["errors"].items()) or "0"
    report(
        f"| HA wyoming `assist_satellite.announce` | {stock['played']} of {len(BURST)}"
        f" (one message per stream) | {sum(stock['errors'].values())} ({errors}) | "
        f"{stock['played']} | {stock['max_open']} | {stock['all_done_s']:.1f} s |"
    )
    dropped = ", ".join(f"{n} {why}" for why, n in ours["dropped"].items()) or "none"
    report(
        f"| VoiceStack `voicestack.announce` | {ours['heard']} of {len(BURST)} "
        f"({ours['whole']} whole, {ours['merged']} merged; dropped: {dropped}) | 0 | "
        f"{ours['played']} | {ours['max_open']} | {ours['all_done_s']:.1f} s |"
    )
    report(
        f"VoiceStack said {len(ours['utterances'])} utterance(s): "
        + " / ".join(repr(t) for t in ours["utterances"])
    )
    report(
        f"VoiceStack received {ours['received']}, interrupted {ours['interrupted']}, "
        f"metrics balanced: {ours['balanced']}"
    )


async def reachable_tts_urls(home: Home) -> None:
    """Make HA's own URL the loopback address its HTTP server listens on.

    The stock announce path hands ffmpeg an absolute TTS URL built from
    ``get_url``; unconfigured, that is the machine's LAN address, where the demo's
    server (``server_host: 127.0.0.1``) does not listen, and the announcement plays
    nothing without any error. Users have a reachable internal URL.
    """
    await home.hass.config.async_update(
        internal_url=f"http://{LOOPBACK}:{home.http_port}"
    )


# -- the whole benchmark --------------------------------------------------------------


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Command line."""
    parser = argparse.ArgumentParser(
        prog="bench.announce", description=__doc__.split("\n\n", 1)[0]
    )
    parser.add_argument("--runs", type=int, default=5, help="measured runs per owner")
    parser.add_argument(
        "--keep", action="store_true", help="keep the temporary dir (logs, WAVs)"
    )
    return parser.parse_args(argv)


async def bench(args: argparse.Namespace, workdir: Path) -> int:
    """Everything; returns the exit code (0 even when the goal is missed)."""
    header("Announcements: VoiceStack vs HA's wyoming assist_satellite.announce")
    report(
        f"Home Assistant {HA_VERSION}; {args.runs} runs per owner after one warm-up "
        "each; TTS cache cleared before every run"
    )
    async with AsyncExitStack() as stack:
        (workdir / "mics").mkdir(parents=True, exist_ok=True)
        silence = await asyncio.to_thread(
            prepare_mic, workdir / "mics" / "silence.wav", speech.silence(1.0)
        )
        engines, home = await asyncio.gather(
            start_engines(stack),
            stack.enter_async_context(Home.running(workdir / "config")),
        )
        await warm_up(engines, silence.pcm)
        await home.set_up_assist(engines)
        await reachable_tts_urls(home)
        report("(b) latency, two-sentence messages:")
        results = await measure_latency(home, args.runs, silence, workdir)
        stock = await burst_stock(home, silence, workdir / "c-stock")
        ours = await burst_voicestack(home, silence, workdir / "c-voicestack")
    ok = latency_report(results)
    burst_report(stock, ours)
    header("after the run")
    report(f"(b) goal: {verdict(ok)}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; non-zero only when the stack itself fails."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    return run_bench("announce", args.keep, lambda workdir: bench(args, workdir))


if __name__ == "__main__":
    sys.exit(main())
