"""One satellite's announcer: bursts merged, the critical path, offline, shutdown.

``say``/``stop`` are recorders (the Speaker is tested against a real satellite
elsewhere); time is a ``ManualClock``, so every deadline is checked exactly.
"""

from __future__ import annotations

import asyncio

import pytest

from custom_components.voicestack.core.announce import (
    AnnounceRequest,
    DropReason,
    InterruptReason,
    Receipt,
    ReceiptStatus,
    SpeakerAnnouncer,
    Status,
)
from devstack.manual_clock import ManualClock

from .helpers import assert_balanced, satellite, settle


def say(
    announcer: SpeakerAnnouncer,
    text: str,
    priority: str = "normal",
    category: str = "general",
    source: str = "test",
    **kwargs: object,
) -> str:
    request = AnnounceRequest.create(
        text,
        priority=priority,
        category=category,
        source=source,
        **kwargs,  # type: ignore[arg-type]
    )
    receipt = announcer.submit(request)
    return receipt.id


async def test_a_burst_of_twenty_from_five_sources_is_one_utterance() -> None:
    clock = ManualClock(start=0.0)
    announcer, recorder, events = satellite(clock)
    for n in range(20):  # within 1 s
        say(announcer, f"Door {n} open", category="warning", source=f"s{n % 5}")
        clock.advance(0.05)
    await settle()
    assert recorder.calls == []
    clock.advance(2.0 - clock.now())  # the window closes 2 s after the first
    await settle()
    assert len(recorder.calls) == 1
    assert recorder.calls[0].at == 2.0
    assert recorder.texts[0] == (
        "20 warnings: Door 0 open, Door 1 open, Door 2 open, and 17 more."
    )
    snap = announcer.snapshot()
    assert (snap.received, snap.spoken, snap.coalesced, snap.queued) == (20, 1, 19, 0)
    assert [e.status for e in events.items] == [Status.STARTED, Status.FINISHED]
    assert len(events.items[0].ids) == 20
    assert events.items[1].text == recorder.texts[0]


async def test_a_lone_message_is_said_as_written_after_the_idle_time() -> None:
    clock = ManualClock(start=0.0)
    announcer, recorder, _ = satellite(clock)
    say(announcer, "the dishwasher is done")
    clock.advance(0.299)
    await settle()
    assert recorder.calls == []
    clock.advance(0.001)
    await settle()
    assert recorder.texts == ["the dishwasher is done"]


async def test_messages_arriving_while_busy_join_the_next_utterance() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True)
    say(announcer, "first")
    clock.advance(0.3)
    await settle()
    for n in range(3):
        say(announcer, f"later {n}", category="init")
        clock.advance(1.0)  # windows close while the first is still playing
    await settle()
    assert recorder.texts == ["first"]
    recorder.finish()
    await settle()
    assert recorder.texts[1] == "3 components initialized: later 0, later 1, later 2."
    recorder.finish()
    await settle()
    assert_balanced(announcer)


async def test_critical_interrupts_and_the_interrupted_is_not_requeued() -> None:
    clock = ManualClock()
    announcer, recorder, events = satellite(clock, hold=True)
    say(announcer, "Washer done")
    say(announcer, "Dryer done")
    clock.advance(0.3)
    await settle()
    normal = recorder.active
    critical_id = say(announcer, "Smoke in the kitchen", "critical", "critical")
    await settle()
    assert normal.cancelled
    assert len(recorder.stop_times) == 1
    assert recorder.active.text == "Smoke in the kitchen"
    assert recorder.active.ids == (critical_id,)
    recorder.finish()
    clock.advance(120)
    await settle()
    assert len(recorder.calls) == 2  # the interrupted pair is never said again
    snap = announcer.snapshot()
    assert snap.dropped[DropReason.STALE] == 2
    assert (snap.interrupts, snap.spoken, snap.queued) == (1, 1, 0)
    interrupted = events.of(Status.INTERRUPTED)
    assert [(e.ids, e.reason, e.outcome) for e in interrupted] == [
        (normal.ids, InterruptReason.CRITICAL, "stopped")
    ]
    assert_balanced(announcer)


