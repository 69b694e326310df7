"""The announcer of all satellites: targets, receipts, threads, totals, invariant."""

from __future__ import annotations

import asyncio
from collections import Counter
import logging
import random
import threading

import pytest

from custom_components.voicestack.core.announce import (
    CATEGORIES,
    AnnounceError,
    AnnounceOptions,
    Announcer,
    DropReason,
    Priority,
    ReceiptStatus,
    SpeakerKind,
    Status,
)
from custom_components.voicestack.core.announce.metrics import summarize
from devstack.manual_clock import ManualClock
from devstack.reproducible import seeded

from .helpers import Events, SayRecorder, settle


def announcer_with(
    clock: ManualClock,
    names: tuple[str, ...] = ("kitchen", "office"),
    **options: object,
) -> tuple[Announcer, dict[str, SayRecorder], Events]:
    events = Events()
    announcer = Announcer(
        clock,
        options=AnnounceOptions(**options),  # type: ignore[arg-type]
        on_event=events,
        wall=clock.now,
    )
    recorders = {}
    for name in names:
        recorders[name] = SayRecorder(clock)
        announcer.add_speaker(name, recorders[name].say, recorders[name].stop)
    return announcer, recorders, events


async def test_every_target_gets_its_own_id_and_receipt() -> None:
    clock = ManualClock()
    announcer, recorders, _ = announcer_with(clock)
    receipts = announcer.announce("Dinner is ready", source="automation.dinner")
    assert [(r.speaker, r.status) for r in receipts] == [
        ("kitchen", ReceiptStatus.QUEUED),
        ("office", ReceiptStatus.QUEUED),
    ]
    assert len({r.id for r in receipts}) == 2
    only = announcer.announce("Office only", targets=["office"])
    assert [r.speaker for r in only] == ["office"]
    clock.advance(0.3)
    await settle()
    assert recorders["kitchen"].texts == ["Dinner is ready"]
    assert recorders["office"].texts == [
        "2 announcements: Dinner is ready, Office only."
    ]
    assert receipts[0].as_dict() == {
        "satellite": "kitchen",
        "id": receipts[0].id,
        "status": "queued",
        "reason": None,
    }


async def test_dropped_at_the_door_says_why() -> None:
    clock = ManualClock()
    announcer, _, _ = announcer_with(clock, names=("kitchen",))
    announcer.announce("Same", source="a")
    (receipt,) = announcer.announce("Same", source="b")
    assert (receipt.status, receipt.reason) == (ReceiptStatus.DROPPED, DropReason.DEDUP)


async def test_bad_input_raises_with_a_code() -> None:
    clock = ManualClock()
    announcer, _, _ = announcer_with(clock)
    with pytest.raises(AnnounceError) as info:
        announcer.announce("hi", targets=["garage"])
    assert (info.value.code, info.value.field) == ("unknown_target", "target")
    with pytest.raises(AnnounceError):
        announcer.announce("")
    with pytest.raises(AnnounceError):
        announcer.add_speaker(
            "kitchen", SayRecorder(clock).say, SayRecorder(clock).stop
        )


async def test_long_messages_are_truncated_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    announcer, recorders, _ = announcer_with(
        clock, names=("kitchen",), max_message_length=20
    )
    with caplog.at_level(logging.WARNING):
        (receipt,) = announcer.announce("word " * 10, source="automation.chatty")
    assert receipt.truncated
    assert "automation.chatty" in caplog.text
    clock.advance(0.3)
    await settle()
    assert recorders["kitchen"].texts == ["word word word word"]


