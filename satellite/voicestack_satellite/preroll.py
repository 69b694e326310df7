"""Ring buffer of recent mic audio, addressed by absolute sample index.

When the wake word ends at sample E, the request starts with the buffered audio
from E - preroll up to E and continues with live audio from E: the splice is
sample-exact by construction (no gap, no repeat). ``sent`` marks where the last
request's audio ended, so the next one (a fragment said right after it) starts
there at the earliest: nothing said between two requests is lost, and nothing
is sent twice.
"""

from __future__ import annotations

import numpy as np


class PrerollBuffer:
    """The last ``capacity`` samples of a stream."""

    def __init__(self, capacity: int) -> None:
        """Hold at most ``capacity`` samples."""
        self._capacity = capacity
        self._data = np.zeros(max(capacity, 1), dtype=np.int16)
        self._end = 0  # absolute index one past the newest sample
        self.sent = 0  # one past the last sample a request streamed

    @property
    def end(self) -> int:
        """Absolute index one past the newest sample."""
        return self._end

    def append(self, samples: np.ndarray) -> None:
        """Add samples at the end, forgetting the oldest beyond capacity."""
        if self._capacity == 0:
            self._end += len(samples)
            return
        if len(samples) >= self._capacity:
            self._data[:] = samples[-self._capacity :]
        else:
            self._data = np.roll(self._data, -len(samples))
            self._data[-len(samples) :] = samples
        self._end += len(samples)

    def since(self, start: int) -> np.ndarray:
        """Samples from absolute index ``start`` to the end (clipped to what is held)."""
        available = min(self._capacity, self._end)
        count = max(0, min(self._end - start, available))
        return (
            self._data[len(self._data) - count :].copy()
            if count
            else self._data[:0].copy()
        )
