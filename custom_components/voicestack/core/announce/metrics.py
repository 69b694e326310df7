"""Counters per speaker, summed for the total, with one invariant.

Every received message has exactly one fate, counted once::

    received = spoken + coalesced + dropped (all reasons) + queue_depth + in_flight

*spoken* counts utterances (a merged utterance's first message), *coalesced* the
other messages merged into one; *queue_depth* is what waits, *in_flight* what is
being said right now (the issue's "queued" is their sum, ``queued``). Counters
only grow, so sensors can use ``total_increasing``; the gauges are live values.

Latency is from ``announce`` to the first audio of the utterance that carried the
message (coalescing windows included: that is what a listener waits), over the
last ``LATENCY_SAMPLES`` messages heard.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import math
from typing import Any, Final

from .model import Announcement, DropReason

LATENCY_SAMPLES: Final = 1000


def _no_drops() -> dict[DropReason, int]:
    return dict.fromkeys(DropReason, 0)


@dataclass(slots=True)
class SpeakerMetrics:
    """The counters of one speaker (the orchestrator updates them)."""

    received: int = 0
    spoken: int = 0
    coalesced: int = 0
    interrupts: int = 0  # own utterances cut short by a critical
    retries: int = 0  # utterances of high/critical messages tried again
    dropped: dict[DropReason, int] = field(default_factory=_no_drops)
    last_spoken_at: float | None = None  # wall-clock (UNIX) time
    latencies_s: deque[float] = field(
        default_factory=lambda: deque(maxlen=LATENCY_SAMPLES)
    )

    def record_drop(self, reason: DropReason, count: int = 1) -> None:
        """``count`` messages dropped for ``reason``."""
        self.dropped[reason] += count

    def record_heard(
        self,
        items: Iterable[Announcement],
        first_audio_at: float | None,
        wall_now: float,
    ) -> None:
        """One utterance carrying ``items`` was said."""
        count = 0
        for item in items:
            count += 1
            if first_audio_at is not None and first_audio_at >= item.created_at:
                self.latencies_s.append(first_audio_at - item.created_at)
        self.spoken += 1
        self.coalesced += count - 1
        self.last_spoken_at = wall_now


@dataclass(frozen=True, slots=True)
class MetricsSnapshot:
    """Metrics at one moment, for one speaker or the total."""

    queue_depth: int
    in_flight: int
    received: int
    spoken: int
    coalesced: int
    dropped: Mapping[DropReason, int]
    interrupts: int
    retries: int
    last_spoken_at: float | None  # UNIX time
    latency_p50_s: float | None
    latency_p95_s: float | None

    @property
    def dropped_total(self) -> int:
        """Dropped for any reason."""
        return sum(self.dropped.values())

    @property
    def queued(self) -> int:
        """Waiting or being said: no fate yet."""
        return self.queue_depth + self.in_flight

    @property
    def balanced(self) -> bool:
        """The invariant holds."""
        return self.received == (
            self.spoken + self.coalesced + self.dropped_total + self.queued
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (HTTP view, diagnostics)."""
        return {
            "queue_depth": self.queue_depth,
            "in_flight": self.in_flight,
            "received": self.received,
            "spoken": self.spoken,
            "coalesced": self.coalesced,
            "dropped": {str(reason): n for reason, n in self.dropped.items()},
            "dropped_total": self.dropped_total,
            "interrupts": self.interrupts,
            "retries": self.retries,
            "last_spoken_at": self.last_spoken_at,
            "latency_p50_s": self.latency_p50_s,
            "latency_p95_s": self.latency_p95_s,
        }


def summarize(
    parts: Iterable[tuple[SpeakerMetrics, int, int]],
) -> MetricsSnapshot:
    """Add up ``(metrics, queue_depth, in_flight)`` of one or more speakers."""
    queue_depth = in_flight = received = spoken = coalesced = interrupts = 0
    retries = 0
    dropped = _no_drops()
    last: float | None = None
    latencies: list[float] = []
    for metrics, depth, flying in parts:
        queue_depth += depth
        in_flight += flying
        received += metrics.received
        spoken += metrics.spoken
        coalesced += metrics.coalesced
        interrupts += metrics.interrupts
        retries += metrics.retries
        for reason, count in metrics.dropped.items():
            dropped[reason] += count
        if metrics.last_spoken_at is not None:
            last = max(last or 0.0, metrics.last_spoken_at)
        latencies.extend(metrics.latencies_s)
    latencies.sort()
    return MetricsSnapshot(
        queue_depth=queue_depth,
        in_flight=in_flight,
        received=received,
        spoken=spoken,
        coalesced=coalesced,
        dropped=dropped,
        interrupts=interrupts,
        retries=retries,
        last_spoken_at=last,
        latency_p50_s=percentile(latencies, 50),
        latency_p95_s=percentile(latencies, 95),
    )


def percentile(ordered: list[float], pct: float) -> float | None:
    """Nearest-rank percentile of sorted values; None without values."""
    if not ordered:
        return None
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]
