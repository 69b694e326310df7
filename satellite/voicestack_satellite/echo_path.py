"""The mic as barge-in hears it: the satellite's own voice taken out.

Every block the player writes comes here with the loop time it reaches the
speaker; ``MicClock`` turns that time into a mic sample (the mic delivers its
chunks in real time), so the block lands on the mic's timeline where the mic
hears it. Then, per ``--echo-cancel``:

- ``aec``: WebRTC's AEC3 subtracts it (``echo_cancel.EchoCanceller``, from
  ``livekit`` or ``aec-audio-processing``);
- ``gate``: the mic is muted while the speaker is loud (``ReferenceGate``);
  Home Assistant's *Echo cancellation* switch off turns ``aec`` into this;
- ``external``: the mic is already echo-cancelled (PipeWire's echo-cancel
  source): nothing is done.

Both references are fed whatever the mode, so switching at run time is
seamless. The wake word and requests keep hearing the raw mic: only barge-in
detection, its capture and enrollment use what this returns.
"""

from __future__ import annotations

from collections import deque
import logging
from typing import Final

import numpy as np

from .audio import RATE
from .echo_cancel import EchoCancelError, EchoCanceller, ReferenceGate

_LOGGER = logging.getLogger(__name__)

MODES: Final = ("aec", "gate", "external")
FRAME: Final = 160  # 10 ms
ECHO_SPREAD_S: Final = 0.3  # the echo's delay and tail after the reference
# Then the room's reverberation dies away: 60 dB in 0.7 s (a reverberant room)
# at the slowest, per 10 ms window in amplitude.
TAIL_DECAY: Final = 10 ** (-60 / 0.7 / 100 / 20)
# A run of playback that starts after this much silence starts the speaker
# afresh: its start latency differs from the last run's by 10-20 ms (measured
# on a satellite in devstack.room.Room), so the echo's delay against the
# reference moves, and AEC3 takes up to about a second to find it again,
# leaving the echo only 8-10 dB down meanwhile (0 dB in one run). For
# ``SETTLE_S`` the echo may be ``SETTLE_DB`` louder than the reference says.
SETTLE_IDLE_S: Final = 0.1
SETTLE_S: Final = 1.0
SETTLE_DB: Final = 6.0


class MicClock:
    """Which mic sample the mic is at, at a given loop time.

    The mic's own clock is steady (16000 samples a second); what varies is how
    late each chunk is read (the loop was busy). A late read only makes a
    chunk look older than it is, so the earliest-looking reads of the last
    ``WINDOW`` chunks place the mic's timeline, and the echo's reference does
    not jitter with the load.
    """

    WINDOW = 256  # mic reads (about 5 s)

    def __init__(self) -> None:
        """Nothing heard yet."""
        self._offsets: deque[float] = deque(maxlen=self.WINDOW)

    def heard(self, end: int, now: float) -> None:
        """A chunk ending at mic sample ``end`` was read at loop time ``now``."""
        self._offsets.append(end - now * RATE)

    def sample_at(self, when: float) -> int:
        """The mic sample recorded at loop time ``when`` (0 before the mic began)."""
        if not self._offsets:
            return 0
        return round(max(self._offsets) + when * RATE)


def echo_cancel_available() -> bool:
    """Whether an echo canceller's package imports (the ``aec`` mode can run)."""
    try:
        EchoCanceller(0)
    except EchoCancelError:
        return False
    return True


