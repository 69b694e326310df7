"""Barge-in's onset rule and the echo level it leans on, with the real VAD.

What a real room does to them (self-pauses per 10 minutes of answers, per
room preset) is measured in bench/barge_in_rooms.py; these pin the two rules
that removed them in the ``simple`` and ``quiet`` rooms and cut them in
``hard``: the echo's level dies away with the room's reverberation instead of
ending 0.3 s after the answer, and the room's noise floor is no voice.
"""

from __future__ import annotations

import numpy as np

from devstack import speech
from voicestack_satellite.echo_path import ECHO_SPREAD_S, EchoPath
from voicestack_satellite.speech_over import SpeechOverAnswer

RATE = 16000
CHUNK = 1280


def test_the_echo_level_dies_away_with_the_rooms_reverberation() -> None:
    """0.3 s after the answer stops, the room still rings: the level says so."""
    path = EchoPath("gate", RATE)
    path.settle_s = 0.0  # a run's first second: tests/satellite/test_echo_settle.py
    loud = np.full(CHUNK, 8000, dtype=np.int16)
    levels = []
    for index in range(20):  # 0.4 s of a loud answer, then 1.2 s of silence
        at = index * CHUNK
        path.clock.heard(at + CHUNK, (at + CHUNK) / RATE)  # read when it ended
        if index < 5:
            path.on_written(loud, at / RATE)
        path.process(np.zeros(CHUNK, dtype=np.int16), at)
        levels.extend(path.echo_levels())

    stopped = 5 * CHUNK // 160  # the window the answer stopped in
    peak = max(levels)
    after = levels[stopped + round(ECHO_SPREAD_S * 100) + 20]  # 0.5 s later
    assert peak == 8000
    # RT60 0.7 s at the slowest: 60 dB in 0.7 s, so 0.2 s into the decay
    # about 17 dB down, never nothing.
    assert peak * 10 ** (-20 / 20) < after < peak * 10 ** (-12 / 20)
    assert levels[-1] < after


def _chunks(samples: np.ndarray) -> list[np.ndarray]:
    return [samples[at : at + CHUNK] for at in range(0, len(samples), CHUNK)]


def test_the_rooms_noise_is_no_voice_when_the_answer_is_quiet() -> None:
    """The raw mic holds speech (the VAD says so), the cancelled mic only a fan.

    With the answer quiet its echo level is near nothing; what is left in the
    cancelled mic is the room's noise, steady: no window of it is speech. A
    voice 20 dB over that noise, in both mics, is.
    """
    voice = np.frombuffer(speech.speak("Turn on the fan in the kitchen."), np.int16)
    voice = voice[: len(voice) - len(voice) % CHUNK]
    rng = np.random.default_rng(26)
    noise = rng.normal(0.0, 100.0, len(voice)).astype(np.int16)
    over = SpeechOverAnswer()
    quiet_echo = np.zeros(CHUNK // 160)

    settled = []
    for chunk, fan in zip(_chunks(voice), _chunks(noise), strict=True):
        settled += over.judge(chunk, fan, quiet_echo, listen=True)
    talking = []
    for chunk in _chunks(voice):
        mixed = np.clip(chunk.astype(np.int32) + noise[: len(chunk)], -32768, 32767)
        talking += over.judge(chunk, mixed.astype(np.int16), quiet_echo, listen=True)

    assert not any(speech for _loud, speech in settled)
    assert sum(speech for _loud, speech in talking) >= 50  # half a second and more


def test_the_floor_is_not_pulled_down_where_the_echo_is_suppressed() -> None:
    """AEC3 takes the room's noise down with the echo: the floor ignores that.

    A fan (RMS 100) sets the floor; then the answer plays 2 s (its echo level
    loud) and the cancelled mic holds the fan 30 dB down, as AEC3's suppressor
    leaves it while it converges; then the answer is quiet and the fan is back.
    The VAD hears speech in the raw mic all along (the answer), so only the
    floor stands between the fan and a pause: none of its windows is speech.
    (A floor that followed the suppressed fan down took 50 s of answers to
    climb back, and the fan paused them: bench/barge_in_rooms.py, ``hard``.)
    """
    voice = np.frombuffer(speech.speak("Turn on the fan in the kitchen."), np.int16)
    voice = voice[: len(voice) - len(voice) % CHUNK]
    rng = np.random.default_rng(26)
    over = SpeechOverAnswer()
    windows = CHUNK // 160

    def fan(scale: float) -> np.ndarray:
        return (rng.normal(0.0, 100.0 * scale, CHUNK)).astype(np.int16)

    for _ in range(12):  # about 1 s of the fan alone, nothing played
        over.judge(np.zeros(CHUNK, np.int16), fan(1.0), np.zeros(windows), listen=True)
    for chunk in _chunks(voice)[:25]:  # 2 s of the answer, the fan suppressed
        over.judge(chunk, fan(10 ** (-30 / 20)), np.full(windows, 3000.0), listen=True)
    gap = []
    for chunk in _chunks(voice)[:12]:  # the answer quiet: the fan is back
        gap += over.judge(chunk, fan(1.0), np.zeros(windows), listen=True)

    assert not any(speech for _loud, speech in gap)
