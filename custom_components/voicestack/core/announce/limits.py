"""The two admission filters in front of the queue: rate per source and dedup.

Both are pure bookkeeping on times passed in by the caller (the collector reads
its ``Clock``), so a test can check exact boundaries. Both stay small under a
flood of distinct sources or texts: forgotten state is pruned as it expires.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Final

from .model import EPSILON_S

_PRUNE_AT: Final = 1024  # sources tracked before idle ones are forgotten


class TokenBuckets:
    """One token bucket per source: ``rate`` tokens/s, holding at most ``rate``.

    A source may send a burst of ``rate`` messages at once and then ``rate`` per
    second; a runaway automation is cut off without touching other sources. A
    rate of 0 lets everything through.
    """

    def __init__(self, rate: float) -> None:
        """Allow ``rate`` messages per second per source."""
        self.rate = rate
        self._buckets: dict[str, list[float]] = {}  # source -> [tokens, at]

    @property
    def capacity(self) -> float:
        """The burst size (at least one message)."""
        return max(1.0, self.rate)

    def allow(self, source: str, now: float) -> bool:
        """Take a token for ``source`` if it has one."""
        if self.rate <= 0:
            return True
        bucket = self._buckets.get(source)
        if bucket is None:
            if len(self._buckets) >= _PRUNE_AT:
                self._prune(now)
            self._buckets[source] = [self.capacity - 1.0, now]
            return True
        tokens = min(self.capacity, bucket[0] + (now - bucket[1]) * self.rate)
        bucket[1] = now
        if tokens < 1.0 - EPSILON_S:
            bucket[0] = tokens
            return False
        bucket[0] = max(0.0, tokens - 1.0)
        return True

    def _prune(self, now: float) -> None:
        """Forget sources whose bucket has refilled: they are as good as new."""
        full = [
            source
            for source, (tokens, at) in self._buckets.items()
            if tokens + (now - at) * self.rate >= self.capacity
        ]
        for source in full:
            del self._buckets[source]


class Deduplicator:
    """Remembers accepted keys for ``window_s``; a key seen again within is a dup.

    The window runs from the accepted message: repeats do not extend it, so a
    message repeated every second is said once every ``window_s``. A window of 0
    remembers nothing.
    """

    def __init__(self, window_s: float) -> None:
        """Treat a key as a duplicate for ``window_s`` after it was accepted."""
        self.window_s = window_s
        self._until: OrderedDict[str, float] = OrderedDict()  # key -> expiry

    def is_duplicate(self, key: str, now: float) -> bool:
        """Whether ``key`` was remembered less than ``window_s`` ago."""
        self._forget_expired(now)
        until = self._until.get(key)
        return until is not None and now + EPSILON_S < until

    def remember(self, key: str, now: float) -> None:
        """``key`` was accepted at ``now``."""
        if self.window_s <= 0:
            return
        self._until[key] = now + self.window_s
        self._until.move_to_end(key)

    def forget(self, key: str) -> None:
        """``key``'s message was never said (dropped): a retry is no repeat."""
        self._until.pop(key, None)

    def _forget_expired(self, now: float) -> None:
        # Keys are in the order they were remembered, so expired ones are in front
        # (unless the window was changed meanwhile: ``is_duplicate`` re-checks).
        until = self._until
        while until:
            key, expiry = next(iter(until.items()))
            if expiry > now + EPSILON_S:
                return
            del until[key]
