"""What a room's mic hears, chunk by chunk: the sound side of ``devstack.room``.

``devstack.room.Room`` keeps time (the event loop, the satellite's sockets); an
air here turns what the speaker played and what people said into the mic's
samples, one 80 ms chunk at a time, with no clock of its own, so the same
input and seed give the same mic bytes (tests/devstack/test_room_harness.py).

Two airs: ``SimpleAir``, the first room's arithmetic unchanged (the echo a fixed
delay later at a fixed gain, voices as they are), and ``ShoeboxAir``, a
preset's room (``devstack.room_presets``):

- the speaker plays what it gets as a sound card does, back to back from when
  it was idle, compressing loud samples (tanh) past ``clip_dbfs``;
- the echo is the played samples convolved with the speaker's impulse response
  (overlap-add: each block's response, tail and all, is added to the future);
- the mic samples it on its own clock, ``drift_ppm`` faster than the
  speaker's: mic sample n hears speaker position n / (1 + ppm 1e-6), read
  between samples with a windowed sinc, so the echo slides against what the
  satellite thinks it played, as with a USB mic and a separate speaker;
- a voice is convolved with its position's response; noise (a fan, or
  babble at the TV's position) is added at its level.

Positions: speaker positions count 16 kHz samples of the event loop's clock
since the mic's first sample; mic positions count the mic's own samples.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from devstack import room_presets
from devstack.room_presets import RATE, Preset

CHUNK = 1280  # 80 ms: the satellite's mic chunk
HALF = 16  # the sinc interpolator reads this many samples either side
VOICE_RMS_AT_1M = 32768 * 10 ** (-20 / 20)  # a voice at -20 dBFS RMS at 1 m


class Air(Protocol):
    """The mic's side of a room."""

    written: int  # mic samples taken so far
    rate: float  # mic samples per second of the event loop's clock

    def play(self, at: float, samples: np.ndarray) -> None:
        """The speaker got ``samples`` (int16) at speaker position ``at``."""

    def voice(self, start: int, samples: np.ndarray, source: str) -> int:
        """Someone at ``source`` says ``samples`` from mic position ``start``.

        Returns how many samples later the mic hears its direct sound.
        """

    def jitter(self) -> float:
        """How late (seconds) the next chunk reaches the satellite."""

    def take(self, count: int = CHUNK) -> np.ndarray:
        """The next ``count`` mic samples, int16."""


class _Future:
    """Samples still to be heard, from a position on; added to, taken in order."""

    def __init__(self) -> None:
        self.data = np.zeros(0, dtype=np.float64)
        self.origin = 0

    def add(self, start: int, samples: np.ndarray) -> None:
        """Mix ``samples`` in from ``start``; what is before the origin is past."""
        skip = max(0, self.origin - start)
        samples, start = samples[skip:], start + skip
        end = start + len(samples) - self.origin
        if end > len(self.data):
            grown = np.zeros(end, dtype=np.float64)
            grown[: len(self.data)] = self.data
            self.data = grown
        self.data[start - self.origin : end] += samples

    def take(self, count: int) -> np.ndarray:
        """The next ``count`` samples (zeros where nothing was added)."""
        part = np.pad(self.data[:count], (0, max(0, count - len(self.data))))
        self.forget(self.origin + count)
        return part

    def forget(self, before: int) -> None:
        """Drop the samples before position ``before``."""
        if before > self.origin:
            self.data = self.data[before - self.origin :]
            self.origin = before


def _to_int16(samples: np.ndarray) -> np.ndarray:
    return np.clip(samples, -32768, 32767).astype(np.int16)


class SimpleAir:
    """The first room: the echo ``delay_s`` later at ``echo_db``, voices as given."""

    rate = float(RATE)

    def __init__(self, echo_db: float | None, delay_s: float) -> None:
        """``echo_db`` None: the mic does not hear the speaker."""
        self._gain = 0.0 if echo_db is None else 10 ** (echo_db / 20)
        self._delay = round(delay_s * RATE)
        self._air = _Future()
        self.written = 0

    def play(self, at: float, samples: np.ndarray) -> None:
        """Heard ``delay_s`` after it arrived, ``echo_db`` quieter."""
        if self._gain:
            self._air.add(round(at) + self._delay, samples * self._gain)

    def voice(self, start: int, samples: np.ndarray, source: str) -> int:
        """Heard as it is, wherever it comes from."""
        self._air.add(start, samples)
        return 0

    def jitter(self) -> float:
        """Always on time."""
        return 0.0

    def take(self, count: int = CHUNK) -> np.ndarray:
        """The next ``count`` samples."""
        self.written += count
        return _to_int16(self._air.take(count))