async def test_critical_starts_only_once_stop_returned() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True)
    recorder.stop_gate = asyncio.get_running_loop().create_future()
    say(announcer, "Alarm", "critical")
    await settle()
    assert recorder.calls == []  # the satellite has not confirmed the stop yet
    recorder.stop_gate.set_result(None)
    await settle()
    assert recorder.texts == ["Alarm"]
    await recorder.finish_all()


async def test_criticals_arriving_meanwhile_merge_into_one() -> None:
    clock = ManualClock()
    announcer, recorder, events = satellite(clock, hold=True)
    say(announcer, "Doorbell", "critical")
    await settle()
    assert recorder.texts == ["Doorbell"]
    say(announcer, "Pump failed", "critical", "error")
    say(announcer, "Fan failed", "critical", "error", source="other")
    await settle()
    assert len(recorder.calls) == 1  # no critical interrupts a critical
    assert not recorder.calls[0].cancelled
    recorder.finish()
    await settle()
    assert recorder.texts[1] == "2 errors: Pump failed, Fan failed."
    recorder.finish()
    await settle()
    assert len(recorder.stop_times) == 2  # once before each critical utterance
    assert announcer.snapshot().interrupts == 0
    assert [len(e.ids) for e in events.of(Status.FINISHED)] == [1, 2]


async def test_no_critical_storm() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True, rate_per_source=0)
    say(announcer, "first alarm", "critical", "critical")
    await settle()
    for n in range(30):
        say(announcer, f"alarm {n}", "critical", "critical")
        clock.advance(0.01)
        await settle(2)
    recorder.finish()
    await settle()
    assert len(recorder.calls) == 2
    assert recorder.texts[1].startswith("30 critical alerts: alarm 0, alarm 1, alarm 2")
    assert recorder.texts[1].endswith(", and 27 more.")
    recorder.finish()
    await settle()
    snap = announcer.snapshot()
    assert (snap.spoken, snap.coalesced, snap.interrupts) == (2, 29, 0)


async def test_a_critical_while_stopping_joins_the_first_critical() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True)
    recorder.stop_gate = asyncio.get_running_loop().create_future()
    say(announcer, "Leak", "critical", "error")
    await settle()
    say(announcer, "Smoke", "critical", "error")
    recorder.stop_gate.set_result(None)
    await settle()
    assert recorder.texts == ["2 errors: Leak, Smoke."]
    await recorder.finish_all()


async def test_critical_shutdown_makes_queued_ready_stale() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True)
    say(announcer, "Lights", category="ready")
    say(announcer, "Going down", "critical", "shutdown")
    await settle()
    recorder.finish()
    clock.advance(5)
    await settle()
    assert recorder.texts == ["Going down"]
    assert announcer.snapshot().dropped[DropReason.STALE] == 1


async def test_offline_high_waits_and_is_said_once_normal_expires() -> None:
    clock = ManualClock()
    announcer, recorder, events = satellite(clock, online=False)
    high = say(announcer, "Garage open", "high")
    normal = say(announcer, "Mail came")
    clock.advance(59.999)
    await settle()
    assert announcer.queue_depth == 2
    clock.advance(0.001)
    assert [(e.ids, e.reason) for e in events.of(Status.DROPPED)] == [
        ((normal,), DropReason.TTL)
    ]
    clock.advance(200)
    announcer.set_online(True)
    await settle()
    assert recorder.texts == ["Garage open"]
    assert recorder.calls[0].ids == (high,)
    announcer.set_online(False)
    announcer.set_online(True)
    clock.advance(10)
    await settle()
    assert len(recorder.calls) == 1
    assert_balanced(announcer)


async def test_offline_high_is_dropped_after_its_ttl() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, online=False)
    say(announcer, "Garage open", "high")
    say(announcer, "Smoke", "critical", ttl_s=30)
    clock.advance(30)
    clock.advance(270)
    announcer.set_online(True)
    await settle()
    assert recorder.calls == []
    assert announcer.snapshot().dropped[DropReason.TTL] == 2


