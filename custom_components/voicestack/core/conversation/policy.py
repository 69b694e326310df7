"""What a user chooses for follow-up conversations, validated (HA-free; issue 14).

The design note the follow-up loop started from (seeds/interaction-loop.md)
hard-coded its limits ("just edit this file and redeploy") and ruled out memory
between turns. Here they are one validated ``FollowUpPolicy``, defaults first:

- ``mode``: ``agent`` (the mic opens again only when the agent asks back:
  today's behaviour, now bounded), ``off`` (single shot), ``always`` (after
  every answer);
- ``max_turns``: 3 (the note's ``MAX_INTERACTIONS``), 1 to 10;
- ``memory``: ``shared`` (the agent's conversation id carries from turn to
  turn and is dropped with the session, so "and in the bedroom?" works) or
  ``independent`` (the note's choice: a fresh conversation every turn);
- ``listen_s``: 8 s (``turn.FOLLOW_UP_TIMEOUT_S``, the window the agent's
  question opened before), 2 to 30 s;
- ``stop_words``: the English phrases below (the note's four plus what people
  say to end a talk), at most 50 phrases of at most 60 characters, no two the
  same once normalized; an empty list is allowed (silence and the limit end);
- ``closing``: what is said after an answer that asks something back when the
  turn limit ends the session (nobody listens any more), in the language's
  words ("Say the wake word to go on."); at most 100 characters, empty: none.

Bad values raise ``FollowUpConfigError`` whose ``code`` names the option, for
the glue to translate. Phrases compare by ``spoken``: the ``hear(text).key``
words (case, punctuation and number words normalized), filler ("uh") dropped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final, cast

from ..router.normalize import FILLER, hear
from .phrases import CLOSINGS, FALLBACK, STOP_WORDS, language_of
from .turn import FOLLOW_UP_TIMEOUT_S

MAX_TURNS_RANGE: Final = (1, 10)
LISTEN_S_RANGE: Final = (2.0, 30.0)
MAX_PHRASES: Final = 50
MAX_PHRASE_CHARS: Final = 60
MAX_CLOSING_CHARS: Final = 100
DEFAULT_STOP_WORDS: Final = STOP_WORDS[FALLBACK]


class FollowUpMode(StrEnum):
    """When the mic opens again after an answer."""

    OFF = "off"  # single shot
    AGENT = "agent"  # only when the agent asks back
    ALWAYS = "always"  # after every answer, up to the limit


class Memory(StrEnum):
    """What the agent remembers from one turn of a session to the next."""

    INDEPENDENT = "independent"  # nothing: conversation id None every turn
    SHARED = "shared"  # the session's conversation id


class FollowUpConfigError(ValueError):
    """Bad configuration, with a stable ``code`` (the option at fault) to translate."""

    def __init__(self, code: str, message: str) -> None:
        """``code`` names the option, e.g. ``max_turns`` or ``stop_words``."""
        super().__init__(message)
        self.code = code


def spoken(text: str) -> tuple[str, ...]:
    """The words' keys of ``text``, filler dropped: what phrases compare."""
    return tuple(key for key in hear(text).keys if key not in FILLER)


def _check(ok: bool, code: str, message: str) -> None:
    if not ok:
        raise FollowUpConfigError(code, message)


def validate_phrases(phrases: Iterable[str], code: str) -> tuple[str, ...]:
    """User phrases, stripped; FollowUpConfigError(``code``) names the first fault.

    An empty list is valid (no phrase at all). A phrase must hold a word that
    is not filler, fit ``MAX_PHRASE_CHARS``, and differ from the others after
    normalization ("That's all" and "thats all" are one phrase).
    """
    _check(not isinstance(phrases, str), code, "a list of phrases, not one string")
    cleaned = tuple(phrases)
    _check(len(cleaned) <= MAX_PHRASES, code, f"at most {MAX_PHRASES} phrases")
    seen: dict[tuple[str, ...], str] = {}
    for phrase in cleaned:
        words = spoken(phrase) if isinstance(phrase, str) else ()
        _check(bool(words), code, f"not a phrase: {phrase!r}")
        too_long = len(phrase.strip()) > MAX_PHRASE_CHARS
        _check(not too_long, code, f"over {MAX_PHRASE_CHARS} characters: {phrase!r}")
        _check(words not in seen, code, f"{phrase!r} repeats {seen.get(words)!r}")
        seen[words] = phrase
    return tuple(phrase.strip() for phrase in cleaned)


