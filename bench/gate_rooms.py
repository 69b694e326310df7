"""The enrolled user over an answer, in the harness's rooms at their own levels.

Issue 28, for the enrolled-user barge-in journey (tests/integration/test_journeys.py):
bench/gate_family.py mixes voices at set SNRs; here Piper joe enrolls in a
room as the satellite hears him (``devstack.room_air.ShoeboxAir``: the room's
impulse responses, drift, noise and levels; the satellite's AEC3 on the mic),
then says 20 sentences over a long answer the satellite plays in the same
room, one every 4 s, and the gate judges 1.3 s from each onset, as the
satellite does. espeak-ng en-gb says the same from the ``other`` place (a
second person, the TV) for contrast. Printed per room: joe's and the other
voice's cosine against joe's voiceprint (median, range, the share at the
threshold 0.70 and in the not-sure band 0.65 to 0.70, and the share *taken*:
accepted, or not sure with a cohort-normalized score of 0 or more, which
Home Assistant takes when the speech is a command for the home).

Three gates on the same audio: *padded* (the gate before 2026-11-28: the
judged speech padded with zeros to the encoder's 1.6 s partial), *looped*
(what ships: the judged speech repeated to ``voice_gate.LOOP_S``, the
enrollment as before) and *speex* (Speex's suppressor over the whole mic,
enrollment included, cosine at 0.73: a candidate, not shipped).

    .venv-satellite/bin/python bench/gate_rooms.py quiet hard    # ~1 min
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
import sys

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

import numpy as np

from bench.barge_in_gate import ENROLL_PHRASES
from bench.common import header, report
from bench.gate_candidates import speex
from bench.gate_family import SENTENCES
from bench.gate_family_audio import ANSWER, GATE_WINDOW_S, LOUD
from devstack.room_air import CHUNK, ShoeboxAir
from devstack.room_presets import RATE, preset
from devstack.voices import voice
from voicestack_satellite.voice_gate import LOOP_S, UNSURE_BAND
from voicestack_satellite.voiceprint import SpeakerEncoder
from voicestack_satellite.voiceprint.calibration import Cohort

THRESHOLD = 0.70  # the current gate's
SPEEX_THRESHOLD = 0.73  # the speex candidate's (bench/gate_family.py)
SHORT = "Turn on the fan."  # the journeys' command: under 1.3 s of speech
EVERY_S = 4.0  # one sentence every this many seconds, over the answer
FIRST_S = 3.0  # the first one after AEC3 had this long to converge


def _heard(
    room: str, said: list[np.ndarray], source: str, answer: bool
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each of ``said`` through the room (AEC3 on), from 0.1 s before its onset.

    Twice: as the gate hears the mic today, and through Speex's suppressor
    running over the whole mic (``bench/gate_candidates.py``'s candidate).
    """
    from voicestack_satellite.echo_cancel import EchoCanceller

    air, canceller = ShoeboxAir(preset(room)), EchoCanceller(0)
    onsets = []
    for n, pcm in enumerate(said):
        start = round((FIRST_S + EVERY_S * n) * RATE)
        direct = air.voice(start, pcm.astype(np.float32), source)
        onsets.append(start + direct + int(np.flatnonzero(np.abs(pcm) > LOUD)[0]))
    total = round((FIRST_S + EVERY_S * len(said)) * RATE)
    played = np.zeros(total, np.int16)
    if answer:
        spoken = np.frombuffer(voice("joe").say(ANSWER), np.int16)
        played = np.resize(spoken, total)  # the answer, again and again
        air.play(0, played.astype(np.float32))
    mic = []
    for at in range(0, total - CHUNK, CHUNK):
        canceller.played(played[at : at + CHUNK], at)
        mic.append(canceller.process(air.take(), at))
    audio = np.concatenate(mic)
    window = RATE // 10 + round((GATE_WINDOW_S if answer else EVERY_S - 0.3) * RATE)
    starts = [onset - RATE // 10 for onset in onsets]
    denoised = speex(audio, 0)
    return (
        [audio[start : start + window] for start in starts],
        [denoised[start : start + window] for start in starts],
    )


def _summary(scores: np.ndarray, normalized: np.ndarray, threshold: float) -> str:
    accepted = scores >= threshold
    unsure = (scores >= threshold - UNSURE_BAND) & ~accepted
    taken = accepted | (unsure & (normalized >= 0))
    return (
        f"median {np.median(scores):.3f} ({scores.min():.3f}-{scores.max():.3f}),"
        f" >= {threshold}: {100 * np.mean(accepted):.0f} %,"
        f" not sure: {100 * np.mean(unsure):.0f} %,"
        f" taken: {100 * np.mean(taken):.0f} %"
    )


def _voiceprint(encoder: SpeakerEncoder, phrases: list[np.ndarray]) -> np.ndarray:
    mean = np.mean([encoder.embed_pcm(a) for a in phrases], axis=0)
    return mean / np.linalg.norm(mean)


def main(argv: Sequence[str] = ()) -> None:
    """Enroll joe in each room, judge him and another voice over an answer."""
    header("voice gate: the enrolled user over an answer, per room")
    encoder, cohort = SpeakerEncoder.from_resemblyzer(), Cohort.load()
    joe, other = voice("joe"), voice("espeak-gb")
    for room in argv or ("quiet", "hard"):
        phrases = [np.frombuffer(joe.say(t), np.int16) for t in ENROLL_PHRASES]
        plain, denoised = _heard(room, phrases, "user", False)
        prints = _voiceprint(encoder, plain), _voiceprint(encoder, denoised)
        for name, speaker, source, texts in (
            (joe.name, joe, "user", SENTENCES),
            (f"{joe.name}, short", joe, "user", (SHORT,) * 10),
            (other.name, other, "other", SENTENCES),
            (f"{other.name}, short", other, "other", (SHORT,) * 10),
        ):
            said = [np.frombuffer(speaker.say(t), np.int16) for t in texts]
            heard, heard_denoised = _heard(room, said, source, True)
            for gate, voiceprint, windows, loop_s, threshold in (
                ("padded", prints[0], heard, None, THRESHOLD),
                ("looped", prints[0], heard, LOOP_S, THRESHOLD),
                ("speex", prints[1], heard_denoised, None, SPEEX_THRESHOLD),
            ):
                tests = [encoder.embed_pcm(a, loop_s=loop_s) for a in windows]
                scores = np.array([voiceprint @ t for t in tests])
                enrolled = cohort.stats(voiceprint)
                normalized = np.array(
                    [
                        cohort.score(float(raw), enrolled, cohort.stats(t)).normalized
                        for raw, t in zip(scores, tests, strict=True)
                    ]
                )
                report(
                    f"{room:6} {gate:7} {name:16} ({source}) over the answer:"
                    f" {_summary(scores, normalized, threshold)}"
                )


if __name__ == "__main__":
    main(sys.argv[1:])
