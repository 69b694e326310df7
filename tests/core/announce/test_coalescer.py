"""The coalescer: exact windows and idle flush; summaries, names, supersession."""

from __future__ import annotations

import itertools

from custom_components.voicestack.core.announce import (
    Announcement,
    AnnounceOptions,
    Priority,
)
from custom_components.voicestack.core.announce.coalescer import (
    CoalesceWindow,
    cap_names,
    compose,
)
from devstack.manual_clock import ManualClock
from devstack.reproducible import seeded

_seq = itertools.count()
OPTIONS = AnnounceOptions()


def window(clock: ManualClock, **options: object) -> tuple[CoalesceWindow, list[float]]:
    fired: list[float] = []
    opts = AnnounceOptions(**options)  # type: ignore[arg-type]
    return CoalesceWindow(clock, opts, lambda: fired.append(clock.now())), fired


def test_window_closes_exactly_two_seconds_after_the_first_message() -> None:
    clock = ManualClock(start=0.0)
    win, fired = window(clock)
    for _ in range(10):  # every 0.25 s: never idle for 0.3 s
        win.arrived()
        clock.advance(0.25)
    assert fired == [2.0]
    assert win.ready


def test_window_does_not_close_a_moment_early() -> None:
    clock = ManualClock(start=0.0)
    win, fired = window(clock)
    for _ in range(8):
        win.arrived()
        clock.advance(0.2499)
    clock.advance(1.9999 - clock.now())
    assert fired == []
    clock.advance(0.0001)
    assert fired == [2.0]


def test_idle_flush_exactly_300_ms_after_the_last_message() -> None:
    clock = ManualClock(start=0.0)
    win, fired = window(clock)
    win.arrived()
    clock.advance(0.1)
    win.arrived()
    clock.advance(0.299)
    assert fired == []
    clock.advance(0.001)
    assert fired == [0.4]


def test_flood_uses_one_timer() -> None:
    clock = ManualClock(start=0.0)
    win, _ = window(clock)
    for _ in range(100):
        win.arrived()
        clock.advance(0.001)
    assert clock.pending == 1


def test_idle_zero_waits_for_the_whole_window() -> None:
    clock = ManualClock(start=0.0)
    win, fired = window(clock, coalesce_idle_s=0)
    win.arrived()
    clock.advance(1.9)
    assert fired == []
    clock.advance(0.1)
    assert fired == [2.0]


def test_reset_opens_a_new_window_and_flush_now_is_immediate() -> None:
    clock = ManualClock(start=0.0)
    win, fired = window(clock)
    win.arrived()
    clock.advance(0.3)
    win.reset()
    assert not win.open
    clock.advance(1.0)
    win.arrived()
    win.flush_now()
    assert fired == [0.3, 1.3]
    assert clock.pending == 0


def msg(
    text: str,
    category: str = "general",
    priority: Priority = Priority.NORMAL,
) -> Announcement:
    seq = next(_seq)
    return Announcement(f"a{seq}", text, priority, category, "t", 0.0, 60.0, seq, text)


def test_a_lone_message_is_said_exactly_as_written() -> None:
    result = compose([msg("the washing machine is done, go get it")], OPTIONS)
    assert result.text == "the washing machine is done, go get it"
    assert result.stale == ()


def test_groups_by_category_most_important_first() -> None:
    items = [
        msg("Database", "init"),
        msg("Kitchen leak.", "error"),
        msg("Web server", "init"),
        msg("Cache", "init"),
    ]
    result = compose(items, OPTIONS)
    assert result.text == (
        "Kitchen leak. 3 components initialized: Database, Web server, Cache."
    )
    assert [a.text for a in result.items] == [
        "Kitchen leak.",
        "Database",
        "Web server",
        "Cache",
    ]


def test_message_priority_orders_before_category_priority() -> None:
    items = [msg("Disk full", "warning"), msg("Doorbell", "general", Priority.HIGH)]
    assert compose(items, OPTIONS).text == "Doorbell. Disk full."


def test_names_are_capped_at_three_with_and_n_more() -> None:
    items = [msg(f"Sensor {n} offline.", "error") for n in range(1, 6)]
    assert compose(items, OPTIONS).text == (
        "5 errors: Sensor 1 offline, Sensor 2 offline, Sensor 3 offline, and 2 more."
    )


def test_names_never_exceed_100_characters() -> None:
    long = "the front door of the house has been left open for more than ten minutes"
    items = [msg(f"{long} ({n})", "warning") for n in range(4)]
    text = compose(items, OPTIONS).text
    names = text.removeprefix("4 warnings: ").removesuffix(".")
    assert len(names) <= 100
    assert names.endswith(", and 3 more")


def test_cap_names_within_the_limit_for_any_lengths() -> None:
    rng = seeded(6)
    words = ["door", "window", "garage", "kitchen", "sensor", "temperature", "x" * 40]
    for _ in range(500):
        names = [
            " ".join(rng.choices(words, k=rng.randint(1, 12)))
            for _ in range(rng.randint(2, 8))
        ]
        max_chars = rng.randint(20, 120)
        capped = cap_names(names, rng.randint(1, 4), max_chars)
        assert len(capped) <= max_chars, (names, max_chars, capped)
        assert capped


def test_cap_names_cuts_a_single_long_name_at_a_word() -> None:
    capped = cap_names(["alpha beta gamma delta epsilon", "zeta"], 3, 24)
    assert capped == "alpha beta, and 1 more"


def test_shutdown_supersedes_ready() -> None:
    items = [
        msg("Lights", "ready"),
        msg("Heating", "ready"),
        msg("Going down", "shutdown"),
    ]
    result = compose(items, OPTIONS)
    assert result.text == "Going down"
    assert [a.text for a in result.stale] == ["Lights", "Heating"]


def test_events_are_never_stale() -> None:
    items = [
        msg("Pump failed", "error"),
        msg("Going down", "shutdown"),
        msg("Done", "progress"),
    ]
    result = compose(items, OPTIONS)
    assert result.text == "Going down. Pump failed."
    assert [a.text for a in result.stale] == ["Done"]


def test_progress_says_only_the_latest() -> None:
    items = [
        msg("10 percent", "progress"),
        msg("50 percent", "progress"),
        msg("90 percent", "progress"),
    ]
    result = compose(items, OPTIONS)
    assert result.text == "Progress: 90 percent."
    assert len(result.items) == 3  # the older ones are merged (coalesced), not lost


def test_health_summary_and_ready_names() -> None:
    assert compose(
        [msg("CPU ok", "health"), msg("Disk 90%", "health")], OPTIONS
    ).text == ("Health update: CPU ok; Disk 90%.")
    assert compose([msg("API", "ready"), msg("UI", "ready")], OPTIONS).text == (
        "System ready: API, UI."
    )


def test_templates_can_be_overridden() -> None:
    options = AnnounceOptions(
        templates={"error": "Trouble with {count} things: {names}!"}
    )
    text = compose([msg("Pump", "error"), msg("Fan", "error")], options).text
    assert text == "Trouble with 2 things: Pump, Fan!"
