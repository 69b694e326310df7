"""WebRTC's AEC3 from the ``pywebrtc-audio`` wheel: what ``install.sh`` gives a Pi.

``pywebrtc-audio`` binds WebRTC's echo canceller alone (Apache-2.0), with
wheels for x86-64 and aarch64 per CPython version: nothing compiles. Chosen
over ``livekit`` by ``bench/aec_backends.py`` and ``bench/aec_candidates.py``
(docs/benchmarks.md): as much echo removed as ``aec-audio-processing`` or more
in every room, and the voice over an answer kept nearly as well. Where
``aec-audio-processing`` is installed (built from source), that runs first.
"""

from __future__ import annotations

import numpy as np

from .audio import RATE
from .echo_cancel import EchoCancelError, FrameCanceller

PACKAGE = "pywebrtc-audio"


def open_canceller() -> FrameCanceller:
    """A fresh canceller; ``EchoCancelError`` when the package is missing."""
    try:
        from pywebrtc_audio import EchoCanceller  # noqa: PLC0415 (optional)
    except ImportError as err:
        raise EchoCancelError(
            f"echo cancellation with pywebrtc needs the {PACKAGE} package: "
            f"pip install {PACKAGE}"
        ) from err
    canceller = EchoCanceller(RATE, 1, 0)  # the reference is already aligned

    def process(mic: bytes, reference: bytes) -> bytes:
        near = np.frombuffer(mic, np.int16)
        return canceller.process(near, np.frombuffer(reference, np.int16)).tobytes()

    return process
