"""Time to a voiceprint: the satellite's numpy speaker encoder vs Resemblyzer + torch.

Embeds the first 1.0, 1.4, 1.5 and 3.0 s of Piper speech (from its onset) with
``voicestack_satellite.voiceprint`` (preprocessing, mel spectrogram, LSTM) and, as
the anchor in the same run, with Resemblyzer's own ``preprocess_wav`` +
``VoiceEncoder.embed_utterance`` on torch. Each runs in its own subprocess pinned
to one core with one BLAS/torch thread; the figure is the median wall time of
several calls after a warm-up (model loading is reported apart).

The anchor needs torch, which no project venv has: it runs in the throwaway venv
that scripts/make_ge2e_reference.py describes (``.cache/ge2e-ref/venv``, or the
Python named by ``VOICESTACK_GE2E_PYTHON``); without it only the port is measured.

Goal: the voice gate's verdict within 1.5 s of speech onset, that is 1.4 s of
speech plus its embedding in at most 1.5 s.

    .venv-satellite/bin/python bench/voiceprint.py     # ~20 s
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time
from typing import Any

if __package__ in {None, ""}:  # run as a file: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

REPO = Path(__file__).resolve().parents[1]
ANCHOR_PYTHON = Path(
    os.environ.get("VOICESTACK_GE2E_PYTHON", REPO / ".cache/ge2e-ref/venv/bin/python")
)
DURATIONS_S = (1.0, 1.4, 1.5, 3.0)
GATE_SPEECH_S = 1.4
GATE_DEADLINE_S = 1.5
REPEATS = 15
TEXT = (
    "Could you please remind me to water the plants on the balcony "
    "before I leave for work tomorrow morning."
)
ONE_THREAD = dict.fromkeys(
    ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), "1"
)


def worker(kind: str, audio_path: str) -> None:
    """Measure one implementation on one core; print JSON (runs in a subprocess)."""
    os.sched_setaffinity(0, {max(os.sched_getaffinity(0))})
    sys.path.insert(0, str(REPO / "satellite"))
    import numpy as np

    clips = dict(np.load(audio_path))
    started = time.perf_counter()
    if kind == "numpy":
        from voicestack_satellite.voiceprint import SpeakerEncoder

        encoder = SpeakerEncoder.from_resemblyzer()
        embed = encoder.embed_pcm
    else:
        from resemblyzer import VoiceEncoder, preprocess_wav
        import torch

        torch.set_num_threads(1)
        model = VoiceEncoder("cpu", verbose=False)

        def embed(samples: np.ndarray) -> np.ndarray:
            wav = samples.astype(np.float32) / np.float32(32768.0)
            return model.embed_utterance(preprocess_wav(wav))

    load_ms = (time.perf_counter() - started) * 1000
    results: dict[str, Any] = {"load_ms": load_ms}
    for name, samples in clips.items():
        embedding = embed(samples)  # warm-up
        times = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            embed(samples)
            times.append((time.perf_counter() - started) * 1000)
        results[name] = {"ms": sorted(times), "embedding": embedding.tolist()}
    print(json.dumps(results))


def measure(python: Path, kind: str, audio_path: Path) -> dict[str, Any]:
    """Run ``worker`` in ``python`` and return its figures."""
    result = subprocess.run(
        [python, __file__, "--worker", kind, str(audio_path)],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | ONE_THREAD,
        cwd=REPO,
    )
    return json.loads(result.stdout)


def main() -> None:
    """Print the timings of both implementations and the goal's verdict."""
    import numpy as np

    from bench.common import RATE, figure, header, median, report, spoken
    from devstack.speech import SPEECH_LEVEL

    header("voiceprint: time to embed speech, one core")
    voice = spoken(TEXT)
    onset = int(np.flatnonzero(np.abs(voice.astype(np.int32)) > SPEECH_LEVEL)[0])
    clips = {f"{s:.1f}": voice[onset : onset + round(s * RATE)] for s in DURATIONS_S}
    report(f"speech: Piper joe from its onset; {REPEATS} calls each after a warm-up")
    with tempfile.TemporaryDirectory() as folder:
        audio_path = Path(folder) / "clips.npz"
        np.savez(audio_path, **clips)
        port = measure(Path(sys.executable), "numpy", audio_path)
        anchor: dict[str, Any] | None = None
        if ANCHOR_PYTHON.exists():
            anchor = measure(ANCHOR_PYTHON, "resemblyzer", audio_path)
        else:
            report(f"anchor: no {ANCHOR_PYTHON} (see the docstring): port only")

    def anchor_of(value: float) -> tuple[str, float] | None:
        return ("Resemblyzer + torch", value) if anchor else None

    figure(
        "import + load the model",
        port["load_ms"],
        "ms",
        anchor=anchor_of(anchor["load_ms"] if anchor else 0.0),
    )
    for name in clips:
        times = port[name]["ms"]
        goal = None
        if float(name) == GATE_SPEECH_S:
            verdict_s = GATE_SPEECH_S + median(times) / 1000
            goal = (
                f"verdict {verdict_s:.3f} s after onset <= {GATE_DEADLINE_S} s",
                verdict_s <= GATE_DEADLINE_S,
            )
        figure(
            f"embed {name} s of speech",
            median(times),
            "ms",
            detail=f" (min {min(times):.1f}, max {max(times):.1f})",
            anchor=anchor_of(median(anchor[name]["ms"]) if anchor else 0.0),
            goal=goal,
        )
        if anchor:
            ours = np.array(port[name]["embedding"])
            theirs = np.array(anchor[name]["embedding"])
            difference = float(np.abs(ours - theirs).max())
            report(
                f"  max abs difference from Resemblyzer's embedding: {difference:.1e}"
            )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], sys.argv[3])
    else:
        main()