class ShoeboxAir:
    """A preset's room; see the module's docstring."""

    def __init__(self, room: Preset) -> None:
        """Impulse responses from the cache (or computed), noise seeded by the room."""
        self._room = room
        self._responses = room_presets.responses(room)
        self._direct = {
            source: int(np.argmax(np.abs(response)))
            for source, response in self._responses.items()
        }
        self._stretch = 1 + room.drift_ppm * 1e-6
        self.rate = RATE * self._stretch
        self._gain = 10 ** (room.speaker_db / 20)
        self._clip = (
            None if room.clip_dbfs is None else 32768 * 10 ** (room.clip_dbfs / 20)
        )
        self._delay = round(room.delay_s * RATE)
        self._echo = _Future()  # at speaker positions
        self._voices = _Future()  # at mic positions
        self._next_play = 0  # where the speaker's queue ends
        # Runs of blocks played back to back since the last chunk: (start, blocks).
        self._played: list[tuple[int, list[np.ndarray]]] = []
        self._jitter = np.random.default_rng([room.seed, 1])
        self._noise = _noise(room)
        self.written = 0

    def play(self, at: float, samples: np.ndarray) -> None:
        """Queued behind what still plays, or played now if the speaker was idle.

        Its echo is worked out at the next ``take``, with the blocks before and
        after it that play back to back (one convolution per run, not per block).
        """
        start = max(round(at), self._next_play)
        if self._played and start == self._next_play:
            self._played[-1][1].append(samples)
        else:
            self._played.append((start, [samples]))
        self._next_play = start + len(samples)

    def _echo_of_played(self) -> None:
        """Add the echo of every run of blocks played since the last chunk."""
        for start, blocks in self._played:
            played = np.concatenate(blocks).astype(np.float64)
            if self._clip is not None:
                played = self._clip * np.tanh(played / self._clip)
            echo = _convolve(played * self._gain, self._responses["speaker"])
            self._echo.add(start + self._delay, echo)
        self._played.clear()

    def voice(self, start: int, samples: np.ndarray, source: str) -> int:
        """Through ``source``'s impulse response (``user`` or ``other``)."""
        if source not in ("user", "other"):
            raise ValueError(f"a voice comes from 'user' or 'other', not {source!r}")
        self._voices.add(start, _convolve(samples, self._responses[source]))
        return self._direct[source]

    def jitter(self) -> float:
        """Uniform between 0 and the room's ``jitter_s``."""
        return float(self._jitter.uniform(0.0, self._room.jitter_s))

    def take(self, count: int = CHUNK) -> np.ndarray:
        """Echo (on the mic's clock), voices and noise, as the sound card delivers them."""
        self._echo_of_played()
        positions = (self.written + np.arange(count)) / self._stretch
        echo = _read(self._echo, positions)
        self._echo.forget(int(positions[-1]) - HALF)
        self.written += count
        return _to_int16(echo + self._voices.take(count) + self._noise.take(count))


def _convolve(samples: np.ndarray, response: np.ndarray) -> np.ndarray:
    from scipy.signal import oaconvolve

    return oaconvolve(np.asarray(samples, dtype=np.float64), response)


def _read(future: _Future, positions: np.ndarray) -> np.ndarray:
    """``future`` between its samples, at ``positions``: a Blackman-windowed sinc."""
    base = np.floor(positions).astype(np.int64)
    offsets = np.arange(-HALF + 1, HALF + 1)
    x = (positions - base)[:, None] - offsets[None, :]
    window = 0.42 + 0.5 * np.cos(np.pi * x / HALF) + 0.08 * np.cos(2 * np.pi * x / HALF)
    index = base[:, None] + offsets[None, :] - future.origin
    if not len(future.data):
        return np.zeros(len(positions))
    inside = (index >= 0) & (index < len(future.data))
    values = np.where(inside, np.take(future.data, index, mode="clip"), 0.0)
    return np.sum(values * np.sinc(x) * window, axis=1)


class _Noise(Protocol):
    def take(self, count: int) -> np.ndarray: ...


class _Silence:
    def take(self, count: int) -> np.ndarray:
        return np.zeros(count)


def _noise(room: Preset) -> _Noise:
    """The room's background noise at its level (``snr_db`` below the user's voice)."""
    rms = VOICE_RMS_AT_1M / room.user_m / 10 ** (room.snr_db / 20)
    if room.noise is None:
        return _Silence()
    if room.noise == "fan":
        return _Fan(rms, room.seed)
    if room.noise == "babble":
        from devstack.room_babble import Babble

        return Babble(rms, room)
    raise ValueError(f"room {room.name!r}: no noise called {room.noise!r}")


class _Fan:
    """A fan: white noise band-passed to 60-1200 Hz, continuous across chunks."""

    def __init__(self, rms: float, seed: int) -> None:
        from scipy.signal import butter, sosfilt, sosfilt_zi

        self._sos = butter(2, [60, 1200], btype="bandpass", fs=RATE, output="sos")
        self._state = sosfilt_zi(self._sos) * 0.0
        self._rng = np.random.default_rng([seed, 2])
        impulse = np.zeros(RATE)
        impulse[0] = 1.0
        gain = np.sqrt(np.sum(sosfilt(self._sos, impulse) ** 2))
        self._scale = rms / gain
        self._filter = sosfilt

    def take(self, count: int) -> np.ndarray:
        white = self._rng.normal(0.0, self._scale, count)
        out, self._state = self._filter(self._sos, white, zi=self._state)
        return out
