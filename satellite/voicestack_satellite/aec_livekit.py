"""WebRTC's echo canceller from the ``livekit`` wheel (a measured candidate).

``livekit`` (the LiveKit real-time SDK) ships WebRTC's AudioProcessingModule
prebuilt for manylinux x86-64 and aarch64, so a Raspberry Pi installs it in
seconds; nothing compiles. Only its echo canceller is switched on (AEC3, as in
``aec-audio-processing``); noise suppression, gain and the high-pass filter
stay off, since the wake word and VAD are tuned on the raw mic. Measured in
``bench/aec_backends.py`` (docs/benchmarks.md): 5.9 dB less echo removed than
``aec-audio-processing`` in the tv room, and the voice over an answer less like
itself, so ``pywebrtc-audio`` is what a Pi installs; used when only this is.
"""

from __future__ import annotations

from .audio import RATE
from .echo_cancel import FRAME, EchoCancelError, FrameCanceller

PACKAGE = "livekit"


def open_canceller() -> FrameCanceller:
    """A fresh canceller; ``EchoCancelError`` when ``livekit`` is missing."""
    try:
        from livekit.rtc import AudioFrame, AudioProcessingModule  # noqa: PLC0415
    except ImportError as err:
        raise EchoCancelError(
            f"echo cancellation needs the {PACKAGE} package: pip install {PACKAGE}"
        ) from err
    apm = AudioProcessingModule(echo_cancellation=True)

    def process(mic: bytes, reference: bytes) -> bytes:
        apm.process_reverse_stream(AudioFrame(reference, RATE, 1, FRAME))
        # The reference is already aligned; AEC3 finds the rest itself.
        apm.set_stream_delay_ms(0)
        frame = AudioFrame(bytearray(mic), RATE, 1, FRAME)
        apm.process_stream(frame)  # in place
        return frame.data.tobytes()

    return process
