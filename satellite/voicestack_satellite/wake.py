"""Wake words with openWakeWord, in-process.

The mel/embedding front end is shared by all active models (it is most of the cost),
so three wake words cost little more than one. Each model has its own threshold,
trigger level (consecutive windows above threshold) and refractory period.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
from pathlib import Path
from typing import Protocol

import numpy as np
from pyopen_wakeword import Model, OpenWakeWord, OpenWakeWordFeatures

_LOGGER = logging.getLogger(__name__)

BUILTIN_NAMES = tuple(model.value for model in Model)
PHRASES = {
    "hey_jarvis": "Hey Jarvis",
    "okay_nabu": "Okay Nabu",
    "alexa": "Alexa",
    "hey_mycroft": "Hey Mycroft",
    "hey_rhasspy": "Hey Rhasspy",
}


class WakeWordError(ValueError):
    """A wake word that is neither a built-in name nor a readable .tflite file."""


@dataclass(slots=True)
class WakeWordSpec:
    """One configured wake word."""

    name: str
    path: Path | None  # None: built-in model
    threshold: float

    @property
    def phrase(self) -> str:
        """What a person says, for Home Assistant's info."""
        return PHRASES.get(self.name, self.name.replace("_", " ").title())


def parse_spec(text: str, default_threshold: float) -> WakeWordSpec:
    """``hey_jarvis``, ``hey_jarvis:0.6``, ``/models/x.tflite`` or ``x.tflite:0.7``."""
    threshold = default_threshold
    name_or_path = text
    head, sep, tail = text.rpartition(":")
    if sep and head:
        try:
            threshold = float(tail)
        except ValueError:
            pass
        else:
            name_or_path = head
    if not 0.0 < threshold < 1.0:
        raise WakeWordError(f"wake word {text!r}: threshold must be between 0 and 1")
    if name_or_path in BUILTIN_NAMES:
        return WakeWordSpec(name_or_path, None, threshold)
    path = Path(name_or_path)
    if path.suffix != ".tflite" or not path.is_file():
        raise WakeWordError(
            f"wake word {name_or_path!r} is neither a built-in model "
            f"({', '.join(BUILTIN_NAMES)}) nor an existing .tflite file"
        )
    return WakeWordSpec(path.stem, path, threshold)


class Wake(Protocol):
    """What the satellite needs of a wake word engine: ours, or a service's."""

    @property
    def description(self) -> str:
        """Which engine, for Home Assistant's info."""

    @property
    def specs(self) -> list[WakeWordSpec]:
        """Every wake word it can detect."""

    @property
    def active(self) -> list[str]:
        """Names of the wake words listened for now."""

    def set_active(self, names: list[str]) -> list[str]:
        """Listen only for ``names``; the names now active."""

    def process(self, samples: np.ndarray, end_sample: int) -> str | None:
        """16 kHz audio ending at ``end_sample``; a detected wake word's name."""

    def reset(self) -> None:
        """Forget history after a detection."""

    def close(self) -> None:
        """Free what it holds."""


@dataclass(slots=True)
class _Tracker:
    spec: WakeWordSpec
    model: OpenWakeWord
    above: int = 0
    quiet_until: int = 0  # sample index before which detections are ignored


class WakeDetector:
    """Feed 16 kHz int16 audio, get the name of a detected wake word."""

    def __init__(
        self,
        specs: list[WakeWordSpec],
        trigger_level: int = 1,
        refractory_samples: int = 32000,
    ) -> None:
        """Load every model once; all start active."""
        self._features = OpenWakeWordFeatures.from_builtin()
        self._trackers: dict[str, _Tracker] = {}
        for spec in specs:
            model = (
                OpenWakeWord.from_model(spec.path)
                if spec.path is not None
                else OpenWakeWord.from_builtin(Model(spec.name))
            )
            self._trackers[spec.name] = _Tracker(spec, model)
        self._active = list(self._trackers)
        self._trigger_level = trigger_level
        self._refractory = refractory_samples
        # The feature front end starts with 8 s of zeros to back-fill; computing
        # them takes ~0.4 s. Do it now, not on the first live chunk, where it would
        # stall the event loop (and playback) right after run-satellite.
        for embedding in self._features.process_streaming(bytes(2 * 1280)):
            for tracker in self._trackers.values():
                for _ in tracker.model.process_streaming(embedding):
                    pass

    @property
    def description(self) -> str:
        """Which engine, for Home Assistant's info."""
        return "openWakeWord (in the satellite)"

    @property
    def specs(self) -> list[WakeWordSpec]:
        """Every loaded wake word."""
        return [tracker.spec for tracker in self._trackers.values()]

    @property
    def active(self) -> list[str]:
        """Names of the wake words listened for now."""
        return list(self._active)

    def set_active(self, names: list[str]) -> list[str]:
        """Listen only for ``names`` (a peer's ``detect``); unknown names are ignored.

        An empty or entirely unknown list keeps every loaded word active, so a
        peer can never switch wake detection off by accident.
        """
        known = [name for name in names if name in self._trackers]
        if unknown := [name for name in names if name not in self._trackers]:
            _LOGGER.warning("Ignoring unknown wake word(s) from peer: %s", unknown)
        self._active = known or list(self._trackers)
        return self.active

    def process(self, samples: np.ndarray, end_sample: int) -> str | None:
        """Process audio ending at absolute sample ``end_sample``.

        Returns the first wake word that triggers in this audio, if any.
        """
        detected: str | None = None
        for embedding in self._features.process_streaming(samples.tobytes()):
            for name in self._active:
                tracker = self._trackers[name]
                for probability in tracker.model.process_streaming(embedding):
                    if probability < tracker.spec.threshold:
                        tracker.above = 0
                        continue
                    tracker.above += 1
                    if (
                        detected is None
                        and tracker.above >= self._trigger_level
                        and end_sample >= tracker.quiet_until
                    ):
                        detected = name
                        tracker.quiet_until = end_sample + self._refractory
                        tracker.above = 0
        return detected

    def reset(self) -> None:
        """Forget wake-word history after a detection.

        The shared mel/embedding front end is kept: resetting it would re-create
        its 8 s back-fill and stall the loop; the models' windows are what matter.
        """
        for tracker in self._trackers.values():
            tracker.model.reset()
            tracker.above = 0

    def close(self) -> None:
        """Free the TFLite interpreters."""
        for tracker in self._trackers.values():
            tracker.model.close()
        self._features.close()
