"""A follow-on after an action, as people say it: two fragments and a natural gap.

"Turn on the kitchen light." … "and the fan too." (0.84 s of speech in Piper's
joe voice). People pause 0.3 to 1.2 s between such fragments. Piper adds its own
silence before and after every sentence (about 0.14 s after); it is cut here, so
the gap between the two fragments' speech is exactly the one asked for. Used by
the journey tests (tests/integration/test_follow_on.py, the satellite's) and
``bench/follow_on.py``, with ``devstack.switching_agent`` as the conversation
agent (an LLM agent with tools is what hears "and the fan too." as a request).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np

from devstack import speech

FIRST: Final = "Turn on the kitchen light."
SECOND: Final = "and the fan too."
NATURAL_GAPS_S: Final = (0.3, 0.5, 0.8, 1.0, 1.2)


def trimmed(pcm: bytes) -> bytes:
    """``pcm`` from its first to its last speech sample (louder than -40 dBFS)."""
    samples = np.frombuffer(pcm, dtype=np.int16)
    loud = np.flatnonzero(np.abs(samples.astype(np.int32)) > speech.SPEECH_LEVEL)
    if not len(loud):
        raise ValueError("no speech to trim to")
    return samples[loud[0] : loud[-1] + 1].tobytes()


def fragments(
    say: Callable[[str], bytes] = speech.speak,
    first: str = FIRST,
    second: str = SECOND,
) -> tuple[bytes, bytes]:
    """The two fragments as ``say`` speaks them, each trimmed to its speech."""
    return trimmed(say(first)), trimmed(say(second))


def follow_on(gap_s: float, say: Callable[[str], bytes] = speech.speak) -> bytes:
    """Both fragments, ``gap_s`` of silence between the end of one and the other."""
    first, second = fragments(say)
    return first + speech.silence(gap_s) + second
