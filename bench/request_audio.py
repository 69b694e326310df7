"""What speech-to-text hears of a request in each room, with and without clean-up.

Issue 26's short commands are word for word in the hard room's mic only 6 of
24 times even with no answer playing: the room itself (RT60 0.55 s, the user
3 m away, a fan at 10 dB SNR) is what whisper tiny.en fails on. This measures
whether cleaning the request audio helps, per room preset, in one run:

- **Through the room alone**: the 24 commands of ``bench/barge_in_rooms.py``
  said into the room's mic with nothing playing; the whole mic recording goes
  through each candidate, 20 ms read by 20 ms as the satellite reads it, and
  each command's stretch is transcribed. Anchor: the clips alone.
- **Over an answer**: the same bench's commands said over an answer (AEC3 and
  barge-in replayed); each request the satellite made is transcribed as made
  (``as now``), and with the mic from the onset on taken through the candidate
  instead (what the satellite would send were the candidate on its request
  audio; the candidate ran over the whole mic, so it had the room before).
- **CPU** per second of audio of each candidate.

Candidates: speex noise suppression (``enhance.py``, Home Assistant's 0-4
scale), WebRTC's noise suppressor (``pywebrtc-audio``, levels 0-3, as in
``webrtc-noise-gain`` that wyoming-satellite uses) with and without its
high-pass filter and adaptive gain, and ``livekit``'s (no levels).

    .venv-satellite/bin/python -m bench.request_audio [room ...]   # ~11 min per room at load 5-10
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import partial
from pathlib import Path
import sys
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.barge_in_replay import Replay
from bench.barge_in_rooms import POINTS, command, commands, heard_right
from bench.common import figure, header, report
from devstack.room_presets import RATE
from voicestack_satellite.enhance import MicEnhancer
from voicestack_satellite.mic_format import READ_SAMPLES

ROOMS = ("simple", "quiet", "hard")
Process = Callable[[np.ndarray], np.ndarray]


def _speex(level: int) -> Process:
    return MicEnhancer(0, level).process


def _webrtc(ns_level: int = 1, **options: bool) -> Process:
    from pywebrtc_audio import AudioProcessor

    apm = AudioProcessor(RATE, 1, ns_level=ns_level, **options)
    return lambda mic: np.asarray(apm.process(mic), dtype=np.int16)


def _webrtc_ns(level: int) -> Process:
    from pywebrtc_audio import NoiseSuppressor

    suppressor = NoiseSuppressor(RATE, 1, level)
    return lambda mic: np.asarray(suppressor.process(mic), dtype=np.int16)


def _livekit() -> Process:
    from livekit.rtc import AudioFrame, AudioProcessingModule

    apm = AudioProcessingModule(noise_suppression=True, high_pass_filter=True)

    def process(mic: np.ndarray) -> np.ndarray:
        out = []
        for start in range(0, len(mic), 160):
            frame = AudioFrame(
                bytearray(mic[start : start + 160].tobytes()), RATE, 1, 160
            )
            apm.process_stream(frame)
            out.append(np.frombuffer(frame.data.tobytes(), np.int16))
        return np.concatenate(out)

    return process


CANDIDATES: dict[str, Callable[[], Process | None]] = {
    "as now": lambda: None,
    **{f"speex ns {n}": partial(_speex, n) for n in range(1, 5)},
    **{f"webrtc ns {n}": partial(_webrtc_ns, n) for n in range(4)},
    "webrtc high-pass": lambda: _webrtc(high_pass_filter=True),
    "webrtc high-pass + ns 1": lambda: _webrtc(
        high_pass_filter=True, noise_suppression=True, ns_level=1
    ),
    "webrtc ns 1 + gain": lambda: _webrtc(
        noise_suppression=True, ns_level=1, auto_gain_control=True
    ),
    "livekit ns + high-pass": _livekit,
}


def through(name: str, mic: np.ndarray) -> tuple[np.ndarray, float]:
    """``mic`` through candidate ``name`` a read at a time; and its CPU seconds."""
    process = CANDIDATES[name]()
    if process is None:
        return mic, 0.0
    started = time.process_time()
    reads = range(0, len(mic) - len(mic) % READ_SAMPLES, READ_SAMPLES)
    out = [process(mic[start : start + READ_SAMPLES]) for start in reads]
    return np.concatenate(out), time.process_time() - started


async def alone(room: str) -> tuple[np.ndarray, list[tuple[str, int, int]]]:
    """The room's mic over the 24 commands, nothing playing; (text, start, end) each."""
    replay = Replay(room)
    replay.recording = []
    await replay.run(2.0)  # the room's noise before anyone speaks
    spans = []
    for trial in range(POINTS):
        text, clip = command(trial)
        start = replay.mic_end
        said = replay.say(clip)
        await replay.run((said.end - replay.air.written) / RATE + 0.5)
        spans.append((text, start, replay.mic_end))
    return np.concatenate(replay.recording), spans