async def test_lost_mid_utterance_is_said_once_after_reconnect() -> None:
    clock = ManualClock()
    announcer, recorder, events = satellite(clock, hold=True)
    say(announcer, "Garage open", "high")
    say(announcer, "Mail came")
    clock.advance(0.3)
    await settle()
    first = recorder.finish("lost")
    await settle()
    assert not announcer.online  # the outcome says so before the glue does
    assert announcer.queue_depth == 2
    assert events.of(Status.INTERRUPTED)[-1].reason is InterruptReason.LOST
    clock.advance(5)
    announcer.set_online(True)
    await settle()
    assert recorder.active.ids == first.ids
    recorder.finish()
    clock.advance(60)
    await settle()
    assert len(recorder.calls) == 2
    finished = [i for e in events.of(Status.FINISHED) for i in e.ids]
    assert sorted(finished) == sorted(first.ids)
    assert_balanced(announcer)


async def test_lost_after_a_reconnect_does_not_mark_offline() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True)
    say(announcer, "hello")
    clock.advance(0.3)
    await settle()
    announcer.set_online(False)
    announcer.set_online(True)  # back before the old call reported "lost"
    recorder.finish("lost")
    await settle()
    assert announcer.online
    assert recorder.active.text == "hello"
    await recorder.finish_all()


async def test_speak_failure_drops_with_reason_failed_and_goes_on() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True)
    say(announcer, "one")
    clock.advance(0.3)
    await settle()
    recorder.fail(RuntimeError("TTS down"))
    await settle()
    say(announcer, "two")
    clock.advance(0.3)
    await settle()
    recorder.finish("empty")
    await settle()
    say(announcer, "three")
    clock.advance(0.3)
    await settle()
    recorder.finish("stopped")
    await settle()
    snap = announcer.snapshot()
    assert snap.dropped[DropReason.FAILED] == 2
    assert snap.dropped[DropReason.STALE] == 1
    assert_balanced(announcer)


async def test_a_failed_critical_is_tried_again_until_it_is_said() -> None:
    """TTS down for a few seconds: the critical is said once it is back."""
    clock = ManualClock()
    start = clock.now()
    announcer, recorder, events = satellite(clock, hold=True)
    say(announcer, "Smoke in the kitchen.", priority="critical")
    await settle()
    recorder.fail(RuntimeError("TTS down"))  # tried at 0 s
    await settle()
    assert recorder.waiting == []
    clock.advance(1.0)  # retried after 1 s
    await settle()
    recorder.finish("empty")  # the engine said nothing
    await settle()
    clock.advance(1.9)  # the next try waits 2 s
    await settle()
    assert len(recorder.calls) == 2
    clock.advance(0.1)
    await settle()
    recorder.finish("played")
    await settle()

    snap = announcer.snapshot()
    assert [call.at - start for call in recorder.calls] == [0.0, 1.0, 3.0]
    assert recorder.texts == ["Smoke in the kitchen."] * 3
    assert (snap.spoken, snap.retries, snap.dropped_total) == (1, 2, 0)
    assert [e.reason for e in events.of(Status.INTERRUPTED)] == ["failed", "failed"]
    assert len(events.of(Status.FINISHED)) == 1
    assert_balanced(announcer)


async def test_a_new_critical_does_not_wait_out_a_retry() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True)
    say(announcer, "Smoke in the kitchen.", priority="critical")
    await settle()
    recorder.fail(RuntimeError("TTS down"))
    await settle()
    say(announcer, "Water in the basement.", priority="critical")  # during the backoff
    await settle()

    assert recorder.texts[-1] == (
        "2 announcements: Smoke in the kitchen, Water in the basement."
    )
    await recorder.finish_all()
    assert announcer.snapshot().spoken == 1
    assert_balanced(announcer)


async def test_a_failing_high_gives_up_at_its_time_to_live() -> None:
    clock = ManualClock()
    start = clock.now()
    announcer, recorder, _ = satellite(clock, hold=True)
    say(announcer, "The door is open.", priority="high", ttl_s=10.0)
    clock.advance(0.3)
    await settle()
    while clock.now() < start + 20.0:
        if recorder.waiting:
            recorder.fail(RuntimeError("TTS down"))
        await settle()
        clock.advance(0.5)
        await settle()

    snap = announcer.snapshot()
    # Tried at 0.3, 1.3, 3.3, 7.3 s (backoff 1, 2, 4); the next would be at 15.3.
    assert [round(call.at - start, 1) for call in recorder.calls] == [
        0.3,
        1.3,
        3.3,
        7.3,
    ]
    assert snap.retries == 4
    assert snap.dropped[DropReason.TTL] == 1
    assert snap.spoken == 0
    assert_balanced(announcer)


