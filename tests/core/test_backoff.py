"""Reconnect delays: exponential, capped, equal jitter, reproducible with a seed."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.backoff import Backoff
from devstack.reproducible import seeded


def test_exact_sequence_with_a_seeded_rng() -> None:
    backoff = Backoff(base_s=1.0, cap_s=8.0, rng=seeded(42))

    delays = [backoff.next_delay() for _ in range(7)]

    # Ceilings 1, 2, 4, 8, 8, 8, 8; each delay is ceiling/2 + uniform(0, ceiling/2)
    # with Random(42)'s draws 0.639..., 0.025..., 0.275..., ...
    assert delays == pytest.approx(
        [0.819713, 1.025011, 2.550059, 4.892843, 6.945885, 6.706798, 7.568718],
        abs=1e-6,
    )


def test_each_delay_lies_in_the_upper_half_of_its_ceiling() -> None:
    backoff = Backoff(base_s=0.5, cap_s=30.0, rng=seeded(7))

    for n in range(200):
        ceiling = min(30.0, 0.5 * 2**n)
        assert backoff.ceiling() == ceiling
        delay = backoff.next_delay()
        assert ceiling / 2 <= delay <= ceiling


def test_saturated_delays_stay_between_half_the_cap_and_the_cap() -> None:
    backoff = Backoff(base_s=1.0, cap_s=30.0, rng=seeded(1))
    for _ in range(5):  # 1, 2, 4, 8, 16: the next ceiling is the cap
        backoff.next_delay()

    saturated = [backoff.next_delay() for _ in range(10_000)]

    assert min(saturated) >= 15.0
    assert max(saturated) <= 30.0
    # Jitter really spreads them: not all in lockstep near one value.
    assert max(saturated) - min(saturated) > 10.0


def test_a_very_long_outage_does_not_overflow() -> None:
    backoff = Backoff(base_s=1.0, cap_s=30.0, rng=seeded(3))

    delays = [backoff.next_delay() for _ in range(5_000)]

    assert backoff.failures == 5_000
    assert all(15.0 <= delay <= 30.0 for delay in delays[5:])


def test_reset_starts_again_from_the_base() -> None:
    backoff = Backoff(base_s=1.0, cap_s=30.0, rng=seeded(42))
    for _ in range(6):
        backoff.next_delay()
    assert backoff.failures == 6

    backoff.reset()

    assert backoff.failures == 0
    assert backoff.ceiling() == 1.0
    assert 0.5 <= backoff.next_delay() <= 1.0
    assert backoff.ceiling() == 2.0


def test_two_links_with_different_rngs_do_not_retry_in_lockstep() -> None:
    first = Backoff(rng=seeded(1))
    second = Backoff(rng=seeded(2))

    assert [first.next_delay() for _ in range(5)] != [
        second.next_delay() for _ in range(5)
    ]


def test_default_rng_and_defaults() -> None:
    backoff = Backoff()

    assert backoff.base_s == 1.0
    assert backoff.cap_s == 30.0
    assert 0.5 <= backoff.next_delay() <= 1.0


@pytest.mark.parametrize(("base_s", "cap_s"), [(0.0, 1.0), (-1.0, 1.0), (2.0, 1.0)])
def test_rejects_nonsense(base_s: float, cap_s: float) -> None:
    with pytest.raises(ValueError, match="base_s"):
        Backoff(base_s=base_s, cap_s=cap_s)


def test_without_jitter_each_delay_is_its_ceiling() -> None:
    """The announcer's retries: 1, 2, 4 … 30 s exactly, and 1 s after a reset."""
    backoff = Backoff(1.0, 30.0, jitter=False)
    assert [backoff.next_delay() for _ in range(7)] == [1, 2, 4, 8, 16, 30, 30]
    backoff.reset()
    assert backoff.next_delay() == 1
