"""Wake-word false accepts and true accepts, the satellite against pyopen-wakeword.

False accepts: ~10 minutes of Piper speech without a wake word (the benchmark
sentences at three speaking rates, with pauses) through the satellite's
``WakeDetector`` with hey_jarvis and okay_nabu active. Goal: no detection.

True accepts: 20 utterances "Hey Jarvis, ..." / "Okay Nabu, ..." at length scales
0.8-1.3, clean and with white, pink or Piper babble noise at 10 dB SNR.

Anchor: pyopen-wakeword alone at the same threshold on the same audio, counting
every rise above the threshold, so the effect of the satellite's trigger level and
refractory period is visible. The detector is reset after each detection, as the
satellite does.

    .venv/bin/python -m bench.wake_accuracy
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
import sys

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.common import (
    CHUNK_SAMPLES,
    DEFAULTS,
    RATE,
    SENTENCES,
    RawWakeWords,
    chunks,
    figure,
    header,
    median,
    report,
    spoken,
    talk,
    verdict,
    wake_detector,
    wake_word_end,
)

NAMES = ("hey_jarvis", "okay_nabu")
PHRASES = {"hey_jarvis": "Hey Jarvis", "okay_nabu": "Okay Nabu"}
THRESHOLD = DEFAULTS.wake_threshold
FALSE_ACCEPT_S = 600.0
FALSE_ACCEPT_SCALES = (1.0, 0.85, 1.2)
FALSE_ACCEPT_PAUSES_S = (0.3, 0.7, 0.5, 1.0)
SNR_DB = 10.0
VOICED = 327  # |sample| above 1 % of full scale counts as speech (as devstack.speech)
BEFORE_S, AFTER_S = 1.0, 2.5  # silence around each true-accept utterance
COMMANDS = (
    "turn on the kitchen light.",
    "what is the weather like today?",
    "set a timer for five minutes.",
    "switch off the living room lamp.",
    "play some music in the bedroom.",
    "lock the front door.",
    "what time is it?",
    "set the thermostat to twenty degrees.",
    "close the garage door.",
    "add bread to the shopping list.",
)
# Per wake word: ten utterances; conditions and length scales cycle so that every
# condition meets slow and fast speech.
CONDITIONS = (
    "clean",
    "clean",
    "white",
    "clean",
    "pink",
    "clean",
    "babble",
    "white",
    "pink",
    "babble",
)
SCALES = (0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 0.85, 0.95, 1.05, 1.25)


@dataclass(slots=True)
class Scan:
    """What both engines made of one stream of audio."""

    detections: list[tuple[str, int]] = field(default_factory=list)  # satellite
    probabilities: dict[str, list[tuple[int, float]]] = field(default_factory=dict)

    def floor_onsets(self, name: str) -> list[int]:
        """End samples of windows where pyopen-wakeword rises above the threshold."""
        onsets: list[int] = []
        above = False
        for end, probability in self.probabilities[name]:
            if probability >= THRESHOLD and not above:
                onsets.append(end)
            above = probability >= THRESHOLD
        return onsets

    def floor_windows(self, name: str) -> int:
        """How many 80 ms windows were above the threshold."""
        return sum(p >= THRESHOLD for _end, p in self.probabilities[name])

    def peak(self, name: str, start: int = 0, stop: int | None = None) -> float:
        """Highest probability of ``name`` for windows ending in [start, stop)."""
        return max(
            (
                p
                for end, p in self.probabilities[name]
                if start <= end and (stop is None or end < stop)
            ),
            default=0.0,
        )


def scan(audio: np.ndarray) -> Scan:
    """Run the satellite's detector and pyopen-wakeword alone over ``audio``."""
    detector = wake_detector(NAMES)
    floor = RawWakeWords(NAMES)
    result = Scan(probabilities={name: [] for name in NAMES})
    end = 0
    for chunk in chunks(audio):
        end += len(chunk)
        if (name := detector.process(chunk, end)) is not None:
            result.detections.append((name, end))
            detector.reset()  # what the satellite does after a detection
        for name, probability in floor.process(chunk):
            result.probabilities[name].append((end, probability))
    detector.close()
    floor.close()
    return result