async def test_announce_from_other_threads() -> None:
    clock = ManualClock()
    announcer, _, events = announcer_with(clock, rate_per_source=0, queue_max=1000)
    results: list[list] = []

    def producer(n: int) -> None:
        results.extend(
            announcer.announce(f"thread {n} message {m}", source=f"t{n}")
            for m in range(50)
        )

    threads = [threading.Thread(target=producer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    while any(thread.is_alive() for thread in threads):
        await asyncio.sleep(0.001)  # keep the loop turning for the hand-overs
    await settle()
    receipts = [r for batch in results for r in batch]
    assert len(receipts) == 400
    assert {r.status for r in receipts} == {ReceiptStatus.PENDING}
    assert len({r.id for r in receipts}) == 400
    totals = announcer.metrics().total
    assert (totals.received, totals.queue_depth) == (400, 400)
    clock.advance(2)
    await settle()
    heard = {i for e in events.of(Status.FINISHED) for i in e.ids}
    assert heard == {r.id for r in receipts}


async def test_bad_input_from_another_thread_raises_there() -> None:
    clock = ManualClock()
    announcer, _, _ = announcer_with(clock)
    errors: list[Exception] = []

    def producer() -> None:
        try:
            announcer.announce("hi", category="doorbell")
        except AnnounceError as err:
            errors.append(err)

    thread = threading.Thread(target=producer)
    thread.start()
    await asyncio.to_thread(thread.join)
    assert [e.code for e in errors] == ["unknown_category"]  # type: ignore[attr-defined]


async def test_metrics_per_satellite_and_total() -> None:
    clock = ManualClock()
    announcer, _, _ = announcer_with(clock)
    announcer.announce("one")
    announcer.announce("two", targets=["office"])
    clock.advance(0.3)
    await settle()
    metrics = announcer.metrics()
    assert metrics.satellites["kitchen"].spoken == 1
    assert metrics.satellites["office"].coalesced == 1
    assert (metrics.total.received, metrics.total.spoken, metrics.total.coalesced) == (
        3,
        2,
        1,
    )
    data = metrics.as_dict()
    assert data["total"]["dropped"]["overflow"] == 0
    assert data["satellites"]["office"]["received"] == 2


async def test_a_media_player_is_a_speaker_named_only_and_counted_apart() -> None:
    """Same rules as a satellite; no target means satellites; events and metrics say which."""
    clock = ManualClock()
    announcer, recorders, events = announcer_with(clock, names=("kitchen",))
    player = SayRecorder(clock)
    announcer.add_speaker(
        "media_player.den", player.say, player.stop, kind=SpeakerKind.MEDIA_PLAYER
    )
    everyone = announcer.announce("Dinner is ready")
    named = announcer.announce("Den only", targets=["media_player.den", "kitchen"])
    clock.advance(0.3)
    await settle()
    metrics = announcer.metrics()
    data = metrics.as_dict()

    assert [r.speaker for r in everyone] == ["kitchen"]
    assert [r.speaker for r in named] == ["media_player.den", "kitchen"]
    assert player.texts == ["Den only"]
    assert recorders["kitchen"].texts == ["2 announcements: Dinner is ready, Den only."]
    kinds = {(e.speaker, e.speaker_kind) for e in events.of(Status.FINISHED)}
    assert kinds == {
        ("kitchen", SpeakerKind.SATELLITE),
        ("media_player.den", SpeakerKind.MEDIA_PLAYER),
    }
    finished = events.of(Status.FINISHED)[0].as_dict()
    assert finished["speaker"] == finished["satellite"]
    assert finished["speaker_kind"] in {"satellite", "media_player"}
    assert list(metrics.satellites) == ["kitchen"]
    assert data["speakers"]["media_player.den"]["kind"] == "media_player"
    assert data["speakers"]["media_player.den"]["spoken"] == 1
    assert data["speakers"]["kitchen"]["kind"] == "satellite"
    assert metrics.total.received == 3
    await announcer.remove_speaker("media_player.den")
    assert [r.speaker for r in announcer.announce("Again")] == ["kitchen"]


async def test_set_options_reaches_every_satellite() -> None:
    clock = ManualClock()
    announcer, _, _ = announcer_with(clock)
    announcer.set_options(AnnounceOptions(queue_max=7))
    assert {s.options.queue_max for s in announcer.speakers.values()} == {7}
    with pytest.raises(AnnounceError):
        announcer.set_options(AnnounceOptions(queue_max=0))


async def test_remove_and_shutdown() -> None:
    clock = ManualClock()
    announcer, recorders, _ = announcer_with(clock, goodbye="Goodbye")
    announcer.announce("last words")
    await announcer.remove_speaker("office")
    assert recorders["office"].texts == ["last words"]  # flushed, no goodbye
    with pytest.raises(AnnounceError):
        announcer.announce("hi", targets=["office"])
    closing = asyncio.create_task(announcer.shutdown())
    await settle(3)
    (receipt,) = announcer.announce("too late")
    assert receipt.status is ReceiptStatus.REJECTED
    await closing
    assert recorders["kitchen"].texts == ["last words", "Goodbye"]
    assert announcer.announce("anyone?") == []


class FloodSpeaker(SayRecorder):
    """Ends calls at random: played, lost, stopped, failed, or left hanging a while."""

    def __init__(self, clock: ManualClock, rng: random.Random) -> None:
        """Decide with ``rng``."""
        super().__init__(clock, hold=True)
        self.rng = rng

    def step(self) -> None:
        """Maybe end the call in progress (one satellite says one thing at a time)."""
        if not self.waiting:
            return
        roll = self.rng.random()
        if roll < 0.5:
            return
        if roll < 0.85:
            self.finish("played", self.rng.random())
        elif roll < 0.92:
            self.finish("lost")
        elif roll < 0.96:
            self.finish("stopped")
        else:
            self.fail(RuntimeError("TTS down"))


@pytest.mark.parametrize("seed", range(8))
async def test_invariant_holds_under_a_random_flood(seed: int) -> None:
    rng = seeded(seed)
    clock = ManualClock()
    events = Events()
    announcer = Announcer(
        clock,
        options=AnnounceOptions(queue_max=rng.choice([5, 20, 50])),
        on_event=events,
        wall=clock.now,
    )
    speakers = {}
    for name in ("kitchen", "office", "garage"):
        speakers[name] = FloodSpeaker(clock, rng)
        announcer.add_speaker(name, speakers[name].say, speakers[name].stop)
    texts = [f"event {n}" for n in range(40)]
    for _ in range(600):
        action = rng.random()
        if action < 0.6:
            announcer.announce(
                rng.choice(texts),
                priority=rng.choices(list(Priority), weights=[6, 10, 50, 34])[0],
                category=rng.choice(CATEGORIES),
                source=f"source {rng.randrange(3)}",
                targets=rng.sample(sorted(speakers), rng.randint(1, 3)),
                ttl_s=rng.choice([None, 1.0, 20.0]),
            )
        elif action < 0.65:
            satellite = announcer.speakers[rng.choice(sorted(speakers))]
            satellite.set_online(not satellite.online)
        else:
            clock.advance(rng.choice([0.001, 0.01, 0.05, 0.3, 1.0, 3.0]))
        for speaker in speakers.values():
            speaker.step()
        await settle(rng.randint(0, 6))
        _check(announcer)
    for satellite in announcer.speakers.values():
        satellite.set_online(True)
    for _ in range(50):
        clock.advance(1.0)
        for speaker in speakers.values():
            speaker.rng = seeded(0)
            speaker.step()
        await settle()
        _check(announcer)
    satellites = list(announcer.speakers.values())
    closing = asyncio.create_task(announcer.shutdown())
    while not closing.done():
        clock.advance(1.0)
        for speaker in speakers.values():
            speaker.step()
        await settle()
    await closing
    for satellite in satellites:
        snap = satellite.snapshot()
        assert snap.balanced, snap
        assert snap.queued == 0
    # The flood went through most fates (so the invariant was really tested).
    total = summarize(s.parts() for s in satellites)
    assert sum(1 for n in total.dropped.values() if n) >= 5
    assert total.interrupts > 0
    assert total.coalesced > 0
    # Nothing was heard twice on a satellite, and every message has a fate.
    heard = Counter((e.speaker, i) for e in events.of(Status.FINISHED) for i in e.ids)
    assert max(heard.values(), default=1) == 1


def _check(announcer: Announcer) -> None:
    metrics = announcer.metrics()
    for name, snap in metrics.satellites.items():
        assert snap.balanced, (name, snap)
    assert metrics.total.balanced, metrics.total
