"""The numpy port of Resemblyzer's speaker encoder gives Resemblyzer's voiceprints.

- The legacy checkpoint reader loads every tensor of the real ``pretrained.pt``
  with its shape, and refuses files that are not plain tensors (no code runs).
- Each test utterance's embedding is within 1e-4 of Resemblyzer's own (made with
  torch by scripts/make_ge2e_reference.py, stored in tests/data/ge2e_reference.json).
- Piper's joe voice is closer to itself than to espeak-ng's voices.
- The runtime imports neither torch nor librosa.

The weights come from the installed ``resemblyzer`` package (``pip install --no-deps
resemblyzer==0.1.4``); without it these tests fail with that instruction.
"""

from __future__ import annotations

import hashlib
from itertools import combinations
import json
from pathlib import Path
import pickle
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

from voicestack_satellite.audio import read_wav
from voicestack_satellite.voiceprint import (
    CheckpointError,
    NoSpeechError,
    SpeakerEncoder,
    WeightsMissingError,
    cosine_similarity,
    read_legacy_checkpoint,
    resemblyzer_weights_path,
)
from voicestack_satellite.voiceprint.weights import MAGIC_NUMBER, PROTOCOL_VERSION

DATA = Path(__file__).resolve().parents[1] / "data"
REFERENCE = json.loads((DATA / "ge2e_reference.json").read_text(encoding="utf-8"))
UTTERANCES = {item["name"]: item for item in REFERENCE["utterances"]}
TOLERANCE = 1e-4

SHAPES = {
    "similarity_weight": (1,),
    "similarity_bias": (1,),
    "lstm.weight_ih_l0": (1024, 40),
    "lstm.weight_hh_l0": (1024, 256),
    "lstm.bias_ih_l0": (1024,),
    "lstm.bias_hh_l0": (1024,),
    "lstm.weight_ih_l1": (1024, 256),
    "lstm.weight_hh_l1": (1024, 256),
    "lstm.bias_ih_l1": (1024,),
    "lstm.bias_hh_l1": (1024,),
    "lstm.weight_ih_l2": (1024, 256),
    "lstm.weight_hh_l2": (1024, 256),
    "lstm.bias_ih_l2": (1024,),
    "lstm.bias_hh_l2": (1024,),
    "linear.weight": (256, 256),
    "linear.bias": (256,),
}


@pytest.fixture(scope="module")
def encoder() -> SpeakerEncoder:
    return SpeakerEncoder.from_resemblyzer()


def utterance_pcm(item: dict[str, Any]) -> np.ndarray:
    """The utterance the reference was made from, checked by its hash."""
    pcm = read_wav(DATA / item["wav"]).tobytes()
    assert hashlib.sha256(pcm).hexdigest() == item["sha256"], (
        f"{item['name']}: the audio differs from the reference's; "
        "run scripts/make_ge2e_reference.py again (see its docstring)"
    )
    return np.frombuffer(pcm, dtype=np.int16)


def test_reader_loads_every_tensor_with_its_shape() -> None:
    checkpoint = read_legacy_checkpoint(resemblyzer_weights_path())

    state = checkpoint["model_state"]
    assert {name: array.shape for name, array in state.items()} == SHAPES
    assert {array.dtype for array in state.values()} == {np.dtype(np.float32)}
    assert all(np.isfinite(array).all() for array in state.values())
    assert state["similarity_weight"][0] == pytest.approx(70.8929138)
    # The optimizer's moments are tensors too: each matches a parameter's shape.
    moments = checkpoint["optimizer_state"]["state"].values()
    assert sorted(m["exp_avg"].shape for m in moments) == sorted(SHAPES.values())


def _legacy_file(path: Path, payload: bytes) -> Path:
    header = [MAGIC_NUMBER, PROTOCOL_VERSION, {"little_endian": True}]
    path.write_bytes(
        b"".join(pickle.dumps(obj, protocol=2) for obj in header) + payload
    )
    return path


class _RunsCode:
    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return (subprocess.check_output, ("true",))


