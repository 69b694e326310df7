"""The one spoken request every end-to-end run hears: wake phrase, pause, command.

Lead-in, the wake phrase, the pause a user leaves for the awake chime (the
satellite mutes its mic while it plays), the command, then silence for Home
Assistant's VAD to notice the end. Speech is Piper's (``devstack.speech``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from devstack import speech
from voicestack_satellite.wake import PHRASES

LEAD_IN_S = 0.5
WAKE_PAUSE_S = 0.7
TRAILING_SILENCE_S = 3.0


def wake_phrase(wake_word: str = "hey_jarvis") -> str:
    """The wake word as a user says it, as a sentence ("Hey Jarvis.")."""
    return f"{PHRASES.get(wake_word, wake_word.replace('_', ' ').title())}."


def spoken_request(
    command: str,
    wake_word: str = "hey_jarvis",
    *,
    trailing_s: float = TRAILING_SILENCE_S,
) -> bytes:
    """Piper says the wake phrase, pauses, says ``command``; ``trailing_s`` of silence."""
    return (
        speech.pad(speech.speak(wake_phrase(wake_word)), LEAD_IN_S, WAKE_PAUSE_S)
        + speech.speak(command)
        + speech.silence(trailing_s)
    )


@dataclass(frozen=True, slots=True)
class MicAudio:
    """The WAV the satellite hears, and where the speech in it ends."""

    path: Path
    pcm: bytes = field(repr=False)  # 16 kHz mono int16
    seconds: float
    speech_end_s: float  # offset of the last sample louder than -40 dBFS


def prepare_mic(path: Path, pcm: bytes) -> MicAudio:
    """Write ``pcm`` as the satellite's mic WAV (blocking: call before HA runs or in a thread)."""
    speech.write_wav(path, pcm)
    return MicAudio(path, pcm, speech.seconds(pcm), speech.speech_end_s(pcm))