def _enum[E: StrEnum](kind: type[E], value: str, code: str) -> E:
    _check(value in set(kind), code, f"{value!r} is not one of {', '.join(kind)}")
    return kind(value)


@dataclass(frozen=True)
class FollowUpPolicy:
    """The loop's limits, validated on construction (see the module)."""

    mode: FollowUpMode = FollowUpMode.AGENT
    max_turns: int = 3
    memory: Memory = Memory.SHARED
    listen_s: float = FOLLOW_UP_TIMEOUT_S
    stop_words: tuple[str, ...] = DEFAULT_STOP_WORDS
    closing: str = CLOSINGS[FALLBACK]
    # The language of the politeness a stop word may be followed by.
    language: str = FALLBACK

    def __post_init__(self) -> None:
        """FollowUpConfigError for what the loop cannot run; phrases stripped."""
        low, high = MAX_TURNS_RANGE
        turns = self.max_turns
        whole = type(turns) is int and low <= turns <= high
        _check(whole, "max_turns", f"max_turns: a whole number, {low} to {high}")
        low_s, high_s = LISTEN_S_RANGE
        listen_s = self.listen_s
        number = type(listen_s) in {int, float} and low_s <= listen_s <= high_s
        _check(number, "listen_s", f"listen_s: {low_s} to {high_s} seconds")
        phrases = validate_phrases(self.stop_words, "stop_words")
        object.__setattr__(self, "stop_words", phrases)
        closing = self.closing
        fits = isinstance(closing, str) and len(closing.strip()) <= MAX_CLOSING_CHARS
        _check(
            fits, "closing", f"closing: text of at most {MAX_CLOSING_CHARS} characters"
        )
        object.__setattr__(self, "closing", closing.strip())
        object.__setattr__(self, "language", language_of(self.language))

    @classmethod
    def parse(
        cls,
        *,
        mode: str = FollowUpMode.AGENT,
        max_turns: float = 3,
        memory: str = Memory.SHARED,
        listen_s: float = FOLLOW_UP_TIMEOUT_S,
        stop_words: Iterable[str] | None = None,
        closing: str | None = None,
        language: str = FALLBACK,
    ) -> FollowUpPolicy:
        """A policy from form values (strings; numbers a form may give as 3.0).

        Without ``stop_words`` or ``closing``, the defaults of ``language`` (a
        tag such as "de-CH"; English where none are known).
        """
        whole = isinstance(max_turns, float) and max_turns.is_integer()
        language = language_of(language)
        return cls(
            mode=_enum(FollowUpMode, mode, "mode"),
            # A fraction goes on as it came, for the check on construction to refuse.
            max_turns=int(max_turns) if whole else cast("int", max_turns),
            memory=_enum(Memory, memory, "memory"),
            listen_s=listen_s,
            stop_words=validate_phrases(
                STOP_WORDS[language] if stop_words is None else stop_words,
                "stop_words",
            ),
            closing=CLOSINGS[language] if closing is None else closing,
            language=language,
        )


# The entry options that hold a policy, and the field each one fills.
OPTION_FIELDS: Final = {
    "follow_up_mode": "mode",
    "follow_up_max_turns": "max_turns",
    "follow_up_memory": "memory",
    "follow_up_listen_s": "listen_s",
    "follow_up_stop_words": "stop_words",
    "follow_up_closing": "closing",
}


def policy_from_options(
    options: Mapping[str, Any], language: str = FALLBACK
) -> FollowUpPolicy:
    """The policy an entry's options describe.

    ``language``'s defaults for what they lack. Raises ``FollowUpConfigError`` for a bad value, like ``parse``.
    """
    return FollowUpPolicy.parse(
        language=language,
        **{
            field: options[key]
            for key, field in OPTION_FIELDS.items()
            if key in options
        },
    )
