"""The answer's own voice in the mic, removed while the satellite plays.

The speaker sits next to the mic: without echo handling every answer would
interrupt itself. The satellite knows exactly what it plays (the player writes
it to the sink) and roughly when the speaker plays it (the sink's latency), so
that audio is the reference for one of two handlers:

- ``EchoCanceller``: WebRTC's echo canceller (AEC3) subtracts the reference
  from the mic and suppresses what is left. Two packages ship it (``BACKENDS``,
  one module each): ``aec-audio-processing`` (built from source),
  ``pywebrtc-audio`` (wheels for x86-64 and aarch64: what a Pi installs) and
  ``livekit`` (wheels too). Measured in
  ``bench/aec_backends.py`` in the listening harness's rooms.
- ``ReferenceGate``: without a canceller, the mic is muted while the speaker
  is loud and for a hold time after. The echo never gets through, and neither
  does anyone talking over the answer: barge-in only works in its pauses.

Both work on the mic's timeline, in absolute mic samples (as ``EchoTail`` and
the preroll do): the player reports what it wrote and the mic sample at which
it wrote it; the playback delay (sink latency plus device buffer) places it
where the mic hears it. Whatever delay is left (the room, the sound cards'
buffers) the canceller finds by itself; the gate's hold covers it.
"""

from __future__ import annotations

from collections.abc import Callable
import importlib

import numpy as np

from .audio import RATE

FRAME = 160  # 10 ms: what the canceller processes at a time
AHEAD_S = 5.0  # reference kept ahead of the mic (the player writes ~20 ms ahead)
GATE_HOLD_S = 0.2  # the room's tail and an unknown acoustic delay, after the reference
GATE_LEVEL_DBFS = -45.0  # a reference frame louder than this is heard in the mic
# Backend name -> its module, in order of preference (the first installed runs).
BACKENDS = {"aec3": "aec_webrtc", "pywebrtc": "aec_pywebrtc", "livekit": "aec_livekit"}
# One 10 ms frame: (mic, what the speaker played there) -> the mic, echo removed.
FrameCanceller = Callable[[bytes, bytes], bytes]


class EchoCancelError(RuntimeError):
    """The echo canceller cannot run (its optional package is missing)."""


def _check(samples: np.ndarray, what: str) -> None:
    if samples.dtype != np.int16 or samples.ndim != 1:
        raise ValueError(f"{what} must be mono int16 samples, got {samples.dtype}")


class Reference:
    """What the speaker plays, placed on the mic's timeline.

    Samples not played by anyone are silence. Memory is bounded: what the mic
    has passed is let go, and at most ``AHEAD_S`` is kept ahead of it.
    """

    def __init__(self, delay_samples: int) -> None:
        """``delay_samples``: from writing a sample to the mic hearing it."""
        if delay_samples < 0:
            raise ValueError(f"playback delay must be >= 0, got {delay_samples}")
        self._delay = delay_samples
        self._origin = 0  # mic sample of self._data[0]
        self._data = np.zeros(0, dtype=np.int16)
        self._ahead = round(AHEAD_S * RATE)

    def played(self, samples: np.ndarray, at: int) -> None:
        """``samples`` were written to the sink when the mic was at sample ``at``.

        Audio that lands where the mic has already been is dropped (it was
        reported too late to help), as is audio beyond ``AHEAD_S``.
        """
        _check(samples, "played audio")
        start = at + self._delay - self._origin
        if start < 0:
            samples, start = samples[-start:], 0
        samples = samples[: max(0, self._ahead - start)]
        end = start + len(samples)
        if end > len(self._data):
            self._data = np.concatenate(
                [self._data, np.zeros(end - len(self._data), dtype=np.int16)]
            )
        self._data[start:end] = samples

    def take(self, at: int, count: int) -> np.ndarray:
        """The reference for mic samples ``at`` .. ``at + count``; older is let go."""
        skip = max(0, at - self._origin)
        piece = self._data[skip : skip + count]
        self._data = self._data[skip + count :]
        self._origin = at + count
        if len(piece) < count:
            piece = np.concatenate([piece, np.zeros(count - len(piece), np.int16)])
        return piece


