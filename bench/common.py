"""Shared parts of the benchmarks: speech material, wake-word engines, reporting.

Every figure is printed next to the anchor it is compared with, measured in the same
run on the same audio, so contention from other processes affects both alike.
Speech comes from ``devstack.speech`` (Piper's joe voice, cached in ``.cache/speech``);
nothing is downloaded.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
import os
import statistics

import numpy as np
from pyopen_wakeword import Model, OpenWakeWord, OpenWakeWordFeatures

from devstack import speech
from voicestack_satellite.audio import RATE
from voicestack_satellite.mic import CHUNK_SAMPLES
from voicestack_satellite.settings_model import Settings
from voicestack_satellite.wake import WakeDetector, parse_spec

__all__ = [
    "CHUNK_MS",
    "CHUNK_SAMPLES",
    "DEFAULTS",
    "RATE",
    "SENTENCES",
    "RawWakeWords",
    "chunks",
    "figure",
    "header",
    "median",
    "report",
    "samples_of",
    "spoken",
    "talk",
    "verdict",
    "wake_detector",
    "wake_word_end",
]

# The satellite's own defaults (wake threshold, trigger level, refractory, preroll,
# VAD threshold, sound rate): the benchmarks measure what a default install does.
DEFAULTS = Settings(name="bench")
CHUNK_MS = CHUNK_SAMPLES * 1000 / RATE  # 80 ms: one openWakeWord step

# Home-assistant-like commands and everyday talk, none containing a wake word.
# Some start with "hey" or "okay" on purpose: people say those all the time.
SENTENCES: tuple[str, ...] = (
    "Turn on the kitchen light.",
    "Switch off the living room lamp.",
    "Set the thermostat to twenty one degrees.",
    "What is the weather like tomorrow?",
    "Open the garage door.",
    "Close the blinds in the bedroom.",
    "Play some jazz in the dining room.",
    "Set a timer for ten minutes.",
    "How long is left on the pasta timer?",
    "Add milk and eggs to the shopping list.",
    "Is the front door locked?",
    "Lock the back door please.",
    "Dim the hallway lights to thirty percent.",
    "Start the vacuum cleaner.",
    "What time is it in Tokyo?",
    "Remind me to call the dentist at four.",
    "Turn the heating down a little.",
    "Which windows are still open?",
    "Good morning, what is on my calendar today?",
    "Stop the music.",
    "Make the bedroom lights warmer.",
    "How much energy did the house use yesterday?",
    "Turn off all the lights downstairs.",
    "Is the washing machine finished?",
    "Set the living room to movie mode.",
    "What is the temperature in the nursery?",
    "Cancel the timer.",
    "Skip this song.",
    "Turn the volume up.",
    "Water the garden for fifteen minutes.",
    "Hey, did anyone feed the cat this morning?",
    "Okay, I think we should leave in five minutes.",
    "Okay everyone, dinner is ready.",
    "Hey there, how was your day at work?",
    "Can you pass me the salt?",
    "I left my keys on the kitchen table again.",
    "The train was twenty minutes late this morning.",
    "We need to buy a new lamp for the study.",
    "Let's watch a film tonight.",
    "My sister is coming over on Saturday.",
    "The printer is out of paper.",
    "Have you seen my blue jacket?",
    "It is going to rain all weekend.",
    "I will make pancakes for breakfast.",
    "The meeting was moved to Thursday afternoon.",
    "Don't forget to take the bins out.",
    "That was the best pizza I have had in years.",
    "Could you turn that down a bit?",
    "The kids are playing in the garden.",
    "I can't find the remote control anywhere.",
    "Let me know when the laundry is done.",
    "We should paint the hallway in spring.",
    "The neighbours got a new dog.",
    "Traffic on the motorway was terrible.",
    "I booked a table for seven o'clock.",
    "Nobody told me the shop closes early on Sundays.",
    "This recipe needs two cups of flour.",
    "Shall we go for a walk after lunch?",
    "The battery in the smoke alarm is low.",
    "Grandma called while you were out.",
    "I'm going to bed, good night.",
    "Please wipe your feet before you come in.",
    "The football match starts at eight.",
    "There is a package waiting at the post office.",
    "Our flight leaves early on Monday morning.",
    "The coffee machine needs descaling.",
    "I think the fridge is making a strange noise.",
    "Who wants tea?",
    "Hey, look at the sunset over the hills.",
    "Okay, that makes sense to me.",
    "The library books are due next week.",
    "Jessica and Harvey are visiting in June.",
    "Jasmine tea is my favourite in the evening.",
    "Travis parked the van in front of the house.",
    "The garden centre has a sale on roses.",
    "I need to renew my passport this year.",
    "Can we have curry on Friday?",
    "The heating bill was higher than expected.",
    "Let's ask the neighbours to water the plants.",
    "My phone keeps running out of battery.",
    "Hey mum, can I have a biscuit?",
    "Okay, now, where did I put my glasses?",
    "The bus stop moved to the other side of the road.",
    "I've started learning to play the guitar.",
    "Please record the documentary at nine.",
    "The baby finally fell asleep.",
    "It's your turn to do the dishes.",
    "We are out of toothpaste.",
    "The internet was down for an hour today.",
    "I'd like to repaint the fence in dark green.",
    "Tell me a joke.",
    "How tall is Mount Everest?",
    "Turn on the fan in the office.",
    "Set an alarm for half past six.",
    "What's the news today?",
    "Show the front door camera.",
    "Turn the porch light on at sunset.",
    "Are the lights in the basement on?",
    "Open the curtains in the living room.",
    "Turn off the television in ten minutes.",
)


def report(text: str = "") -> None:
    """Print one line of results (the benchmarks' only output)."""
    print(text, flush=True)


def verdict(ok: bool) -> str:
    """PASS or MISS for a goal."""
    return "PASS" if ok else "MISS"


def median(values: Iterable[float]) -> float:
    """The median of repeated measurements."""
    return statistics.median(list(values))


def header(title: str) -> None:
    """Title, machine and current load, so contention is visible in the output."""
    load = ", ".join(f"{value:.2f}" for value in os.getloadavg())
    report(f"== {title} ==")
    report(f"machine: {os.cpu_count()} cores, no GPU; load average {load}")


def figure(
    name: str,
    value: float,
    unit: str,
    *,
    detail: str = "",
    anchor: tuple[str, float] | None = None,
    goal: tuple[str, bool] | None = None,
    precision: int = 1,
) -> None:
    """One figure: value, the anchor and the ratio to it, and the goal's verdict.

    ``detail`` follows the value (e.g. a spread); ``anchor`` is (what it is, value
    in the same unit); ``goal`` is (the goal as text, whether it is met).
    """
    line = f"{name}: {value:.{precision}f} {unit}{detail}"
    if anchor is not None:
        anchor_name, anchor_value = anchor
        ratio = f"{value / anchor_value:.3f}" if anchor_value else "n/a"
        line += (
            f" | anchor {anchor_name}: {anchor_value:.{precision}f} {unit}"
            f" | ratio {ratio}"
        )
    if goal is not None:
        goal_text, ok = goal
        line += f" | goal {goal_text}: {verdict(ok)}"
    report(line)


def samples_of(pcm: bytes) -> np.ndarray:
    """16 kHz int16 PCM bytes as a sample array."""
    return np.frombuffer(pcm, dtype=np.int16)


def spoken(text: str, length_scale: float = 1.0) -> np.ndarray:
    """Piper speech (cached) as samples."""
    return samples_of(speech.speak(text, length_scale=length_scale))


def talk(
    utterances: Iterable[tuple[str, float]],
    pauses_s: Sequence[float],
    total_s: float,
) -> np.ndarray:
    """Sentences (text, length scale) separated by pauses, exactly ``total_s`` long.

    Pauses cycle through ``pauses_s``; utterances stop once the total is reached and
    the result is cut (or padded with silence) to ``total_s``.
    """
    target = round(total_s * RATE)
    parts: list[np.ndarray] = []
    length = 0
    for index, (text, scale) in enumerate(utterances):
        if length >= target:
            break
        pause = np.zeros(round(pauses_s[index % len(pauses_s)] * RATE), np.int16)
        for part in (spoken(text, scale), pause):
            parts.append(part)
            length += len(part)
    audio = np.concatenate([*parts, np.zeros(max(0, target - length), np.int16)])
    return audio[:target]


def chunks(samples: np.ndarray) -> Iterator[np.ndarray]:
    """The mic's 80 ms chunks; the last one is padded with silence."""
    for start in range(0, len(samples), CHUNK_SAMPLES):
        chunk = samples[start : start + CHUNK_SAMPLES]
        if len(chunk) < CHUNK_SAMPLES:
            chunk = np.concatenate(
                [chunk, np.zeros(CHUNK_SAMPLES - len(chunk), np.int16)]
            )
        yield chunk


def wake_word_end(voice: np.ndarray, pause_s: float = 0.08) -> int:
    """Where the wake word ends: the first pause of ``pause_s`` after speech starts.

    Speech is a 10 ms frame whose RMS is at least 1 % of the loudest frame's. The
    comma after the wake word makes Piper pause 100 ms or more; the stop in "okay"
    is a gap of about 50 ms, hence the 80 ms default.
    """
    frame = RATE // 100
    frames = voice[: len(voice) - len(voice) % frame].astype(np.float64)
    rms = np.sqrt(np.mean(frames.reshape(-1, frame) ** 2, axis=1))
    loud = rms >= 0.01 * rms.max()
    need = round(pause_s * 100)
    first = int(np.argmax(loud))
    for index in range(first, len(loud) - need):
        if not loud[index : index + need].any():
            return index * frame
    raise ValueError("no pause after the wake word")


def wake_detector(names: Sequence[str]) -> WakeDetector:
    """The satellite's detector for ``names`` with its default settings."""
    return WakeDetector(
        [parse_spec(name, DEFAULTS.wake_threshold) for name in names],
        trigger_level=DEFAULTS.wake_trigger_level,
        refractory_samples=round(DEFAULTS.wake_refractory_s * RATE),
    )


class RawWakeWords:
    """pyopen-wakeword alone: the shared features and one model per wake word.

    The floor the satellite is compared with. It is warmed up like the satellite's
    detector (the features' 8 s back-fill is computed before any timing).
    """

    def __init__(self, names: Sequence[str]) -> None:
        """Load the features and the built-in models ``names``."""
        self.names = list(names)
        self._features = OpenWakeWordFeatures.from_builtin()
        self._models = [OpenWakeWord.from_builtin(Model(name)) for name in names]
        self.process(np.zeros(CHUNK_SAMPLES, np.int16))

    def process(self, samples: np.ndarray) -> list[tuple[str, float]]:
        """Every (wake word, probability) the audio produces."""
        out: list[tuple[str, float]] = []
        for embedding in self._features.process_streaming(samples.tobytes()):
            for name, model in zip(self.names, self._models, strict=True):
                out.extend((name, p) for p in model.process_streaming(embedding))
        return out

    def close(self) -> None:
        """Free the TFLite interpreters."""
        for model in self._models:
            model.close()
        self._features.close()
