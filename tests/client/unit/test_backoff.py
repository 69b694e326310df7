"""Reconnect delays: exponential, capped, jittered within bounds, reset on success."""

from __future__ import annotations

from collections.abc import Callable, Iterable
import random
from typing import Any

import pytest

from voicestack_client import Backoff


def draws(values: Iterable[float]) -> Callable[[], float]:
    """A random source that returns ``values`` in turn."""
    it = iter(values)
    return lambda: next(it)


def test_delays_grow_by_the_factor_up_to_the_cap() -> None:
    backoff = Backoff(initial_s=1, max_s=10, factor=2, jitter=0.5, random=lambda: 0.0)

    assert [backoff.next_delay() for _ in range(7)] == [1, 2, 4, 8, 10, 10, 10]


def test_jitter_takes_off_at_most_its_fraction_of_the_ceiling() -> None:
    backoff = Backoff(
        initial_s=2, max_s=60, factor=2, jitter=0.25, random=draws([0.0, 0.5, 1.0])
    )

    assert [backoff.next_delay() for _ in range(3)] == [2.0, 3.5, 6.0]


def test_random_delays_stay_within_their_bounds() -> None:
    jitter = 0.5
    backoff = Backoff(
        initial_s=0.5,
        max_s=30,
        jitter=jitter,
        random=random.Random(7).random,  # noqa: S311 (not security)
    )
    ceilings = [min(30.0, 0.5 * 2**n) for n in range(40)]
    delays = [backoff.next_delay() for _ in ceilings]

    assert all(
        (1 - jitter) * top <= delay <= top
        for delay, top in zip(delays, ceilings, strict=True)
    )
    assert len(set(delays)) == len(delays)  # jittered: no two clients in lockstep


def test_a_success_starts_the_sequence_again() -> None:
    backoff = Backoff(initial_s=1, max_s=60, jitter=0, random=lambda: 0.5)
    before = [backoff.next_delay() for _ in range(4)]
    backoff.reset()

    assert before == [1, 2, 4, 8]
    assert backoff.next_delay() == 1


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"initial_s": 0}, "initial_s must be > 0"),
        ({"initial_s": 5, "max_s": 1}, "max_s must be >= initial_s"),
        ({"factor": 0.5}, "factor must be >= 1"),
        ({"jitter": 1.5}, "jitter must be between 0 and 1"),
    ],
)
def test_bad_parameters_are_refused(kwargs: dict[str, Any], error: str) -> None:
    with pytest.raises(ValueError, match=error):
        Backoff(**kwargs)