def _frames_of(mic: np.ndarray) -> int:
    """How many 10 ms frames ``mic`` holds (it must hold whole ones)."""
    _check(mic, "mic audio")
    if len(mic) % FRAME:
        raise ValueError(
            f"mic audio must come in whole 10 ms frames ({FRAME} samples), "
            f"got {len(mic)} samples"
        )
    return len(mic) // FRAME


def open_backend(name: str | None = None) -> tuple[str, FrameCanceller]:
    """The backend ``name`` (None: the first of ``BACKENDS`` installed), opened.

    Raises ``EchoCancelError`` when it (or, for None, every one) is missing.
    """
    if name is not None and name not in BACKENDS:
        raise ValueError(f"echo canceller {name!r} is not one of {tuple(BACKENDS)}")
    errors = []
    for candidate in (name,) if name else BACKENDS:
        module = importlib.import_module(f".{BACKENDS[candidate]}", __package__)
        try:
            return candidate, module.open_canceller()
        except EchoCancelError as err:
            errors.append(str(err))
    raise EchoCancelError("; or ".join(errors))


class EchoCanceller:
    """The mic with the played audio cancelled (WebRTC AEC3).

    The output lags the mic by 8 ms (AEC3's filter bank); each call returns
    as many samples as it was given.
    """

    def __init__(self, delay_samples: int, backend: str | None = None) -> None:
        """``delay_samples``: the playback delay (see ``Reference``).

        ``backend``: one of ``BACKENDS`` (None: the first installed). Raises
        ``EchoCancelError`` when it is missing.
        """
        self.reference = Reference(delay_samples)
        self.backend, self._cancel = open_backend(backend)
        self.last_reference = np.zeros(0, dtype=np.int16)  # of the last ``process``

    def played(self, samples: np.ndarray, at: int) -> None:
        """The player wrote ``samples`` when the mic was at sample ``at``."""
        self.reference.played(samples, at)

    def process(self, mic: np.ndarray, at: int) -> np.ndarray:
        """The mic samples from absolute sample ``at``, the echo removed."""
        frames = _frames_of(mic)
        reference = self.reference.take(at, len(mic))
        self.last_reference = reference
        out = np.empty_like(mic)
        for i in range(frames):
            part = slice(i * FRAME, (i + 1) * FRAME)
            cleaned = self._cancel(mic[part].tobytes(), reference[part].tobytes())
            out[part] = np.frombuffer(cleaned, dtype=np.int16)
        return out


class ReferenceGate:
    """The mic muted while the speaker is loud (no canceller).

    A 10 ms frame is muted when a reference frame louder than ``level_dbfs``
    came within ``hold_samples`` before it: the echo's delay and the room's
    tail. When nothing plays, the mic passes untouched.
    """

    def __init__(
        self,
        delay_samples: int,
        hold_samples: int = round(GATE_HOLD_S * RATE),
        level_dbfs: float = GATE_LEVEL_DBFS,
    ) -> None:
        """``delay_samples``: the playback delay (see ``Reference``)."""
        if hold_samples < 0:
            raise ValueError(f"gate hold must be >= 0, got {hold_samples}")
        self.reference = Reference(delay_samples)
        self.last_reference = np.zeros(0, dtype=np.int16)  # of the last ``process``
        self._hold = hold_samples
        self._level = 32768.0 * 10 ** (level_dbfs / 20)
        self._closed_until = 0  # mic sample before which the gate is closed

    def played(self, samples: np.ndarray, at: int) -> None:
        """The player wrote ``samples`` when the mic was at sample ``at``."""
        self.reference.played(samples, at)

    def closed(self, at: int) -> bool:
        """Whether mic sample ``at`` was muted (as of the last ``process``)."""
        return at < self._closed_until

    def process(self, mic: np.ndarray, at: int) -> np.ndarray:
        """The mic samples from absolute sample ``at``, muted while echo is due."""
        frames = _frames_of(mic)
        self.last_reference = self.reference.take(at, len(mic))
        reference = self.last_reference.astype(np.float64)
        loud = np.sqrt(np.mean(reference.reshape(frames, FRAME) ** 2, axis=1))
        out = mic.copy()
        for i in range(frames):
            start = at + i * FRAME
            if loud[i] > self._level:
                self._closed_until = start + FRAME + self._hold
            if start < self._closed_until:
                out[i * FRAME : (i + 1) * FRAME] = 0
        return out