class RecordingReplay(Replay):
    """A replay that keeps the whole mic, and each request with where it began."""

    def __init__(self, room: str) -> None:
        """``room``'s preset, recording from the start."""
        super().__init__(room)
        self.recording = []
        # Per end_request: (audio, start, onset), None when none streamed.
        self.made: list[tuple[np.ndarray, int, int] | None] = []

    def end_request(self) -> np.ndarray | None:
        """As ``Replay``'s, and kept with where it began."""
        audio = super().end_request()
        made = None
        if audio is not None:
            _first, start, onset = self.requests[-1]
            made = (audio, start, onset)
        self.made.append(made)
        return audio


async def over(room: str) -> tuple[np.ndarray, list[tuple[str, np.ndarray, int, int]]]:
    """The mic while commands are said over answers; (text, request, start, onset)."""
    replay = RecordingReplay(room)
    results, _delays = await commands(room, replay=replay)
    assert replay.recording is not None
    made = replay.made[-len(results) :]  # one per command, after the converging
    caught = [
        (text, *request)
        for (_ok, text, _heard), request in zip(results, made, strict=True)
        if request is not None
    ]
    return np.concatenate(replay.recording), caught


def right_alone(mic: np.ndarray, spans: list[tuple[str, int, int]]) -> int:
    """How many of the commands' stretches of ``mic`` are heard word for word."""
    return sum(heard_right(mic[a:b].tobytes(), text)[0] for text, a, b in spans)


def right_over(
    mic: np.ndarray | None, caught: list[tuple[str, np.ndarray, int, int]]
) -> int:
    """How many requests are heard word for word (as made when ``mic`` is None)."""
    right = 0
    for text, made, start, onset in caught:
        request = made
        if mic is not None:  # the capture before the onset, the candidate's from it
            kept = max(0, onset - start)
            end = start + len(made)
            request = np.concatenate([made[:kept], mic[start + kept : end]])
        right += heard_right(request.tobytes(), text)[0]
    return right


async def room_figures(room: str, anchor: int) -> None:
    """Every candidate's figures in one room preset."""
    quiet_mic, spans = await alone(room)
    busy_mic, caught = await over(room)
    report(f"[{room}] {len(caught)} of {POINTS} commands over an answer made a request")
    for name in CANDIDATES:
        cleaned, cpu_s = through(name, quiet_mic)
        figure(
            f"[{room}] {name}: through the room alone, word for word",
            right_alone(cleaned, spans),
            f"of {POINTS}",
            anchor=("the clips alone", anchor),
            precision=0,
        )
        busy, more_cpu_s = through(name, busy_mic)
        figure(
            f"[{room}] {name}: over an answer, word for word",
            right_over(None if name == "as now" else busy, caught),
            f"of {POINTS}",
            anchor=("the clips alone", anchor),
            precision=0,
        )
        seconds = (len(quiet_mic) + len(busy_mic)) / RATE
        figure(
            f"[{room}] {name}: CPU",
            (cpu_s + more_cpu_s) / seconds * 1000,
            "ms per s of audio",
        )


async def main_async(rooms: tuple[str, ...]) -> None:
    """Every room, in order."""
    anchor = sum(heard_right(command(t)[1], command(t)[0])[0] for t in range(POINTS))
    report(f"anchor: {anchor} of {POINTS} commands word for word alone (tiny.en)")
    for room in rooms:
        await room_figures(room, anchor)


def main() -> None:
    """Print every figure (rooms named on the command line, else all)."""
    header("request audio per room (issue 26)")
    asyncio.run(main_async(tuple(sys.argv[1:]) or ROOMS))


if __name__ == "__main__":
    main()