def test_reader_refuses_what_is_not_a_tensor(tmp_path: Path) -> None:
    """A pickle that would call a function fails before anything runs."""
    evil = _legacy_file(tmp_path / "evil.pt", pickle.dumps(_RunsCode(), protocol=2))
    with pytest.raises(CheckpointError, match="check_output, which is not a tensor"):
        read_legacy_checkpoint(evil)

    not_torch = tmp_path / "zip.pt"
    not_torch.write_bytes(b"PK\x03\x04" + bytes(60))
    with pytest.raises(CheckpointError, match="unreadable checkpoint"):
        read_legacy_checkpoint(not_torch)

    weights = resemblyzer_weights_path().read_bytes()
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(weights[: len(weights) - 1000])
    with pytest.raises(CheckpointError, match="truncated"):
        read_legacy_checkpoint(truncated)


@pytest.mark.parametrize("name", sorted(UTTERANCES))
def test_embedding_matches_resemblyzer(encoder: SpeakerEncoder, name: str) -> None:
    item = UTTERANCES[name]
    samples = utterance_pcm(item)

    embedding = encoder.embed_pcm(samples)

    difference = float(np.abs(embedding - np.array(item["embedding"])).max())
    assert difference < TOLERANCE, f"{name}: max abs difference {difference:.2e}"
    assert embedding.shape == (256,)
    assert np.linalg.norm(embedding) == pytest.approx(1.0, abs=1e-6)


def test_same_voice_is_closer_than_another(encoder: SpeakerEncoder) -> None:
    """Every joe-joe pair beats every joe-espeak pair, by a wide margin."""
    prints = {
        name: encoder.embed_pcm(utterance_pcm(item))
        for name, item in UTTERANCES.items()
    }
    joe = [name for name in prints if name.startswith("joe")]
    other = [name for name in prints if not name.startswith("joe")]
    same = [cosine_similarity(prints[a], prints[b]) for a, b in combinations(joe, 2)]
    different = [cosine_similarity(prints[a], prints[b]) for a in joe for b in other]
    figures = (
        f"joe vs joe {np.round(same, 3)}, joe vs espeak-ng {np.round(different, 3)}"
    )
    assert len(same) == 3
    assert len(different) == 6
    assert min(same) > 0.8, figures
    assert max(different) < 0.6, figures


def test_missing_weights_say_how_to_install_them(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(WeightsMissingError, match="not found"):
        SpeakerEncoder.from_resemblyzer(tmp_path / "pretrained.pt")

    monkeypatch.setitem(sys.modules, "resemblyzer", None)  # as if not installed
    with pytest.raises(WeightsMissingError, match=r"--no-deps resemblyzer==0\.1\.4"):
        SpeakerEncoder.from_resemblyzer()


def test_silence_and_wrong_audio_have_no_voiceprint(encoder: SpeakerEncoder) -> None:
    with pytest.raises(NoSpeechError):
        encoder.embed_pcm(np.zeros(16000, dtype=np.int16))
    with pytest.raises(ValueError, match="mono int16"):
        encoder.embed_pcm(np.zeros((16000, 2), dtype=np.int16))
    with pytest.raises(ValueError, match="mono int16"):
        encoder.embed_pcm(np.zeros(16000, dtype=np.float32))


def test_runtime_needs_neither_torch_nor_librosa() -> None:
    """Importing and running the encoder pulls in no torch, librosa or numba."""
    script = (
        "import sys\n"
        "from voicestack_satellite.audio import read_wav\n"
        "from voicestack_satellite.voiceprint import SpeakerEncoder\n"
        "SpeakerEncoder.from_resemblyzer().embed_pcm(read_wav(sys.argv[1]))\n"
        "print(sorted({'torch', 'librosa', 'numba', 'resemblyzer'} & set(sys.modules)))\n"
    )
    wav = DATA / UTTERANCES["espeak_us"]["wav"]
    result = subprocess.run(
        [sys.executable, "-c", script, str(wav)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "[]"
