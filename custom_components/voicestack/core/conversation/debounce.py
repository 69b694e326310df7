"""The post-action fragment buffer (Home Assistant-free; issue 14).

A turn that changed something (a light switched, a timer set) is often followed
by more words the user had not finished: "turn on the kitchen light" ... "and
the hall". Answering each fragment on its own interrupts the user and acts on
half a thought. After such a turn the glue *arms* the buffer: the session's
next fragments are collected and handed on as one request (``on_flush``, the
fragments joined by one space, in order) once the user paused ``quiet_s``
(default 1.5 s) or ``max_s`` (default 5 s) after the first fragment, whichever
comes first. The defaults are the design note's (seeds/post-tool-debounce.md:
1.5 s debounce, 5 s at most); ``quiet_s`` may be 0.3 to 5 s, ``max_s`` from
``quiet_s`` to 15 s.

What the note got wrong, and this module avoids:

- its timers were ``asyncio.sleep`` tasks, so its tests slept (with the
  constants shortened to 0.05 s, so the real values were never tested); here
  both timers run on the injected ``Clock`` and tests are exact;
- its maximum was only checked when the next fragment arrived, so a user who
  kept talking was never cut off on time; here the max timer runs from the
  first fragment and fires while fragments still come;
- an emergency waited out the debounce before it was even looked at;
  ``is_bypass`` lets the glue flush at once on "help", "stop", "fire", "call"
  (or a stop phrase of the follow-up loop);
- ending the call dropped or raced the buffer; ``disarm`` (the session ended)
  flushes what is buffered first and drops nothing silently.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from ..clock import Cancellable, Clock
from ..router.normalize import clean
from .phrases import (
    EMERGENCY_PHRASES as EMERGENCY_BY_LANGUAGE,
    FALLBACK,
    language_of,
)
from .policy import FollowUpConfigError, spoken, validate_phrases

QUIET_S: Final = 1.5
MAX_S: Final = 5.0
QUIET_S_RANGE: Final = (0.3, 5.0)
MAX_S_LIMIT: Final = 15.0
EMERGENCY_PHRASES: Final = EMERGENCY_BY_LANGUAGE[FALLBACK]


class DebounceConfigError(FollowUpConfigError):
    """Bad buffer timing, with a stable ``code`` (``quiet_s`` or ``max_s``)."""


def check_timings(quiet_s: float, max_s: float) -> None:
    """Raise ``DebounceConfigError`` unless both timings are in range."""
    low, high = QUIET_S_RANGE
    if isinstance(quiet_s, bool) or not low <= quiet_s <= high:
        raise DebounceConfigError(
            "quiet_s", f"quiet_s must be from {low} to {high} seconds"
        )
    if isinstance(max_s, bool) or not quiet_s <= max_s <= MAX_S_LIMIT:
        raise DebounceConfigError(
            "max_s", f"max_s must be from quiet_s ({quiet_s}) to {MAX_S_LIMIT} s"
        )


@dataclass(frozen=True, slots=True)
class DebouncePolicy:
    """The buffer's timings and the phrases that skip it, as the user set them."""

    quiet_s: float = QUIET_S
    max_s: float = MAX_S
    emergency_phrases: tuple[str, ...] = EMERGENCY_PHRASES

    def __post_init__(self) -> None:
        """Checked on construction (``DebounceConfigError``)."""
        check_timings(self.quiet_s, self.max_s)


# The entry options that hold a debounce policy, and the field each one fills.
OPTION_FIELDS: Final = {
    "follow_up_quiet_s": "quiet_s",
    "follow_up_max_s": "max_s",
    "follow_up_emergency_phrases": "emergency_phrases",
}


def debounce_from_options(
    options: Mapping[str, Any], language: str = FALLBACK
) -> DebouncePolicy:
    """The policy an entry's options describe.

    For what they lack: ``language``'s emergency phrases, the note's timings.
    """
    values = {f: options[k] for k, f in OPTION_FIELDS.items() if k in options}
    values["emergency_phrases"] = validate_phrases(
        values.get("emergency_phrases", EMERGENCY_BY_LANGUAGE[language_of(language)]),
        "emergency_phrases",
    )
    return DebouncePolicy(**values)


