"""Write the voice gate's cohort: voiceprints of voices nobody enrolls (issue 28).

The gate normalizes every score against a cohort (adaptive s-norm,
``voicestack_satellite/voiceprint/calibration.py``). The cohort is data: one
256-float voiceprint per espeak-ng variant (Debian's ``espeak-ng``), the mean
of the three default enrollment phrases said by it in the harness's ``tv`` room
(its impulse response from the user's place, ``devstack.room_presets``), made
with the satellite's own encoder and written to ``voiceprint/cohort.json`` (about 80 kB, committed).
No weights, no download; rerun after changing the encoder or the phrases:

    .venv-satellite/bin/python scripts/make_gate_cohort.py

The variants the benchmark judges (espeak-ng's default en-us and en-gb, m3,
f3) are left out, so bench/gate_family.py measures voices the cohort never had.
"""

from __future__ import annotations

import json
from pathlib import Path
import sys

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "satellite")]

import numpy as np  # noqa: E402

from devstack import speech  # noqa: E402
from devstack.room_presets import preset, responses  # noqa: E402
from voicestack_satellite.voiceprint import SpeakerEncoder  # noqa: E402
from voicestack_satellite.voiceprint.calibration import COHORT_PATH  # noqa: E402

# The room the cohort speaks in: a satellite's mic hears a room, and the
# cohort must sound like what it hears (dry speech scores apart from any room:
# the normalized scores' equal-error rate was twice as high). Not the quiet
# room bench/gate_family.py judges in.
ROOM = "tv"
# The default enrollment phrases (custom_components/voicestack/voiceprints/enrollment.py).
PHRASES = (
    "The quick brown fox jumps over the lazy dog.",
    "Turn on the kitchen lights and set the heating to twenty degrees.",
    "What will the weather be like tomorrow morning?",
)
# espeak-ng's variants that sound like a person (no robots, whispers, effects).
VARIANTS = (
    "m1", "m2", "m4", "m5", "m6", "m7", "f1", "f2", "f4", "f5",
    "Andy", "Annie", "adam", "aunty", "benjamin", "caleb", "david", "ed",
    "edward", "Gene", "john", "linda", "max", "Michael", "Mike", "paul", "rob",
    "robert", "steph", "Storm", "norbert", "shelby", "travis", "victor",
    "grandma", "grandpa", "klatt", "klatt2", "klatt3", "croak", "Alex",
    "Alicia", "Lee", "zac", "anika", "quincy",
)  # fmt: skip


def in_a_room(pcm: bytes, response: np.ndarray) -> np.ndarray:
    """Speech as a mic across a room hears it (int16, the dry speech's level)."""
    dry = np.frombuffer(pcm, np.int16).astype(np.float64)
    wet = np.convolve(dry, response)[: len(dry)]
    wet *= np.sqrt(np.mean(dry**2) / np.mean(wet**2))
    return np.clip(np.rint(wet), -32768, 32767).astype(np.int16)


def main() -> None:
    """Embed every variant's phrases and write the cohort file."""
    encoder = SpeakerEncoder.from_resemblyzer()
    response = responses(preset(ROOM))["user"]
    voices = []
    for variant in VARIANTS:
        phrases = [
            encoder.embed_pcm(
                in_a_room(speech.espeak(text, f"en-us+{variant}"), response)
            )
            for text in PHRASES
        ]
        mean = np.mean(phrases, axis=0)
        mean /= np.linalg.norm(mean)
        voices.append(
            {
                "name": f"espeak-ng en-us+{variant}",
                "embedding": [round(float(v), 5) for v in mean],
            }
        )
    data = {
        "about": "Voiceprints of espeak-ng variants: the voice gate's cohort "
        "(scripts/make_gate_cohort.py). Derived data, no model weights.",
        "encoder": "GE2E (resemblyzer 0.1.4 weights), voicestack_satellite.voiceprint",
        "voices": voices,
    }
    COHORT_PATH.write_text(json.dumps(data, separators=(",", ":")) + "\n")
    print(f"{COHORT_PATH}: {len(voices)} voices")


if __name__ == "__main__":
    main()