async def test_the_next_utterance_is_synthesized_while_the_current_plays() -> None:
    """No pause between announcements: the next one's speech is started early."""
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True)
    say(announcer, "The dryer is done.")
    clock.advance(0.3)
    await settle()
    assert recorder.texts == ["The dryer is done."]  # playing now
    say(announcer, "The mail has arrived.", source="mailbox")
    say(announcer, "The door is open.", source="door")
    clock.advance(0.3)  # their window closes while the first still plays
    await settle()
    early = list(recorder.prefetched)
    recorder.finish()
    await settle()
    recorder.finish()
    await settle()

    assert early == [
        "The dryer is done.",  # alone: synthesized while its window waited
        "2 announcements: The mail has arrived, The door is open.",
    ]
    assert recorder.texts == early  # what was synthesized early is said
    assert_balanced(announcer)


async def test_a_lone_message_is_synthesized_early_as_cut() -> None:
    """Synthesis starts while the window waits, with the admitted (cut) text.

    The action used to start it with the text as given: a megabyte split into
    sentences on the event loop froze Home Assistant for minutes.
    """
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, hold=True, max_message_length=20)
    say(announcer, "Hello there. " * 1000)
    say(announcer, "A second one.", source="other")  # not alone: not early
    say(announcer, "Smoke!", "critical", source="alarm")  # no window to wait out
    await settle()

    assert recorder.prefetched == ["Hello there. Hello t"]
    await recorder.finish_all()


@pytest.mark.parametrize(
    ("outcome", "reason", "dropped_as"),
    [
        ("timeout", InterruptReason.TIMEOUT, DropReason.UNCONFIRMED),
        ("flushed", InterruptReason.STOPPED, DropReason.STALE),
        ("stopped", InterruptReason.STOPPED, DropReason.STALE),
    ],
)
async def test_only_a_confirmed_play_to_the_end_counts_as_spoken(
    outcome: str, reason: InterruptReason, dropped_as: DropReason
) -> None:
    """A playback the satellite did not confirm, or cut short, was not spoken.

    A timeout used to count as spoken although nobody knew what was heard.
    """
    clock = ManualClock()
    announcer, recorder, events = satellite(clock, hold=True)
    say(announcer, "hello")
    clock.advance(0.3)
    await settle()
    recorder.finish(outcome)
    await settle()

    snapshot = announcer.snapshot()
    assert snapshot.spoken == 0
    assert snapshot.dropped[dropped_as] == 1
    (interrupted,) = events.of(Status.INTERRUPTED)
    assert (interrupted.reason, interrupted.outcome) == (reason, outcome)
    assert events.of(Status.FINISHED) == []
    assert_balanced(announcer)


async def test_latency_from_announce_to_first_audio() -> None:
    clock = ManualClock(start=0.0)
    announcer, recorder, _ = satellite(clock, hold=True)
    for delay in (0.1, 0.2, 0.3, 0.4):
        say(announcer, f"message {delay}")
        clock.advance(0.3)
        await settle()
        recorder.finish(first_audio_delay_s=delay)
        await settle()
    snap = announcer.snapshot()
    assert snap.latency_p50_s == pytest.approx(0.5)  # 0.3 idle window + 0.2
    assert snap.latency_p95_s == pytest.approx(0.7)
    assert snap.last_spoken_at == pytest.approx(clock.now())


async def test_shutdown_flushes_the_batch_then_says_goodbye() -> None:
    clock = ManualClock(start=0.0)
    announcer, recorder, _ = satellite(clock, goodbye="VoiceStack is going away")
    say(announcer, "one")
    say(announcer, "two")
    await announcer.shutdown(goodbye=True)
    assert recorder.texts == ["2 announcements: one, two.", "VoiceStack is going away"]
    assert clock.now() == 0.0  # flushed at once, not after the window
    assert clock.pending == 0
    receipt = announcer.submit(AnnounceRequest.create("late"))
    assert receipt.status is ReceiptStatus.REJECTED
    assert announcer.snapshot().received == 3  # the goodbye counts; "late" not
    assert_balanced(announcer)