def is_bypass(
    text: str,
    emergency_phrases: Iterable[str] = EMERGENCY_PHRASES,
    end_phrases: Iterable[str] = (),
) -> bool:
    """Whether ``text`` must not wait in the buffer: flush and act at once.

    It must when its key (filler dropped) is one of the phrases or starts with
    one as whole words: "call mom" starts with "call", "callback" does not.
    Waiting costs more than acting early on such words, so no more is asked of
    them than that.
    """
    words = spoken(text)
    return any(
        (phrase := spoken(p)) and words[: len(phrase)] == phrase
        for p in (*emergency_phrases, *end_phrases)
    )


class FragmentBuffer:
    """Fragments of one session collected after a turn that changed state."""

    def __init__(
        self,
        clock: Clock,
        on_flush: Callable[[str], None],
        quiet_s: float = QUIET_S,
        max_s: float = MAX_S,
    ) -> None:
        """Disarmed; DebounceConfigError if the timings are out of range."""
        check_timings(quiet_s, max_s)
        self._clock = clock
        self._on_flush = on_flush
        self._quiet_s = quiet_s
        self._max_s = max_s
        self._armed = False
        self._texts: list[str] = []
        # Fragments heard whose text has not come yet (``hold`` to ``add``).
        self._on_the_way = 0
        # While text is buffered: the max timer from the first fragment, and
        # the quiet timer from the last (none while a fragment is on its way).
        self._max: Cancellable | None = None
        self._quiet: Cancellable | None = None

    @property
    def armed(self) -> bool:
        """Whether the session's next fragments are buffered."""
        return self._armed

    @property
    def buffering(self) -> bool:
        """Whether text waits to be flushed."""
        return bool(self._texts)

    @property
    def buffered_texts(self) -> tuple[str, ...]:
        """The fragments waiting, in order."""
        return tuple(self._texts)

    def arm(self) -> None:
        """The last turn changed state: buffer this session's next fragments."""
        self._armed = True

    def disarm(self) -> None:
        """The session ended: flush what is buffered (never drop it), then stop."""
        self.flush_now()
        self._armed = False

    def hold(self) -> None:
        """A fragment is on its way (the user speaks): the quiet timer waits.

        Speech-to-text takes its time; without this, the pause the user made
        before the next fragment plus its transcription could exceed
        ``quiet_s`` and flush half the thought. Each ``hold`` waits for its
        ``add``: on a loaded CPU the first fragment's text can come while the
        second is still being heard, and must not start the timer that flushes
        without it. The max timer keeps running.
        """
        self._on_the_way += 1
        if self._quiet is not None:
            self._quiet.cancel()
            self._quiet = None

    def add(self, text: str) -> bool:
        """Buffer ``text`` if armed (True); False: not armed, the caller acts.

        Each fragment (re)starts the quiet timer; the first starts the max
        timer. Noise without words (``[BLANK_AUDIO]``) is taken and not kept,
        but ends a ``hold`` like a fragment.
        """
        if not self._armed:
            return False
        self._on_the_way = max(0, self._on_the_way - 1)
        fragment = clean(text)
        if fragment:
            if not self._texts:
                self._max = self._clock.call_later(self._max_s, self.flush_now)
            self._texts.append(fragment)
        if self._quiet is not None:
            self._quiet.cancel()
            self._quiet = None
        if self._texts and not self._on_the_way:
            self._quiet = self._clock.call_later(self._quiet_s, self.flush_now)
        return True

    def drop(self) -> tuple[str, ...]:
        """Disarm and forget what is buffered; the dropped fragments, in order.

        For a session that ended another way (a new wake word, silence): the
        glue counts and logs what it drops.
        """
        dropped = tuple(self._texts)
        self._texts = []
        self._armed = False
        self._cancel_timers()
        return dropped

    def flush_now(self) -> None:
        """Hand the buffered fragments on as one text, if any; disarms.

        The flushed text is a new turn whose own result may arm again. With
        nothing buffered, nothing changes.
        """
        if not self._texts:
            return
        text = " ".join(self._texts)
        self._texts = []
        self._armed = False
        self._cancel_timers()
        self._on_flush(text)

    def _cancel_timers(self) -> None:
        """Nothing waits any more: no timers, no fragment expected."""
        self._on_the_way = 0
        for timer in (self._max, self._quiet):
            if timer is not None:
                timer.cancel()
        self._max = self._quiet = None