def mix(signal: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """``signal`` plus ``noise`` scaled to ``snr_db`` against the voiced samples."""
    speech = signal.astype(np.float64)
    noise = noise[: len(speech)].astype(np.float64)
    signal_power = float(np.mean(speech[np.abs(speech) > VOICED] ** 2))
    noise_power = float(np.mean(noise**2))
    gain = np.sqrt(signal_power / (noise_power * 10 ** (snr_db / 10)))
    return np.clip(np.rint(speech + gain * noise), -32768, 32767).astype(np.int16)


def make_noise(kind: str, length: int, seed: int) -> np.ndarray:
    """White, pink (1/f power) or babble (three other Piper sentences summed)."""
    rng = np.random.default_rng(seed)
    if kind == "white":
        return rng.normal(0.0, 1.0, length)
    if kind == "pink":
        spectrum = np.fft.rfft(rng.normal(0.0, 1.0, length))
        frequencies = np.fft.rfftfreq(length)
        spectrum[1:] /= np.sqrt(frequencies[1:])
        spectrum[0] = 0.0
        return np.fft.irfft(spectrum, length)
    assert kind == "babble"
    talkers = [
        spoken(SENTENCES[(seed * 7 + offset * 13) % len(SENTENCES)], scale)
        for offset, scale in enumerate((0.9, 1.0, 1.15))
    ]
    babble = np.zeros(length)
    for index, voice in enumerate(talkers):
        tiled = np.resize(voice.astype(np.float64), length + index * 4000)
        babble += tiled[index * 4000 :]
    return babble


@dataclass(frozen=True, slots=True)
class Utterance:
    """One true-accept test utterance."""

    name: str
    text: str
    scale: float
    condition: str

    def audio(self, seed: int) -> np.ndarray:
        """The utterance with silence around it, noise mixed in if asked."""
        voice = spoken(self.text, self.scale)
        padded = np.concatenate(
            [
                np.zeros(round(BEFORE_S * RATE), np.int16),
                voice,
                np.zeros(round(AFTER_S * RATE), np.int16),
            ]
        )
        if self.condition == "clean":
            return padded
        return mix(padded, make_noise(self.condition, len(padded), seed), SNR_DB)


def utterances() -> list[Utterance]:
    """Ten per wake word; the commands are rotated between the two words."""
    out: list[Utterance] = []
    for shift, name in enumerate(NAMES):
        for index, condition in enumerate(CONDITIONS):
            command = COMMANDS[(index + 5 * shift) % len(COMMANDS)]
            scale_index = (index + 3 * shift) % len(SCALES)
            out.append(
                Utterance(
                    name, f"{PHRASES[name]}, {command}", SCALES[scale_index], condition
                )
            )
    return out


def false_accepts() -> None:
    """Speech without wake words: every detection is a false accept."""
    audio = talk(
        ((text, scale) for scale, text in product(FALSE_ACCEPT_SCALES, SENTENCES)),
        FALSE_ACCEPT_PAUSES_S,
        FALSE_ACCEPT_S,
    )
    hours = len(audio) / RATE / 3600
    result = scan(audio)
    report()
    report(
        f"false accepts: {len(audio) / RATE / 60:.1f} min of speech without a wake "
        f"word ({len(SENTENCES)} sentences at length scales {FALSE_ACCEPT_SCALES})"
    )
    total = len(result.detections)
    floor_total = sum(len(result.floor_onsets(name)) for name in NAMES)
    for name in NAMES:
        count = sum(detected == name for detected, _end in result.detections)
        report(
            f"  {name}: satellite {count} detection(s); pyopen-wakeword alone "
            f"{len(result.floor_onsets(name))} rise(s) above {THRESHOLD} "
            f"({result.floor_windows(name)} window(s)); highest probability "
            f"{result.peak(name):.3f}"
        )
    figure(
        "  false accepts, satellite",
        total,
        f"in {len(audio) / RATE / 60:.1f} min",
        anchor=("pyopen-wakeword alone", floor_total),
        goal=("0", total == 0),
        precision=0,
    )
    report(
        f"  = {total / hours:.1f} false accepts per hour "
        f"(pyopen-wakeword alone {floor_total / hours:.1f} per hour)"
    )
    for name, end in result.detections:
        report(f"  false accept: {name} at {end / RATE:.2f} s")


def true_accepts() -> None:
    """Each utterance should be detected once, as its own wake word."""
    tests = utterances()
    parts = [test.audio(seed) for seed, test in enumerate(tests)]
    starts = np.cumsum([0, *(len(part) for part in parts)])
    result = scan(np.concatenate(parts))
    hits: Counter[str] = Counter()
    floor_hits: Counter[str] = Counter()
    totals: Counter[str] = Counter()
    report()
    report(
        f"true accepts: {len(tests)} utterances, length scales "
        f"{min(SCALES)}-{max(SCALES)}, noise at {SNR_DB:.0f} dB SNR"
    )
    delays: list[float] = []  # wake word end -> detection, ms
    for index, test in enumerate(tests):
        start, stop = int(starts[index]), int(starts[index + 1]) + CHUNK_SAMPLES
        found = [(n, end) for n, end in result.detections if start < end <= stop]
        floor_found = [
            end for end in result.floor_onsets(test.name) if start < end <= stop
        ]
        ok, floor_ok = test.name in [n for n, _end in found], bool(floor_found)
        for key in (test.condition, test.name, "all"):
            totals[key] += 1
            hits[key] += ok
            floor_hits[key] += floor_ok
        wake_end = (
            start
            + round(BEFORE_S * RATE)
            + wake_word_end(spoken(test.text, test.scale))
        )
        seen = ", ".join(
            f"{n} +{(end - wake_end) * 1000 / RATE:.0f} ms" for n, end in found
        )
        delays.extend(
            (end - wake_end) * 1000 / RATE for n, end in found[:1] if n == test.name
        )
        report(
            f"  {verdict(ok)} {test.condition:6} x{test.scale:<4} {test.text!r}: "
            f"satellite {seen or 'nothing'}; pyopen-wakeword alone "
            f"{len(floor_found)} rise(s), peak "
            f"{result.peak(test.name, start, stop):.3f}"
        )
    preroll_ms = DEFAULTS.wake_preroll_s * 1000
    report(
        f"  detection after the wake word's end (pause after it, by energy): median "
        f"{median(delays):.0f} ms, {min(delays):.0f}-{max(delays):.0f} ms; so "
        f"--wake-preroll {DEFAULTS.wake_preroll_s} s holds the wake word's last "
        f"{max(0.0, preroll_ms - max(delays)):.0f}-"
        f"{max(0.0, preroll_ms - min(delays)):.0f} ms"
    )
    for key in ("clean", "white", "pink", "babble", *NAMES, "all"):
        figure(
            f"  true accepts, {key} ({hits[key]}/{totals[key]})",
            100 * hits[key] / totals[key],
            "%",
            anchor=(
                f"pyopen-wakeword alone ({floor_hits[key]}/{totals[key]})",
                100 * floor_hits[key] / totals[key],
            ),
            precision=0,
        )


def main(parts: Sequence[str] = ("false", "true")) -> None:
    """Run both measurements."""
    header("wake-word accuracy (bench/wake_accuracy.py)")
    report(
        f"wake words {', '.join(NAMES)}; threshold {THRESHOLD}, trigger level "
        f"{DEFAULTS.wake_trigger_level}, refractory {DEFAULTS.wake_refractory_s} s "
        "(satellite defaults)"
    )
    if "false" in parts:
        false_accepts()
    if "true" in parts:
        true_accepts()


if __name__ == "__main__":
    main(sys.argv[1:] or ("false", "true"))
