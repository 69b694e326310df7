"""Resemblyzer's GE2E speaker encoder, run with numpy.

The network: a 3-layer LSTM (40 mel channels in, 256 hidden), a 256 -> 256 linear
layer on the last layer's final hidden state, ReLU, L2 normalization. An utterance
is cut into 1.6 s partial windows (160 frames, 1.3 windows per second); its embedding
is the normalized mean of the partials' embeddings, as in
``resemblyzer.VoiceEncoder.embed_utterance``.

The weights are Resemblyzer's own ``pretrained.pt``, read from the installed
``resemblyzer`` package without importing it (its ``__init__`` imports torch).
"""

from __future__ import annotations

from dataclasses import dataclass
import importlib.util
from pathlib import Path

import numpy as np

from .features import (
    HOP,
    N_MELS,
    SAMPLE_RATE,
    mel_spectrogram,
    pcm_to_float,
    preprocess,
)
from .weights import CheckpointError, read_legacy_checkpoint

PARTIAL_FRAMES = 160  # 1.6 s of 10 ms frames
PARTIAL_RATE = 1.3  # partial windows per second of audio
MIN_COVERAGE = 0.75  # a last, shorter window counts when it is at least this full
HIDDEN = 256
LAYERS = 3


class WeightsMissingError(RuntimeError):
    """Resemblyzer's weights are not installed where the encoder looks for them."""


class NoSpeechError(ValueError):
    """The audio holds no speech once silences are trimmed: nothing to embed."""


def resemblyzer_weights_path() -> Path:
    """Where the installed ``resemblyzer`` package keeps ``pretrained.pt``.

    Found through the import system without running the package (which would
    import torch). Raises ``WeightsMissingError`` naming the install command.
    """
    spec = importlib.util.find_spec("resemblyzer")
    locations = list(spec.submodule_search_locations or []) if spec else []
    for location in locations:
        path = Path(location) / "pretrained.pt"
        if path.is_file():
            return path
    raise WeightsMissingError(
        "the speaker encoder needs Resemblyzer's weights (resemblyzer/pretrained.pt); "
        "install them without torch: pip install --no-deps resemblyzer==0.1.4"
    )


def _expected_shapes() -> dict[str, tuple[int, ...]]:
    """Every weight the encoder uses, with torch's shape for it."""
    shapes: dict[str, tuple[int, ...]] = {}
    for n in range(LAYERS):
        shapes[f"lstm.weight_ih_l{n}"] = (4 * HIDDEN, N_MELS if n == 0 else HIDDEN)
        shapes[f"lstm.weight_hh_l{n}"] = (4 * HIDDEN, HIDDEN)
        shapes[f"lstm.bias_ih_l{n}"] = shapes[f"lstm.bias_hh_l{n}"] = (4 * HIDDEN,)
    return shapes | {"linear.weight": (HIDDEN, HIDDEN), "linear.bias": (HIDDEN,)}


@dataclass(frozen=True)
class _Layer:
    """One LSTM layer's weights, gates reordered to i, f, o, g.

    The i, f and o rows are halved, so their pre-activations come out as x / 2 and
    ``sigmoid(x) = (1 + tanh(x / 2)) / 2`` needs no extra scaling (halving is exact
    in floating point).
    """

    w_ih: np.ndarray  # (4 * HIDDEN, inputs)
    w_hh: np.ndarray  # (4 * HIDDEN, HIDDEN)
    bias: np.ndarray  # b_ih + b_hh

    @classmethod
    def from_torch(cls, w_ih: np.ndarray, w_hh: np.ndarray, bias: np.ndarray) -> _Layer:
        """From torch's layout: gate blocks i, f, g, o along the first axis."""
        return cls(_prepare(w_ih), _prepare(w_hh), _prepare(bias))


def _prepare(weights: np.ndarray) -> np.ndarray:
    i, f, g, o = np.split(weights.astype(np.float32), 4)
    return np.ascontiguousarray(np.concatenate([i / 2, f / 2, o / 2, g]))