class EchoPath:
    """Removes the played audio from the mic, as ``mode`` says."""

    def __init__(self, mode: str, player_rate: int, backend: str | None = None) -> None:
        """``mode``: one of ``MODES`` (``aec`` needs an optional package).

        ``backend``: the canceller's (``echo_cancel.BACKENDS``; None: the first
        installed). Raises ``EchoCancelError`` for ``aec`` without it.
        """
        if mode not in MODES:
            raise ValueError(f"echo cancel mode {mode!r} is not one of {MODES}")
        self.mode = mode
        self.clock = MicClock()
        self._ratio = RATE / player_rate
        self._phase = 0.0  # the next output sample's position in the input
        self._canceller = EchoCanceller(0, backend) if mode == "aec" else None
        self._gate = ReferenceGate(0)
        self._levels: deque[float] = deque(maxlen=round(ECHO_SPREAD_S * RATE / FRAME))
        self._tail = 0.0  # the echo's level dying away after the spread
        self.cancel = True  # Home Assistant's switch: off turns ``aec`` into the gate
        self._written_until = -RATE  # mic sample where the last block written ends
        self._settle = (0, 0)  # mic samples where the canceller re-finds the echo
        self.settle_s = SETTLE_S  # 0: no settling (the rule before; benches' anchor)
        self._at = 0  # mic sample of the last ``process``

    def echo_levels(self) -> np.ndarray:
        """Per 10 ms window of the last ``process``: how loud the echo may be there.

        The RMS of what the speaker played into that window and the
        ``ECHO_SPREAD_S`` before it (the room's delay and early reflections),
        at most, then dying away as the slowest room's reverberation does
        (``TAIL_DECAY``). What is left of the echo after cancellation is far
        below it, someone talking over the answer is not. In the first
        ``SETTLE_S`` of a run of playback after silence, ``SETTLE_DB`` more:
        the canceller is finding the echo's new delay.
        """
        if self.mode == "external":
            return np.zeros(0)
        reference = self._gate.last_reference.astype(np.float64)
        frames = len(reference) // FRAME
        levels = np.sqrt(
            np.mean(reference[: frames * FRAME].reshape(frames, FRAME) ** 2, axis=1)
        )
        out = np.empty(frames)
        for index, level in enumerate(levels):
            self._levels.append(level)
            self._tail = max(*self._levels, self._tail * TAIL_DECAY)
            out[index] = self._tail
        start, end = self._settle
        at = self._at + FRAME * np.arange(frames)
        out[(at >= start) & (at < end)] *= 10 ** (SETTLE_DB / 20)
        return out

    @property
    def backend(self) -> str | None:
        """The canceller's backend (``livekit``, ``aec3``); None: no canceller."""
        return None if self._canceller is None else self._canceller.backend

    @property
    def active(self) -> str:
        """What runs now: ``aec``, ``gate`` or ``external``."""
        if self.mode == "aec" and not self.cancel:
            return "gate"
        return self.mode

    def on_written(self, samples: np.ndarray, heard_at: float) -> None:
        """The player wrote ``samples`` (its rate); they sound at ``heard_at``."""
        if self.mode == "external":
            return
        reference = self._resample(samples)
        at = self.clock.sample_at(heard_at)
        if at > self._written_until + SETTLE_IDLE_S * RATE:  # the speaker restarts
            start, end = self._settle
            # The mic may not have reached the last run's settling yet (it lags
            # the player by a read or more): both count.
            start = start if end > self._at else at
            self._settle = (start, at + round(self.settle_s * RATE))
        # The last block's end, not the furthest: a block placed too far ahead
        # (the loop stalled under load) must not hide the next run's start.
        self._written_until = at + len(reference)
        self._gate.played(reference, at)
        if self._canceller is not None:
            self._canceller.played(reference, at)

    def process(self, mic: np.ndarray, at: int) -> np.ndarray:
        """The mic chunk starting at mic sample ``at``, its echo handled."""
        self._at = at
        if self.mode == "external":
            return mic
        gated = self._gate.process(mic, at)  # also lets its reference move on
        if self._canceller is None:
            return gated
        cancelled = self._canceller.process(mic, at)
        return cancelled if self.cancel else gated

    def _resample(self, samples: np.ndarray) -> np.ndarray:
        """Player-rate samples at 16 kHz, continuing the previous block's phase."""
        if self._ratio == 1.0:
            return samples
        step = 1.0 / self._ratio
        positions = np.arange(self._phase, len(samples), step)
        self._phase = (
            float(positions[-1] + step - len(samples))
            if len(positions)
            else (self._phase - len(samples))
        )
        out: np.ndarray = np.interp(
            positions, np.arange(len(samples)), samples.astype(np.float32)
        )
        return out.astype(np.int16)
