"""Barge-in per room preset (issue 26): self-pauses, pause time, short commands.

Per room preset (``simple``, ``quiet``, ``hard``, ``tv``; each its own fixed
seed), in one run, the satellite's echo path (AEC3) and barge-in replayed
through the room (``bench/barge_in_replay.py``):

- **Self-pauses per 10 minutes of answers**: ``ECHO_S`` of long answers by
  Piper joe and flite (slt, rms, awb), nobody speaking. Every pause is
  audible (the speaker stops for at least 0.4 s); goal 0.
- **Short commands over an answer, word for word**: ``POINTS`` commands
  ("Turn on the fan.", "Stop.", ...) by flite, espeak-ng and joe voices, each
  at its own point of an answer, once the satellite has played a minute and
  more of answers (AEC3 converged); the request the satellite makes of it is
  transcribed with whisper tiny.en and compared word for word with the text.
  Anchor: the same clips transcribed alone by the same model (and, to tell
  the room's part from barge-in's, the clips through the room's mic with no
  answer playing).
- **Onset to paused** of those commands (median and p95): from the voice's
  first loud sample at the mic to the speaker going quiet.
- **CPU** of the satellite's part (echo path and barge-in) per second of audio.

    .venv-satellite/bin/python -m bench.barge_in_rooms   # about 7 minutes
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path
import statistics
import sys
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.barge_in_replay import Replay
from bench.barge_in_stages import Stages, stages as stage_times
from bench.common import figure, header, report
from devstack import speech
from devstack.ear import words
from devstack.room_presets import RATE
from devstack.voices import voice
from voicestack_satellite.mic_format import READ_SAMPLES

ROOMS = ("simple", "quiet", "hard", "tv")
ECHO_S = 600.0
POINTS = 24
ANSWER_TEXTS = (
    (
        "Here is the news from your home tonight, room by room, as it stands."
        " The kitchen light is off, and the living room lamp has been on since six."
        " The fan is off, and everything else in the house is quiet and calm."
    ),
    (
        "Tomorrow will be sunny in the morning, with rain in the afternoon."
        " The wind picks up after four, so bring the washing in before then."
        " On Sunday it clears again, and the week starts dry and mild."
    ),
    (
        "Your next meeting is with the building manager at half past four."
        " After that there is nothing on the calendar until Thursday morning,"
        " when the plumber comes to look at the heating in the hall."
    ),
)
ANSWER_VOICES = ("joe", "flite-slt", "flite-rms", "flite-awb")
COMMANDS = (
    "Turn on the fan.",
    "Stop.",
    "Turn off the light.",
    "Stop, turn off the fan instead.",
)
COMMAND_VOICES = (
    "flite-slt",
    "flite-rms",
    "flite-awb",
    "espeak-us-f3",
    "espeak-gb",
    "joe",
)
PAUSE_MEDIAN_GOAL_S, PAUSE_P95_GOAL_S = 0.150, 0.250
WORD_GOALS = {"quiet": 22, "hard": 20}


def answer_pcm(index: int) -> np.ndarray:
    """The ``index``-th long answer (text and voice cycle)."""
    text = ANSWER_TEXTS[index % len(ANSWER_TEXTS)]
    said = voice(ANSWER_VOICES[index % len(ANSWER_VOICES)]).say(text)
    return np.frombuffer(said, dtype=np.int16)


def command(index: int) -> tuple[str, bytes]:
    """The ``index``-th command: its text and its voice's clip."""
    text = COMMANDS[index % len(COMMANDS)]
    name = COMMAND_VOICES[index % len(COMMAND_VOICES)]
    return text, voice(name).say(text)


def heard_right(pcm: bytes, text: str) -> tuple[bool, str]:
    """Whether whisper tiny.en hears ``text`` word for word in ``pcm``; what it heard."""
    heard = speech.transcribe(speech.pad(pcm, 0.2, 0.2))
    return words(heard) == words(text), heard


async def self_pauses(
    room: str, seconds: float = ECHO_S
) -> tuple[int, int, float, float]:
    """(pauses, reported, seconds played, CPU s) over answers with nobody talking.

    The CPU is the satellite's part: its echo path and barge-in.
    """
    replay = Replay(room)
    played = await play_answers(replay, seconds)
    return len(replay.speaker.pauses), len(replay.reports), played, replay.cpu_s


async def play_answers(replay: Replay, seconds: float) -> float:
    """Long answers one after the other, nobody talking, ``seconds`` of them.

    Returns the seconds played (the last answer is played whole).
    """
    played = 0.0
    for index in itertools.count():
        if played >= seconds:
            break
        pcm = answer_pcm(index)
        replay.speaker.start(pcm)
        await replay.play_out()
        replay.end_request()  # a self-report's "request" (counted, then dropped)
        await replay.run(0.5)
        played += len(pcm) / RATE
    return played


