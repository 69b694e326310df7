"""What the voice gate hears in bench/gate_family.py, embedded once and cached.

Every voice speaks in the listening harness's ``quiet`` room (its impulse
response from where the user stands to the mic, ``devstack.room_presets``) at a
speaking level of -26 dBFS. On top of it, per condition:

- ``clean``: nothing;
- ``residual +10 dB`` and ``residual 0 dB``: what WebRTC's AEC3 (the
  satellite's ``EchoCanceller``) leaves of Piper joe reading an answer through
  the same room's speaker (its drift and impulse response), the voice that much
  louder than that residual;
- ``augmented: <name>``: the clean phrase with the satellite's own enrollment
  background ``<name>`` (``voiceprint/enrollment.py``) mixed in;
- ``white 10 dB`` and ``fan 10 dB``: white noise, or the ``hard`` room's fan,
  10 dB under the voice.

The gate hears ``GATE_WINDOW_S`` from the voice's onset. Embeddings are cached
under ``.cache/gate-family`` by everything that decides them, so a second run
embeds nothing; the residual and the fan are cached there too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import hashlib
from pathlib import Path

import numpy as np
from scipy.signal import oaconvolve

from bench.gate_candidates import COHORT_PREFIX, PREROLL_S, embed, speex
from bench.gate_enrollment import augment
from devstack.room_air import CHUNK, ShoeboxAir
from devstack.room_presets import RATE, preset, responses
from devstack.voices import Voice, voice

CACHE = Path(__file__).resolve().parents[1] / ".cache" / "gate-family"
GATE_WINDOW_S = 1.3
SPEECH_DBFS = -26.0  # the voice's level over its voiced samples
LOUD = 500  # a sample this loud (int16) is speech
ANSWER = (
    "The kitchen light is on and the oven has reached two hundred degrees. "
    "Tomorrow will be cloudy in the morning, with light rain after three. "
    "Your next meeting is with the building manager at half past four."
)
AUGMENTED = "augmented: "  # a condition that is the satellite's enrollment mix
CONDITIONS = ("clean", "residual +10 dB", "residual 0 dB", "white 10 dB", "fan 10 dB")


@dataclass(frozen=True, slots=True)
class Take:
    """One utterance: who, what, how fast, in which condition (``seed``: where)."""

    voice: str
    text: str
    rate: float
    condition: str
    seed: int
    window_s: float | None = GATE_WINDOW_S  # None: all of it (enrollment)
    treatment: str = ""  # a candidate's change (bench/gate_candidates.py)

    @property
    def key(self) -> str:
        """Everything that decides the embedding."""
        text = repr((self.voice, self.text, self.rate, self.condition, self.seed))
        text = f"{text}|{self.window_s}"
        if self.treatment:
            text = f"{text}|{self.treatment}"
        return hashlib.sha256(text.encode()).hexdigest()[:24]


def speaker(name: str) -> Voice:
    """A harness voice, or a cohort variant (``cohort-<espeak-ng variant>``)."""
    if name.startswith(COHORT_PREFIX):
        return Voice(name, "espeak", f"en-us+{name.removeprefix(COHORT_PREFIX)}")
    return voice(name)


def _voiced_power(samples: np.ndarray) -> float:
    voiced = samples[np.abs(samples) > LOUD]
    return float(np.mean(voiced**2)) if len(voiced) else 1.0


def _cached_array(name: str, make: Callable[[], np.ndarray]) -> np.ndarray:
    path = CACHE / f"{name}.npy"
    if path.exists():
        return np.load(path)
    array = make()
    CACHE.mkdir(parents=True, exist_ok=True)
    np.save(path, array)
    return array


def _residual() -> np.ndarray:
    """AEC3's output while joe's answer plays twice in the quiet room (no voice)."""
    from voicestack_satellite.echo_cancel import EchoCanceller

    answer = np.frombuffer(voice("joe").say(ANSWER), np.int16)
    answer = np.concatenate([answer, answer])
    air, canceller = ShoeboxAir(preset("quiet")), EchoCanceller(0)
    air.play(0, answer.astype(np.float32))
    out = []
    for at in range(0, len(answer) - CHUNK, CHUNK):
        canceller.played(answer[at : at + CHUNK], at)
        out.append(canceller.process(air.take(), at))
    residual = np.concatenate(out).astype(np.float32)
    return residual[2 * RATE :]  # AEC3 converged


def _fan() -> np.ndarray:
    """30 s of the hard room's fan (nothing played, nobody speaking)."""
    air = ShoeboxAir(preset("hard"))
    return np.concatenate([air.take() for _ in range(30 * RATE // CHUNK)]).astype(
        np.float32
    )


class Scenes:
    """Makes each take's audio, the way the gate would hear it."""

    def __init__(self) -> None:
        """The room's response and the two backgrounds (computed once, cached).

        The cohort speaks in the ``tv`` room, the judged voices in ``quiet``.
        """
        self._user = responses(preset("quiet"))["user"]
        self._cohort_room = responses(preset("tv"))["user"]
        self._residual = _cached_array("residual", _residual)
        self._fan = _cached_array("fan", _fan)
        active = self._residual[np.abs(self._residual) > 30]
        self._residual_power = float(np.mean(active**2))

    def audio(self, take: Take) -> np.ndarray:
        """The take's int16 samples, from its onset (``window_s`` of them at most)."""
        said = np.frombuffer(speaker(take.voice).say(take.text, take.rate), np.int16)
        dry = said.astype(np.float64)
        dry *= 32768 * 10 ** (SPEECH_DBFS / 20) / np.sqrt(_voiced_power(dry))
        room = self._cohort_room if take.voice.startswith(COHORT_PREFIX) else self._user
        wet = oaconvolve(dry, room)[: len(dry) + RATE // 2]
        wet *= np.sqrt(_voiced_power(dry) / _voiced_power(wet))
        onset = int(np.flatnonzero(np.abs(wet) > LOUD)[0])
        wet = wet[max(0, onset - RATE // 10) :]
        if take.window_s is not None:
            wet = wet[: RATE // 10 + round(take.window_s * RATE)]
        if take.condition.startswith(AUGMENTED):  # as the satellite enrolls
            clean = np.clip(np.rint(wet), -32768, 32767).astype(np.int16)
            return augment(clean, take.condition.removeprefix(AUGMENTED))
        preroll = round(PREROLL_S * RATE) if take.treatment == "speex" else 0
        wet = np.concatenate([np.zeros(preroll), wet])
        mixed = wet + self._background(take, wet)
        pcm = np.clip(np.rint(mixed), -32768, 32767).astype(np.int16)
        return speex(pcm, preroll) if take.treatment == "speex" else pcm

    def _background(self, take: Take, wet: np.ndarray) -> np.ndarray:
        rng = np.random.default_rng(take.seed)
        power = _voiced_power(wet)
        if take.condition == "clean":
            return np.zeros(len(wet))
        if take.condition.startswith("residual"):
            snr = 10.0 if "+10" in take.condition else 0.0
            start = int(rng.integers(0, len(self._residual) - len(wet)))
            piece = self._residual[start : start + len(wet)].astype(np.float64)
            return piece * np.sqrt(power / self._residual_power / 10 ** (snr / 10))
        if take.condition == "white 10 dB":
            return rng.normal(0.0, np.sqrt(power / 10), len(wet))
        if take.condition == "fan 10 dB":
            start = int(rng.integers(0, len(self._fan) - len(wet)))
            piece = self._fan[start : start + len(wet)].astype(np.float64)
            return piece * np.sqrt(power / np.mean(piece**2) / 10)
        raise ValueError(f"no condition {take.condition!r}")


class Embeddings:
    """The satellite's encoder over takes, cached on disk by ``Take.key``."""

    def __init__(self) -> None:
        """Load what earlier runs embedded."""
        from voicestack_satellite.voiceprint import SpeakerEncoder

        self._encoder = SpeakerEncoder.from_resemblyzer()
        self._scenes: Scenes | None = None
        self._path = CACHE / "embeddings.npz"
        self._known: dict[str, np.ndarray] = {}
        if self._path.exists():
            with np.load(self._path) as stored:
                self._known = {key: stored[key] for key in stored.files}
        self.embedded = 0

    def of(self, take: Take) -> np.ndarray:
        """The take's unit voiceprint."""
        if take.key not in self._known:
            if self._scenes is None:
                self._scenes = Scenes()
            audio = self._scenes.audio(take)
            if take.treatment in {"", "speex"}:
                self._known[take.key] = self._encoder.embed_pcm(audio)
            else:
                self._known[take.key] = embed(self._encoder, audio, take.treatment)
            self.embedded += 1
        return self._known[take.key]

    def save(self) -> None:
        """Keep what this run embedded for the next one."""
        if self.embedded:
            CACHE.mkdir(parents=True, exist_ok=True)
            partial = self._path.with_suffix(".tmp.npz")
            np.savez(partial, **self._known)
            partial.replace(self._path)