async def test_shutdown_is_bounded() -> None:
    clock = ManualClock(start=0.0)
    announcer, recorder, events = satellite(
        clock, hold=True, goodbye="Bye", shutdown_flush_s=5, goodbye_timeout_s=2
    )
    say(announcer, "stuck")
    say(announcer, "urgent", "critical")
    task = asyncio.create_task(announcer.shutdown(goodbye=True))
    await settle()
    assert recorder.texts == ["urgent"]  # the critical first; it never finishes
    clock.advance(5)
    await settle()
    assert recorder.calls[0].cancelled
    assert recorder.active.text == "Bye"
    clock.advance(2)
    await settle()
    assert task.done()
    await task
    reasons = [(e.status, e.reason) for e in events.items if e.reason is not None]
    assert reasons == [
        (Status.INTERRUPTED, InterruptReason.SHUTDOWN),
        (Status.DROPPED, DropReason.SHUTDOWN),
        (Status.INTERRUPTED, InterruptReason.SHUTDOWN),
    ]
    assert announcer.snapshot().dropped[DropReason.SHUTDOWN] == 3
    assert_balanced(announcer)


async def test_shutdown_offline_drops_at_once_without_goodbye() -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock, online=False, goodbye="Bye")
    say(announcer, "waiting", "high")
    await announcer.shutdown(goodbye=True)
    assert recorder.calls == []
    assert announcer.snapshot().dropped[DropReason.SHUTDOWN] == 1
    assert clock.pending == 0


async def test_shutdown_twice_waits_for_the_first() -> None:
    clock = ManualClock()
    announcer, _, _ = satellite(clock)
    await asyncio.gather(announcer.shutdown(), announcer.shutdown())


async def test_new_options_apply_to_the_next_window() -> None:
    clock = ManualClock(start=0.0)
    announcer, recorder, _ = satellite(clock)
    announcer.set_options(
        announcer.options.__class__(coalesce_idle_s=0, coalesce_window_s=1)
    )
    say(announcer, "soon")
    clock.advance(1)
    await settle()
    assert recorder.calls[0].at == 1.0


async def test_event_listener_errors_do_not_stop_the_announcer(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = ManualClock()
    announcer, recorder, _ = satellite(clock)

    def broken(_event: object) -> None:
        raise RuntimeError("listener bug")

    announcer._on_event = broken
    say(announcer, "still said")
    clock.advance(0.3)
    await settle()
    assert recorder.texts == ["still said"]
    assert "listener failed" in caplog.text


def receipt_of(
    announcer: SpeakerAnnouncer, text: str, priority: str = "normal"
) -> Receipt:
    return announcer.submit(AnnounceRequest.create(text, priority=priority))


async def test_each_receipt_settles_with_its_own_messages_fate() -> None:
    """The caller learns its message's fate from its receipt, not from events.

    A lost utterance is said again, so it settles nothing; the replay does. A
    message merged into another's utterance settles with that utterance, a
    message refused at the door is settled at once, one cut by a critical too.
    """
    clock = ManualClock()
    announcer, recorder, _events = satellite(clock, hold=True)
    garage = receipt_of(announcer, "Garage open", "high")
    mail = receipt_of(announcer, "Mail came")
    again = receipt_of(announcer, "Mail came")
    assert again.status is ReceiptStatus.DROPPED
    assert again.settled is not None
    assert again.settled.result() is Status.DROPPED
    assert garage.settled is not None
    assert mail.settled is not None
    clock.advance(0.3)
    await settle()
    recorder.finish("lost")
    await settle()
    assert not garage.settled.done()  # said again after reconnecting: not its end
    announcer.set_online(True)
    await settle()
    recorder.finish()
    await settle()
    assert garage.settled.result() is Status.FINISHED
    assert mail.settled.result() is Status.FINISHED
    washer = receipt_of(announcer, "Washer done")
    clock.advance(2)
    await settle()
    receipt_of(announcer, "Smoke in the kitchen", "critical")
    await settle()
    assert washer.settled is not None
    assert washer.settled.result() is Status.INTERRUPTED
    await recorder.finish_all()