async def commands(
    room: str,
    echo_backend: str | None = None,
    *,
    chunk: int = READ_SAMPLES,
    stages: list[Stages] | None = None,
    replay: Replay | None = None,
) -> tuple[list[tuple[bool, str, str]], list[float]]:
    """Per command: (word for word, text, heard); and each onset-to-paused time.

    ``echo_backend``: the echo canceller's (None: the satellite's default);
    ``chunk``: the mic chunk; ``stages``: each pause's stages added to it;
    ``replay``: the room's replay to use (``bench/request_audio.py`` records it).
    """
    if replay is None:
        replay = Replay(room, echo_backend=echo_backend, chunk=chunk)
    results: list[tuple[bool, str, str]] = []
    delays: list[float] = []
    for index in range(len(ANSWER_VOICES) * 2):  # AEC3 converged
        replay.speaker.start(answer_pcm(index))
        await replay.play_out()
        replay.end_request()
    for trial in range(POINTS):
        pcm = answer_pcm(trial)
        replay.speaker.start(pcm)
        # 24 points from 0.6 s into the answer to 2 s before its end.
        span = len(pcm) / RATE - 2.6
        await replay.run(0.6 + span * ((trial * 7) % POINTS) / (POINTS - 1))
        text, clip = command(trial)
        said = replay.say(clip)
        pauses = len(replay.speaker.pauses)
        replay.trace = []
        await replay.run((said.end - replay.air.written) / RATE + 0.8)
        late = [p for p in replay.speaker.pauses[pauses:] if p >= said.onset - 800]
        if late:
            delays.append((late[0] - said.onset) / replay.air.rate)
            if stages is not None:
                stages.append(
                    stage_times(
                        replay.trace, said.onset, late[0], chunk, replay.air.rate
                    )
                )
        replay.trace = None
        request = replay.end_request()
        if request is None:
            results.append((False, text, "(not caught)"))
        else:
            ok, heard = heard_right(request.tobytes(), text)
            results.append((ok, text, heard))
        replay.barge_in.abandon(resume=False)
        replay.speaker.flush()
        await replay.run(1.0)
    return results, delays


def anchors() -> int:
    """How many of the commands whisper tiny.en hears word for word alone."""
    return sum(heard_right(command(t)[1], command(t)[0])[0] for t in range(POINTS))


async def room_anchors(room: str) -> int:
    """How many of the commands it hears word for word in ``room``'s mic, no answer."""
    replay, right = Replay(room), 0
    for trial in range(POINTS):
        text, clip = command(trial)
        replay.recording = []
        said = replay.say(clip)
        await replay.run((said.end - replay.air.written) / RATE + 0.5)
        right += heard_right(np.concatenate(replay.recording).tobytes(), text)[0]
    return right


def p95(values: list[float]) -> float:
    """The 95th percentile (nearest rank)."""
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, round(0.95 * len(ranked) + 0.5) - 1)]


async def room_figures(room: str, alone: int) -> None:
    """Every figure of one room preset."""
    started = time.process_time()
    pauses, reported, played, cpu_s = await self_pauses(room)
    figure(
        f"[{room}] self-pauses per 10 min of answers",
        pauses * 600 / played,
        "",
        detail=f" ({pauses} pauses, {reported} reported, in {played:.0f} s)",
        goal=("0", pauses == 0),
    )
    figure(
        f"[{room}] satellite CPU (echo path and barge-in)",
        cpu_s / played * 1000,
        "ms per s of audio",
    )
    results, delays = await commands(room)
    right = sum(ok for ok, _text, _heard in results)
    goal = WORD_GOALS.get(room)
    figure(
        f"[{room}] short commands over an answer, word for word",
        right,
        f"of {POINTS}",
        anchor=("the same clips alone", alone),
        goal=None if goal is None else (f">= {goal} of {POINTS}", right >= goal),
        precision=0,
    )
    report(
        f"    the same clips in this room's mic, no answer playing:"
        f" {await room_anchors(room)} of {POINTS}"
    )
    for ok, text, heard in results:
        if not ok:
            report(f"    {text!r} heard as {heard!r}")
    if delays:
        middle, high = statistics.median(delays), p95(delays)
        figure(
            f"[{room}] onset to paused",
            middle,
            "s median",
            detail=f", p95 {high:.3f} s ({len(delays)} of {POINTS} paused)",
            goal=(
                f"<= {PAUSE_MEDIAN_GOAL_S} s, p95 <= {PAUSE_P95_GOAL_S} s",
                middle <= PAUSE_MEDIAN_GOAL_S and high <= PAUSE_P95_GOAL_S,
            ),
            precision=3,
        )
    report(
        f"[{room}] bench CPU {time.process_time() - started:.0f} s"
        " (room, satellite and whisper)"
    )


async def main_async(rooms: tuple[str, ...]) -> None:
    """Every room, in order."""
    alone = anchors()
    report(f"anchor: {alone} of {POINTS} commands word for word alone (tiny.en)")
    for room in rooms:
        await room_figures(room, alone)


def main() -> None:
    """Print every figure (rooms named on the command line, else all)."""
    header("barge-in per room (issue 26)")
    asyncio.run(main_async(tuple(sys.argv[1:]) or ROOMS))


if __name__ == "__main__":
    main()
