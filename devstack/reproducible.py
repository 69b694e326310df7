"""Reproducible randomness for tests and benchmarks."""

from __future__ import annotations

import random


def seeded(seed: int) -> random.Random:
    """A reproducible RNG, e.g. for a backoff's jitter (no cryptography involved)."""
    return random.Random(seed)  # noqa: S311
