"""Nothing was said: what speech-to-text writes for silence, and why a request was empty.

Whisper learned from subtitles, so given silence or a room's noise it writes
what subtitles say over silence: "Thanks.", "Thank you.", "Thank you for
watching.", "you", ".", "[BLANK_AUDIO]". After a false wake (the TV said
something like the wake word) that text went to the agent, and the room heard
"Sorry, I couldn't understand that". A transcript of audio in which no VAD
heard speech start, and that is one of these phrases, is treated as empty:
nothing was said. When speech was heard, "thank you" is what the user said
and passes.

Home Assistant-free: the voice loop asks ``emptiness`` with what its VAD heard.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

from .router.normalize import hear, normalize

__all__ = ["MADE_UP", "EmptyReason", "emptiness", "made_up"]


class EmptyReason(StrEnum):
    """Why a request came to nothing (outcome ``empty``)."""

    NO_SPEECH = "no_speech"  # nobody spoke: no VAD heard speech start
    NO_WORDS = "no_words"  # speech-to-text found no words ("", "[BLANK_AUDIO]")


# What whisper writes for silence and room noise, as matching keys (normalize:
# case, punctuation and bracketed tokens do not count; "." and "[BLANK_AUDIO]"
# have no words at all and are empty already).
MADE_UP: Final = frozenset(
    normalize(phrase)
    for phrase in (
        "Thanks.",
        "Thank you.",
        "Thank you very much.",
        "Thank you so much.",
        "Thanks for watching!",
        "Thank you for watching.",
        "Thank you so much for watching!",
        "Please subscribe.",
        "Bye.",
        "you",
    )
)


def made_up(transcript: str) -> bool:
    """Whether ``transcript`` is one of the phrases whisper writes for silence.

    Ask only about audio in which no speech was heard: a user may well say
    "thank you".
    """
    return normalize(transcript) in MADE_UP


def emptiness(transcript: str, speech_heard: bool | None) -> EmptyReason | None:
    """Why ``transcript`` is nothing said, if it is (None: words to route).

    ``speech_heard``: what the VAD heard in the audio (None: it cannot tell,
    it never ended the audio or does not run). Whisper's phrases for silence
    are nothing only when it heard no speech start.
    """
    if speech_heard is False and (made_up(transcript) or not hear(transcript).real):
        return EmptyReason.NO_SPEECH
    return None if hear(transcript).real else EmptyReason.NO_WORDS
