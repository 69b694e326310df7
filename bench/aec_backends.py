"""Which package runs the satellite's echo canceller: ``livekit``, ``pywebrtc-audio`` or ``aec-audio-processing``.

All three ship WebRTC's AEC3; ``livekit`` and ``pywebrtc-audio`` have wheels for
x86-64 and aarch64, ``aec-audio-processing`` is built from source. Per room
preset (``simple``, ``quiet``, ``hard``, ``tv``), each backend runs the
satellite's own echo path and barge-in, replayed through the room
(``bench/barge_in_replay.py``), in one run:

- **ERLE**: the echo's power in the mic over what the canceller leaves of it,
  over ``ERLE_S`` of answers in the same room without its noise (the noise
  would cap it at the room's echo-to-noise ratio), from ``SETTLE_S`` on;
- **self-pauses per 10 minutes**: ``ECHO_S`` of answers (Piper joe, flite)
  with nobody talking, the room as it is (noise, drift, clipping speaker);
  every pause is audible; goal 0. A room whose noise is a TV's babble (voices,
  which barge-in pauses on by design) is run twice, same seed, same answers:
  with the TV muted (the pauses on the echo alone: the self-pauses) and as it
  is (the pauses with the TV talking; their excess over the echo alone is the
  TV's);
- **CPU**: the echo path's process time per second of audio (every thread of
  the process: ``livekit`` runs its canceller behind a Rust FFI);
- **short commands over an answer, word for word** (double talk: what the
  canceller leaves of a voice talking over the answer; barge-in's capture
  hears it): ``bench/barge_in_rooms.py``'s 24 commands, transcribed with
  whisper tiny.en, and their onset-to-paused median.

The anchor of each figure is ``aec-audio-processing`` (AEC3 as it was the
default) in the same room in the same run; the ratio is each other's over it.

    .venv-satellite/bin/python -m bench.aec_backends [ECHO_S] [ROOM ...]
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from pathlib import Path
import sys
import time

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench.barge_in_replay import Replay
from bench.barge_in_rooms import POINTS, ROOMS, commands, play_answers
from bench.common import figure, header, report
from devstack.room_presets import RATE, preset

BACKENDS = ("livekit", "pywebrtc", "aec3")
ANCHOR = "aec3"
ECHO_S = 600.0
ERLE_S = 120.0
SETTLE_S = 5.0  # the canceller's first convergence is left out of ERLE
FRAME = 160
ECHO_FLOOR = 10 ** (-70 / 10) * 32768.0**2  # a 10 ms frame below -70 dBFS: no echo


@dataclass
class Figures:
    """One backend in one room."""

    pauses: int = 0  # on the echo alone (a TV's babble muted)
    played_s: float = 0.0
    tv_pauses: int | None = None  # the same answers with the TV talking
    tv_played_s: float = 0.0
    erle_db: float = 0.0
    words_right: int = 0  # of POINTS commands over an answer
    paused_s: float = 0.0  # onset to paused, median
    cpu_s: float = 0.0  # echo path, both runs
    audio_s: float = 0.0  # of mic, both runs

    @property
    def pauses_per_10_min(self) -> float:
        """Self-pauses per 600 s of answers."""
        return self.pauses * 600 / self.played_s

    @property
    def tv_pauses_per_10_min(self) -> float:
        """Pauses per 600 s of answers with the TV talking."""
        return (self.tv_pauses or 0) * 600 / max(self.tv_played_s, 1.0)

    @property
    def cpu_ms_per_s(self) -> float:
        """Echo path CPU, ms per second of audio."""
        return self.cpu_s / self.audio_s * 1000


async def _answers(replay: Replay, seconds: float, figures: Figures) -> float:
    """``seconds`` of answers through ``replay``, its echo path timed; played s."""
    process = replay.echo.process

    def timed(mic: np.ndarray, at: int) -> np.ndarray:
        started = time.process_time()
        out = process(mic, at)
        figures.cpu_s += time.process_time() - started
        figures.audio_s += len(mic) / RATE
        return out

    replay.echo.process = timed  # type: ignore[method-assign]
    return await play_answers(replay, seconds)


async def _erle(room: str, backend: str, figures: Figures) -> None:
    """ERLE over ``ERLE_S`` of answers in ``room`` without its noise."""
    replay = Replay(replace(preset(room), noise=None), echo_backend=backend)
    mics: list[np.ndarray] = []
    outs: list[np.ndarray] = []
    process = replay.echo.process

    def kept(mic: np.ndarray, at: int) -> np.ndarray:
        out = process(mic, at)
        mics.append(mic)
        outs.append(out)
        return out

    replay.echo.process = kept  # type: ignore[method-assign]
    await _answers(replay, ERLE_S, figures)
    settle = round(SETTLE_S * RATE)
    mic = np.concatenate(mics)[settle:].astype(np.float64)
    out = np.concatenate(outs)[settle:].astype(np.float64)
    frames = len(mic) // FRAME
    mic_power = np.sum(mic[: frames * FRAME].reshape(frames, FRAME) ** 2, axis=1)
    out_power = np.sum(out[: frames * FRAME].reshape(frames, FRAME) ** 2, axis=1)
    echo = mic_power > ECHO_FLOOR * FRAME
    figures.erle_db = 10 * np.log10(
        mic_power[echo].sum() / max(out_power[echo].sum(), 1.0)
    )


async def measure(room: str, backend: str, echo_s: float) -> Figures:
    """Every figure of ``backend`` in ``room``."""
    figures = Figures()
    await _erle(room, backend, figures)
    replay = Replay(room, echo_backend=backend)
    figures.played_s = await _answers(replay, echo_s, figures)
    figures.pauses = len(replay.speaker.pauses)
    if preset(room).noise == "babble":  # again with the TV muted: same seed, answers
        figures.tv_pauses, figures.tv_played_s = figures.pauses, figures.played_s
        muted = Replay(replace(preset(room), noise=None), echo_backend=backend)
        figures.played_s = await play_answers(muted, echo_s)
        figures.pauses = len(muted.speaker.pauses)
    results, delays = await commands(room, backend)
    figures.words_right = sum(ok for ok, _text, _heard in results)
    figures.paused_s = float(np.median(delays)) if delays else float("nan")
    return figures


def _print(room: str, figures: dict[str, Figures]) -> dict[str, bool]:
    """The room's figures against the anchor; per backend, whether it is no worse."""
    anchor = figures[ANCHOR]
    for name, fig in figures.items():
        figure(
            f"[{room}] {name}: ERLE (noiseless room)",
            fig.erle_db,
            "dB",
            anchor=None if name == ANCHOR else (ANCHOR, anchor.erle_db),
        )
        muted = "" if fig.tv_pauses is None else " (the echo alone: the TV muted)"
        figure(
            f"[{room}] {name}: self-pauses per 10 min{muted}",
            fig.pauses_per_10_min,
            "",
            detail=f" ({fig.pauses} in {fig.played_s:.0f} s)",
            anchor=None if name == ANCHOR else (ANCHOR, anchor.pauses_per_10_min),
        )
        if fig.tv_pauses is not None:
            figure(
                f"[{room}] {name}: pauses per 10 min with the TV talking",
                fig.tv_pauses_per_10_min,
                "",
                detail=f" ({fig.tv_pauses} in {fig.tv_played_s:.0f} s;"
                f" {fig.tv_pauses - fig.pauses:+d} beyond the echo alone)",
                anchor=None
                if name == ANCHOR
                else (ANCHOR, anchor.tv_pauses_per_10_min),
            )
        figure(
            f"[{room}] {name}: echo path CPU",
            fig.cpu_ms_per_s,
            "ms per s of audio",
            anchor=None if name == ANCHOR else (ANCHOR, anchor.cpu_ms_per_s),
        )
        figure(
            f"[{room}] {name}: short commands over an answer, word for word",
            fig.words_right,
            f"of {POINTS}",
            detail=f", onset to paused {fig.paused_s:.3f} s median",
            anchor=None if name == ANCHOR else (ANCHOR, anchor.words_right),
            precision=0,
        )
    verdicts = {}
    for name, other in figures.items():
        if name == ANCHOR:
            continue
        verdicts[name] = (
            other.erle_db >= anchor.erle_db - 0.5
            and other.pauses <= anchor.pauses
            and other.words_right >= anchor.words_right
        )
        report(
            f"[{room}] {name} no worse than {ANCHOR} (ERLE within 0.5 dB or better,"
            f" no more self-pauses on the echo, no fewer commands):"
            f" {'yes' if verdicts[name] else 'NO'}"
        )
    return verdicts


async def main_async(echo_s: float, rooms: tuple[str, ...]) -> None:
    """Every room, both backends."""
    verdicts = []
    for room in rooms:
        figures = {name: await measure(room, name, echo_s) for name in BACKENDS}
        verdicts.append(_print(room, figures))
    for name in BACKENDS[:-1]:
        every = all(room[name] for room in verdicts)
        report(f"{name} no worse in every room: {'yes' if every else 'NO'}")


def main() -> None:
    """Print every figure (``ECHO_S`` and rooms from the command line)."""
    header("echo canceller backends per room (issue 29)")
    args = sys.argv[1:]
    echo_s = float(args.pop(0)) if args and args[0][0].isdigit() else ECHO_S
    asyncio.run(main_async(echo_s, tuple(args) or ROOMS))


if __name__ == "__main__":
    main()