class SpeakerEncoder:
    """Turns 16 kHz speech into a 256-float voiceprint (unit length, non-negative)."""

    def __init__(self, state: dict[str, np.ndarray]) -> None:
        """Build from a Resemblyzer ``model_state`` (LSTM and linear weights)."""
        for name, shape in _expected_shapes().items():
            if name not in state:
                raise ValueError(f"speaker encoder weights lack {name}")
            if state[name].shape != shape:
                raise ValueError(f"speaker encoder weight {name} is not {shape}")
        self._layers = [
            _Layer.from_torch(
                state[f"lstm.weight_ih_l{n}"],
                state[f"lstm.weight_hh_l{n}"],
                state[f"lstm.bias_ih_l{n}"] + state[f"lstm.bias_hh_l{n}"],
            )
            for n in range(LAYERS)
        ]
        self._linear_w = state["linear.weight"].astype(np.float32)
        self._linear_b = state["linear.bias"].astype(np.float32)

    @classmethod
    def from_resemblyzer(cls, path: Path | None = None) -> SpeakerEncoder:
        """Load Resemblyzer's pretrained weights (the installed package's by default)."""
        path = path or resemblyzer_weights_path()
        if not path.is_file():
            raise WeightsMissingError(f"speaker encoder weights not found at {path}")
        checkpoint = read_legacy_checkpoint(path)
        state = checkpoint.get("model_state") if isinstance(checkpoint, dict) else None
        if not isinstance(state, dict):
            raise CheckpointError(f"{path} holds no model_state")
        return cls(state)

    def embed_pcm(
        self, samples: np.ndarray, *, loop_s: float | None = None
    ) -> np.ndarray:
        """Voiceprint of 16 kHz mono int16 speech (preprocessing included).

        ``loop_s``: speech shorter than this, once silences are trimmed, is
        repeated end to end until it lasts that long (see ``loop``).
        """
        if samples.dtype != np.int16 or samples.ndim != 1:
            raise ValueError(
                f"expected 16 kHz mono int16 samples, got {samples.dtype} {samples.shape}"
            )
        wav = preprocess(pcm_to_float(samples))
        return self.embed_utterance(wav if loop_s is None else loop(wav, loop_s))

    def embed_utterance(self, wav: np.ndarray) -> np.ndarray:
        """``VoiceEncoder.embed_utterance`` for a preprocessed 16 kHz float waveform."""
        return _normalize(self.embed_partials(wav).mean(axis=0))

    def embed_partials(self, wav: np.ndarray) -> np.ndarray:
        """One normalized embedding per 1.6 s partial window, (n_partials, 256)."""
        if len(wav) == 0:
            raise NoSpeechError("no speech left after trimming silences")
        slices = partial_slices(len(wav))
        needed = slices[-1].stop * HOP
        if needed >= len(wav):
            wav = np.pad(wav, (0, needed - len(wav)))
        mel = mel_spectrogram(wav)
        return self.forward(np.stack([mel[s] for s in slices]))

    def forward(self, mels: np.ndarray) -> np.ndarray:
        """Embeddings of a batch of mel windows, (batch, frames, 40) -> (batch, 256)."""
        x = mels.astype(np.float32)
        for layer in self._layers:
            x = _lstm_layer(x, layer)
        raw = np.maximum(x[:, -1] @ self._linear_w.T + self._linear_b, 0)
        embeddings: np.ndarray = raw / np.linalg.norm(raw, axis=1, keepdims=True)
        return embeddings


def _lstm_layer(x: np.ndarray, layer: _Layer) -> np.ndarray:
    """One LSTM layer over (batch, time, inputs); returns every hidden state.

    The recurrent product is one matrix-vector product per sequence (for the few
    sequences an utterance has, faster than a matrix product), and every step works
    in place: one tanh covers all four gates (see ``_Layer``).
    """
    batch, steps, _ = x.shape
    gates_in = np.ascontiguousarray(  # the input part of every step at once
        (x @ layer.w_ih.T + layer.bias).transpose(1, 0, 2)
    )
    gates = np.empty((batch, 4 * HIDDEN), dtype=np.float32)
    c = np.zeros((batch, HIDDEN), dtype=np.float32)
    scratch = np.empty_like(c)
    out = np.zeros((steps + 1, batch, HIDDEN), dtype=np.float32)  # out[0]: h = 0
    ifo, i, f, o, g = (
        gates[:, : 3 * HIDDEN],
        gates[:, :HIDDEN],
        gates[:, HIDDEN : 2 * HIDDEN],
        gates[:, 2 * HIDDEN : 3 * HIDDEN],
        gates[:, 3 * HIDDEN :],
    )
    for t in range(steps):
        for row in range(batch):
            np.dot(layer.w_hh, out[t, row], out=gates[row])
        gates += gates_in[t]
        np.tanh(gates, out=gates)
        ifo *= 0.5
        ifo += 0.5  # i, f, o: sigmoid; g: tanh
        np.multiply(i, g, out=scratch)
        c *= f
        c += scratch
        np.tanh(c, out=scratch)
        np.multiply(o, scratch, out=out[t + 1])
    return out[1:].transpose(1, 0, 2)


def loop(wav: np.ndarray, seconds: float) -> np.ndarray:
    """``wav`` repeated end to end to ``seconds``, if it is shorter (and not empty).

    Why: Resemblyzer pads speech shorter than its 1.6 s partial with zeros,
    and the voiceprint is the LSTM's state after the last frame: after half
    a second of zeros that state has drifted from the voice. A short command
    (0.8 s of "Turn on the fan.") scored 0.64 against its speaker's own
    voiceprint in a reverberant room, 0.71 looped to the partial's length
    (bench/gate_rooms.py).
    """
    wanted = round(seconds * SAMPLE_RATE)
    if len(wav) == 0 or len(wav) >= wanted:
        return wav
    looped: np.ndarray = np.resize(wav, wanted)
    return looped


def _normalize(v: np.ndarray) -> np.ndarray:
    unit: np.ndarray = v / np.linalg.norm(v)
    return unit


def partial_slices(n_samples: int) -> list[slice]:
    """Mel-frame ranges of the partial windows (``compute_partial_slices``, mel half).

    Windows of 160 frames start every ``SAMPLE_RATE / PARTIAL_RATE`` samples; the
    last one is dropped when less than ``MIN_COVERAGE`` of it holds audio, unless it
    is the only one. Ranges may run past the audio: the caller pads with zeros.
    """
    n_frames = int(np.ceil((n_samples + 1) / HOP))
    frame_step = int(np.round((SAMPLE_RATE / PARTIAL_RATE) / HOP))
    steps = max(1, n_frames - PARTIAL_FRAMES + frame_step + 1)
    slices = [slice(i, i + PARTIAL_FRAMES) for i in range(0, steps, frame_step)]
    last = slices[-1]
    coverage = (n_samples - last.start * HOP) / (PARTIAL_FRAMES * HOP)
    if coverage < MIN_COVERAGE and len(slices) > 1:
        slices.pop()
    return slices


def cosine_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of two voiceprints (1 = same direction)."""
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))
