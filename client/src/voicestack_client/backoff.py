"""Exponential backoff with jitter for reconnecting.

Many clients that lost the same Home Assistant (it restarted) must not all come
back in the same instant, so each delay is drawn at random below its
exponential ceiling; a successful connection starts the sequence again.

Why its own and not the integration's (``custom_components/voicestack/core/
backoff.py``): the client is a standalone package for other programs, with
aiohttp as its one dependency; it never imports Home Assistant's integration,
which is not installed where it runs. Its public ``Backoff`` arguments
(``initial_s``, ``max_s``, ``factor``, ``jitter``) are part of its API.
"""

from __future__ import annotations

from collections.abc import Callable
import random as _random


class Backoff:
    """Delays ``initial_s * factor**n`` capped at ``max_s``, minus random jitter.

    Attempt ``n`` (from 0) waits ``ceiling * (1 - jitter * r)`` seconds, where
    ``ceiling = min(max_s, initial_s * factor**n)`` and ``r`` is drawn from
    ``random`` in [0, 1): between ``(1 - jitter) * ceiling`` and ``ceiling``.
    """

    def __init__(
        self,
        *,
        initial_s: float = 1.0,
        max_s: float = 60.0,
        factor: float = 2.0,
        jitter: float = 0.5,
        random: Callable[[], float] = _random.random,
    ) -> None:
        """Check the parameters; ``random`` is injectable for exact tests."""
        if not initial_s > 0:
            raise ValueError(f"initial_s must be > 0, got {initial_s!r}")
        if not max_s >= initial_s:
            raise ValueError(f"max_s must be >= initial_s, got {max_s!r}")
        if not factor >= 1:
            raise ValueError(f"factor must be >= 1, got {factor!r}")
        if not 0 <= jitter <= 1:
            raise ValueError(f"jitter must be between 0 and 1, got {jitter!r}")
        self.initial_s = initial_s
        self.max_s = max_s
        self.factor = factor
        self.jitter = jitter
        self._random = random
        self._ceiling = initial_s

    def next_delay(self) -> float:
        """The delay before the next attempt; each call moves one attempt on."""
        ceiling = self._ceiling
        self._ceiling = min(self.max_s, ceiling * self.factor)
        return ceiling * (1 - self.jitter * self._random())

    def reset(self) -> None:
        """After a success: the next delay is the shortest again."""
        self._ceiling = self.initial_s
