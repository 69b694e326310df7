"""Reconnect delays: exponential, capped, with "equal jitter".

Pure arithmetic, no sleeping: the caller sleeps (``SatelliteLink`` through its
injected ``sleep``), so tests can check the exact sequence with a seeded RNG.

Why jitter: after Home Assistant restarts, or a Wi-Fi access point comes back,
every satellite loses and retries its connection at the same moment. Without
jitter they would keep reconnecting in lockstep. "Equal jitter" keeps half of the
exponential delay fixed (so the delay still grows and never collapses to ~0) and
draws the other half at random::

    d_n   = min(cap_s, base_s * 2**n)        # n = failures since the last reset
    delay = d_n / 2 + uniform(0, d_n / 2)    # in [d_n / 2, d_n]

Once ``d_n`` reaches the cap every delay is in ``[cap_s / 2, cap_s]``.

Without jitter (``jitter=False``) the delay is ``d_n`` itself: for retries no crowd
makes at once, e.g. the announcer trying a failed high-priority message again.
"""

from __future__ import annotations

import random

_MAX_EXPONENT = 64  # 2**64 times any sane base is far above any cap


class Backoff:
    """Delays between reconnect attempts; ``reset`` after a good connection."""

    def __init__(
        self,
        base_s: float = 1.0,
        cap_s: float = 30.0,
        rng: random.Random | None = None,
        *,
        jitter: bool = True,
    ) -> None:
        """``rng`` makes the jitter reproducible (tests); default: a fresh RNG."""
        if base_s <= 0:
            raise ValueError(f"base_s must be positive, got {base_s}")
        if cap_s < base_s:
            raise ValueError(f"cap_s ({cap_s}) must be at least base_s ({base_s})")
        self.base_s = base_s
        self.cap_s = cap_s
        # Jitter only spreads reconnects; it needs no cryptographic randomness.
        self._rng = rng or random.Random()  # noqa: S311
        self._jitter = jitter
        self._failures = 0

    @property
    def failures(self) -> int:
        """How many delays were handed out since the last ``reset``."""
        return self._failures

    def ceiling(self) -> float:
        """The upper bound of the next delay: ``min(cap_s, base_s * 2**n)``."""
        # Clamp the exponent: 2.0**n raises OverflowError past 1023 (a long outage).
        return min(self.cap_s, self.base_s * 2.0 ** min(self._failures, _MAX_EXPONENT))

    def next_delay(self) -> float:
        """The delay before the next attempt, in seconds (equal jitter, if any)."""
        ceiling = self.ceiling()
        self._failures += 1
        if not self._jitter:
            return ceiling
        half = ceiling / 2
        return half + self._rng.uniform(0, half)

    def reset(self) -> None:
        """Start again from ``base_s`` (after a connection that worked)."""
        self._failures = 0
