"""The voice gate on a short command over an answer, in the harness's hard room.

Issue 26's journey "an enrolled user's barge-in" in the hard room: Piper joe
enrolls there (the three default phrases as the satellite's mic hears them,
AEC3 on), then says "Turn on the fan." (0.8 s of speech) ten times over a long
answer; espeak-ng en-gb says the same from the room's other place. The audio is
``bench/gate_rooms.py``'s replay (the room preset's fixed seed, the satellite's
own echo canceller); the verdicts are the satellite's ``VoiceGate.whose``.

*Taken* is what Home Assistant does with the verdict: enrolled, or not sure
with a cohort-normalized score of 0 or more (then a command for the home is
the user's, docs/barge-in.md).
"""

from __future__ import annotations

import numpy as np

from bench.barge_in_gate import ENROLL_PHRASES
from bench.gate_rooms import SHORT, THRESHOLD, _heard
from devstack.voices import voice
from voicestack_satellite.voice_gate import LOOP_S, GateVerdict, VoiceGate
from voicestack_satellite.voiceprint import SpeakerEncoder
from voicestack_satellite.voiceprint.encoder import loop

PEOPLE = ("person.joe",)


def _taken(verdict: GateVerdict) -> bool:
    if verdict.verdict == "enrolled":
        return True
    score = verdict.score
    return verdict.verdict == "unsure" and score is not None and score.normalized >= 0


def _said(name: str, texts: tuple[str, ...]) -> list[np.ndarray]:
    speaker = voice(name)
    return [np.frombuffer(speaker.say(text), np.int16) for text in texts]


async def test_a_short_command_in_the_hard_room_is_the_users_and_only_his() -> None:
    """9 of 10 taken (zero-padded, as before 2026-11-28: 4 of 10); espeak-ng's never."""
    gate = VoiceGate()
    try:
        enrolled, _ = _heard("hard", _said("joe", ENROLL_PHRASES), "user", False)
        mean = np.mean([await gate.embed(phrase) for phrase in enrolled], axis=0)
        prints = (mean / np.linalg.norm(mean))[None]
        joe, _ = _heard("hard", _said("joe", (SHORT,) * 10), "user", True)
        other, _ = _heard("hard", _said("espeak-gb", (SHORT,) * 10), "other", True)
        joe_taken = [
            _taken(await gate.whose(w, PEOPLE, prints, THRESHOLD)) for w in joe
        ]
        padded = [
            _taken(gate.judge(await gate.embed(w), PEOPLE, prints, THRESHOLD))
            for w in joe
        ]
        other_taken = [
            _taken(await gate.whose(w, PEOPLE, prints, THRESHOLD)) for w in other
        ]
    finally:
        gate.close()

    assert sum(joe_taken) >= 9, joe_taken
    assert sum(padded) <= 4, padded  # what looping the speech changed
    assert not any(other_taken), other_taken


def test_short_speech_is_looped_and_long_speech_left_as_it_is() -> None:
    """Only speech shorter than asked is repeated, from its start, to the length."""
    wav = np.arange(16000, dtype=np.float32)  # 1 s
    looped = loop(wav, 2.5)
    assert len(looped) == 40000
    assert np.array_equal(looped[16000:32000], wav)
    assert np.array_equal(looped[32000:], wav[:8000])
    assert loop(wav, 1.0) is wav
    assert len(loop(np.zeros(0, np.float32), 3.2)) == 0


def test_looping_leaves_a_voice_its_own() -> None:
    """Looped, a short command is still closer to its speaker than to another voice."""
    encoder = SpeakerEncoder.from_resemblyzer()
    joe_print = encoder.embed_pcm(_said("joe", ENROLL_PHRASES[:1])[0])
    joe, other = _said("joe", (SHORT,))[0], _said("espeak-gb", (SHORT,))[0]
    own = float(joe_print @ encoder.embed_pcm(joe, loop_s=LOOP_S))
    others = float(joe_print @ encoder.embed_pcm(other, loop_s=LOOP_S))
    assert own - others > 0.15, (own, others)
