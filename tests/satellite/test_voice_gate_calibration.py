"""The calibrated voice gate (issue 28): s-norm against the shipped cohort.

- The cohort ships with the satellite: espeak-ng voiceprints, unit length.
- A score is normalized against both sides' closest cohort voices: the same
  cosine means more for a voice far from everybody than for a generic one.
- Three bands of the cosine against the threshold: enrolled, unsure, other;
  the voice event explains the verdict with the normalized score.
- Without the cohort, the normalized score is the raw one.

Real encoder and weights, real speech (Piper joe from tests/data).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from voicestack_satellite import voice_gate
from voicestack_satellite.audio import read_wav
from voicestack_satellite.gate_reports import verdict_event
from voicestack_satellite.voice_gate import UNSURE_BAND, VoiceGate
from voicestack_satellite.voiceprint.calibration import (
    COHORT_PATH,
    Cohort,
    CohortStats,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def joe() -> np.ndarray:
    """A phrase of Piper's joe, as the reference test stores it."""
    return read_wav(DATA / "ge2e_joe_weather.wav")


def test_the_cohort_ships_and_holds_unit_voiceprints() -> None:
    data = json.loads(COHORT_PATH.read_text())
    rows = np.array([voice["embedding"] for voice in data["voices"]])
    assert rows.shape == (len(data["voices"]), 256)
    assert len(rows) >= 40
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-3)
    assert all(voice["name"].startswith("espeak-ng ") for voice in data["voices"])


def test_s_norm_weighs_a_score_by_how_generic_each_side_is() -> None:
    generic, distinct = CohortStats(0.70, 0.05), CohortStats(0.40, 0.05)
    test = CohortStats(0.50, 0.05)
    assert Cohort.score(0.75, generic, test).normalized == pytest.approx(3.0)
    assert Cohort.score(0.75, distinct, test).normalized == pytest.approx(6.0)
    rows = np.eye(12, 256)
    stats = Cohort(rows, top_k=10).stats(rows[0])
    assert stats.mean == pytest.approx(0.1)  # one of the ten closest is itself
    with pytest.raises(ValueError, match="at least 10"):
        Cohort(rows[:5])


def test_the_gate_has_three_bands_and_explains_them() -> None:
    assert VoiceGate.verdict_of(0.7, 0.7) == "enrolled"
    assert VoiceGate.verdict_of(0.7 - UNSURE_BAND / 2, 0.7) == "unsure"
    assert VoiceGate.verdict_of(0.7 - UNSURE_BAND - 0.01, 0.7) == "other"
    gate = VoiceGate()
    try:
        embedding = gate._embed(joe())
        voiceprints = np.array([embedding, np.roll(embedding, 7)])
        verdict = gate.judge(embedding, ("person.joe", "person.x"), voiceprints, 0.7)
        nobody = gate.judge(embedding, (), None, 0.7)
    finally:
        gate.close()
    assert verdict.verdict == "enrolled"
    assert verdict.person == verdict.closest == "person.joe"
    assert verdict.score is not None
    assert verdict.score.raw == pytest.approx(1.0, abs=1e-5)
    assert verdict.score.normalized > 0  # explained against the cohort
    assert (nobody.verdict, nobody.person, nobody.score) == ("other", None, None)
    event = verdict_event("s1", verdict, 1.3)
    assert event.data["verdict"] == "enrolled"
    assert event.data["score"] == pytest.approx(1.0, abs=1e-4)
    assert event.data["normalized"] == round(verdict.score.normalized, 3)
    assert set(event.data["cohort"]) == {
        "enrolled_mean",
        "enrolled_std",
        "test_mean",
        "test_std",
    }


def test_without_the_cohort_the_raw_score_and_threshold_decide(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shipped = Cohort.load
    monkeypatch.setattr(
        voice_gate.Cohort,
        "load",
        classmethod(lambda _cls: shipped(tmp_path / "missing.json")),
    )
    gate = VoiceGate()
    gate.close()
    embedding = np.zeros(256, np.float32)
    embedding[0] = 1.0
    prints = np.array([[0.8, 0.6] + [0.0] * 254], np.float32)
    taken = gate.judge(embedding, ("person.joe",), prints, 0.7)
    refused = gate.judge(embedding, ("person.joe",), prints, 0.9)
    assert (taken.verdict, taken.person) == ("enrolled", "person.joe")
    assert (refused.verdict, refused.person, refused.closest) == (
        "other",
        None,
        "person.joe",
    )
