"""One request, from wake word to played answer (Home Assistant-free).

A satellite runs one turn at a time. The turn owns what belongs to that one
request and nothing else: its audio (bounded, ``RequestAudio``), the wake word
that started it and the phrase that wake word stands for, the transcript, and,
once the router has decided, what is said back and whether the mic opens again
without a wake word afterwards (``Reply``). ``ListenWindow`` remembers the one
window the voice loop opened on the satellite, across turns, so a window left
open after its frame closed can be closed again.

The glue (``request/loop.py``) drives a turn with Home Assistant's pipeline and
agent; everything decided here is plain data, so the follow-up rules are
testable with a clock and no Home Assistant. The sessions a turn belongs to
and the post-action buffer live beside it (``follow_up.py``, ``debounce.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from wyoming.info import WakeProgram

from ..clock import Clock
from ..recording.recording import Recording
from ..request_audio import RequestAudio
from ..router.route import Route

# A follow-up question opens the mic for this long without a wake word.
FOLLOW_UP_TIMEOUT_S: Final = 8.0
# While a voice mode waits for more speech (dictation, a yes or no), the mic
# opens without a wake word for this long after each reply.
MODE_LISTEN_TIMEOUT_S: Final = 15.0


@dataclass(frozen=True, slots=True)
class Reply:
    """What a turn says back, and how long the mic then listens (None: not)."""

    speech: str
    listen_s: float | None


def reply_for(
    route: Route,
    *,
    answer: str = "",
    closing: str = "",
    follow_up_s: float | None = None,
    always_listening: bool = False,
) -> Reply:
    """The router's own words, then the agent's answer; the window after it.

    ``follow_up_s`` is the window the follow-up loop opens (``core/follow_up``:
    the session goes on). Without one, a mode that waits for more speech
    (``route.listen``) opens the longer mode window, unless the satellite
    streams all speech anyway (always listening), where a window would mean
    nothing. ``closing`` (the loop's, when its turn limit leaves the answer's
    question unheard) is said last, unless such a mode listens on anyway.
    """
    if route.listen and not always_listening:
        closing = ""
    said = (route.speak or "", answer, closing)
    speech = " ".join(part.strip() for part in said if part.strip())
    if follow_up_s is not None:
        return Reply(speech, follow_up_s)
    if route.listen and not always_listening:
        return Reply(speech, MODE_LISTEN_TIMEOUT_S)
    return Reply(speech, None)


def wake_phrase(programs: Iterable[WakeProgram], name: str | None) -> str | None:
    """The phrase of wake word ``name`` as the satellite's ``info`` gives it.

    The pipeline strips it from the transcript; a model without a phrase is
    its own name.
    """
    for program in programs:
        for model in program.models:
            if model.name == name:
                return model.phrase or name
    return name


class Turn:
    """One request: its audio, wake word, transcript, and when each came."""

    def __init__(
        self,
        clock: Clock,
        on_audio_limit: Callable[[str], None],
        *,
        wake_word: str | None,
        woken: bool,
    ) -> None:
        """A turn the satellite started, by a wake word (``woken``) or in a window."""
        self.audio = RequestAudio(clock, on_audio_limit)
        self.wake_word = wake_word
        self.by_wake_word = woken
        self._clock = clock
        self.started_at = clock.now()
        self.heard_at: float | None = None  # speech-to-text ended
        # None until speech-to-text ended; "" when it found nothing.
        self.transcript: str | None = None
        # Home Assistant's VAD: heard speech start (True), ended the audio
        # without (False: it timed out), or cannot tell (None: it never ended
        # the audio, or the pipeline runs none).
        self.speech_heard: bool | None = None
        # Buffered fragments this turn's transcript joins (1: it was said at once).
        self.fragments = 1
        # Its recording for the debug panel, while recording is on.
        self.recording: Recording | None = None

    def woken(self, wake_word: str | None) -> None:
        """Home Assistant's wake word engine heard ``wake_word``: STT starts now."""
        self.wake_word = wake_word
        self.audio.start_deadline()

    def heard(self, transcript: str) -> None:
        """Speech-to-text ended with ``transcript``."""
        self.transcript = transcript
        self.heard_at = self._clock.now()
        if self.recording is not None:
            self.recording.heard(transcript)

    def timings(self) -> dict[str, float | None]:
        """Seconds from the request's start to the transcript and to now."""
        now = self._clock.now()
        heard = self.heard_at
        return {
            "speech_to_text_s": None
            if heard is None
            else round(heard - self.started_at, 3),
            "answer_s": None if heard is None else round(now - heard, 3),
            "total_s": round(now - self.started_at, 3),
        }

    def end(self) -> None:
        """The turn is over (answered, dropped or cancelled): no more audio."""
        self.audio.close()


class ListenWindow:
    """The window the voice loop opened on the satellite, if one is open."""

    def __init__(self, clock: Clock) -> None:
        """Closed until ``request`` opens one."""
        self._clock = clock
        self._until = 0.0

    def request(self, window_s: float | None) -> float | None:
        """What to send the satellite for ``window_s`` (None: send nothing).

        A window to open is sent as is. No window is wanted (None): an open one
        is closed (0), because whatever is said next would otherwise go to the
        agent unasked; with none open, nothing is sent.
        """
        now = self._clock.now()
        if window_s is None and now >= self._until:
            return None
        self._until = now + (window_s or 0.0)
        return window_s or 0.0

    def used(self) -> None:
        """A request started: whatever window started it is used up."""
        self._until = 0.0
