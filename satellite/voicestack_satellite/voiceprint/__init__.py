"""Voiceprints: who is speaking, from Resemblyzer's GE2E speaker encoder, without torch.

``SpeakerEncoder.from_resemblyzer()`` reads the weights that the ``resemblyzer``
package ships (installed with ``--no-deps``: no torch) and turns 16 kHz speech into a
256-float unit vector; two utterances of the same voice have a higher cosine
similarity than two different voices. Nothing is downloaded.
"""

from __future__ import annotations

from .encoder import (
    NoSpeechError,
    SpeakerEncoder,
    WeightsMissingError,
    cosine_similarity,
    resemblyzer_weights_path,
)
from .weights import CheckpointError, read_legacy_checkpoint

__all__ = [
    "CheckpointError",
    "NoSpeechError",
    "SpeakerEncoder",
    "WeightsMissingError",
    "cosine_similarity",
    "read_legacy_checkpoint",
    "resemblyzer_weights_path",
]
