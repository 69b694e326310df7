"""WebRTC's AEC3 from ``aec-audio-processing`` (the backend before ``livekit``).

Kept for installs that built it already: it ships no Linux wheels, so pip
compiles WebRTC's audio processing (g++, about 5 minutes on x86-64, far longer
on a Pi). Only the echo canceller is on, as in ``aec_livekit``.
"""

from __future__ import annotations

from .audio import RATE
from .echo_cancel import EchoCancelError, FrameCanceller

PACKAGE = "aec-audio-processing"


def open_canceller() -> FrameCanceller:
    """A fresh canceller; ``EchoCancelError`` when the package is missing."""
    try:
        from aec_audio_processing import AudioProcessor  # noqa: PLC0415 (optional)
    except ImportError as err:
        raise EchoCancelError(
            f"echo cancellation with aec3 needs the {PACKAGE} package: "
            f"pip install {PACKAGE} (it builds WebRTC's audio processing, "
            "which needs a C++ compiler)"
        ) from err
    apm = AudioProcessor(
        enable_aec=True, enable_ns=False, enable_agc=False, enable_vad=False
    )
    apm.set_stream_format(RATE, 1)
    apm.set_reverse_stream_format(RATE, 1)

    def process(mic: bytes, reference: bytes) -> bytes:
        apm.process_reverse_stream(reference)
        apm.set_stream_delay(0)  # the reference is already aligned
        cancelled: bytes = apm.process_stream(mic)
        return cancelled

    return process
