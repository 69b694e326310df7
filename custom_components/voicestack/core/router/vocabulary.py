"""The words of every built-in frame, user-editable, validated as a whole.

Each vocabulary entry (``query.submit``, ``confirm.yes``, ...) is a tuple of
phrases compared after normalization (case, punctuation, whitespace, number
words). An entry written ``re:<pattern>`` is a regular expression that must match
the whole normalized utterance (lower case, no punctuation, numbers as digits),
except where the phrase is also looked for inside longer utterances (wake phrases,
"start dictation …", "… end dictation"): those take plain phrases only.

``common.*`` entries are shared on purpose: "cancel" closes the query, the voice
picker and the confirmation alike, and "read back" works in query and inventory.
Apart from that, every phrase has exactly one meaning: a phrase claimed by two
entries (or a shortcut and an entry, or a regex matching another entry's phrase)
is rejected, because the frame on top would silently shadow the other meaning.

Shortcuts map exact phrases to an action id (the glue runs a script); they are
answered at once, without the conversation agent.

``Vocabulary(...)`` raises ``VocabularyError`` listing every ``Problem`` (entry
key and a message fit for a form), so the options flow can show them all.
Text form, as the options flow edits it: phrases separated by commas or new
lines (a ``re:`` entry runs to the end of its line); shortcuts one per line as
``phrase = action_id``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import re
from typing import Final

from .normalize import hear
from .rules import REGEX_PREFIX, is_regex

__all__ = [
    "DEFAULT_PHRASES",
    "ENTRIES",
    "SHORTCUTS",
    "Entry",
    "Problem",
    "Vocabulary",
    "VocabularyError",
    "parse_phrases",
    "parse_shortcuts",
    "read_shortcuts",
]

SHORTCUTS: Final = "shortcuts"


@dataclass(frozen=True, slots=True)
class Entry:
    """One vocabulary entry: key, meaning, and what it accepts."""

    key: str
    meaning: str
    required: bool = False  # an empty entry would leave no way to do this
    regex: bool = True  # ``re:`` phrases allowed


ENTRIES: Final = (
    Entry("common.cancel", "close query, voice picker or confirmation", required=True),
    Entry("common.read_back", "say what was gathered (query, inventory)"),
    Entry("base.what_mode", "say the current mode"),
    Entry("base.always_listening", "switch to always-listening mode"),
    Entry("base.wake_word", "switch to wake-word mode"),
    Entry("base.start_dictation", "start raw dictation", regex=False),
    Entry("base.start_inventory", "start an inventory", regex=False),
    Entry("base.switch_voice", "pick another voice"),
    Entry(
        "base.wake", "wake phrase (always-listening mode): opens a query", regex=False
    ),
    Entry("query.submit", "send the query", required=True),
    Entry("dictation.exit", "end and save the dictation", required=True, regex=False),
    Entry("dictation.abort", "end and discard the dictation", required=True),
    Entry("inventory.save", "save the list", required=True),
    Entry("inventory.undo", "remove the last item"),
    Entry("inventory.abort", "discard the list", required=True),
    Entry("confirm.yes", "run the pending action", required=True),
    Entry("confirm.no", "discard the pending action", required=True),
)
_ENTRY: Final = {entry.key: entry for entry in ENTRIES}

DEFAULT_PHRASES: Final[Mapping[str, tuple[str, ...]]] = {
    "common.cancel": ("cancel", "abort", "never mind", "nevermind", "forget it"),
    "common.read_back": ("read back", "read it back", "read that back"),
    "base.what_mode": ("what mode", "which mode", "what mode are you in"),
    "base.always_listening": ("always listen", "always listening", "listen always"),
    "base.wake_word": ("wake word mode", "wake word only", "stop always listening"),
    "base.start_dictation": ("start dictation", "begin dictation"),
    "base.start_inventory": ("start inventory", "begin inventory"),
    "base.switch_voice": ("switch voice", "change voice", "change your voice"),
    "base.wake": ("okay nabu", "ok nabu", "hey nabu", "hey jarvis"),
    "query.submit": ("go", "done", "send", "send it"),
    # Whisper often hears "end dictation" as one word, or as "and dictation".
    "dictation.exit": (
        "end dictation",
        "endictation",
        "and dictation",
        "stop dictation",
        "finish dictation",
    ),
    "dictation.abort": ("abort dictation", "discard dictation"),
    "inventory.save": ("save", "save list", "save inventory"),
    "inventory.undo": ("scratch that", "undo", "remove last"),
    "inventory.abort": ("abort inventory", "discard inventory"),
    "confirm.yes": ("yes", "yeah", "yep", "yes please", "confirm", "do it"),
    "confirm.no": ("no", "nope", "no thanks", "don't"),
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong, for the options form: which entry, what, in words."""

    key: str  # an entry key or ``shortcuts``
    message: str
    # What kind of problem: a translation key for the options form's error.
    code: str = field(default="invalid", compare=False)

    def __str__(self) -> str:
        """``key: message``."""
        return f"{self.key}: {self.message}"


class VocabularyError(ValueError):
    """The vocabulary is not usable; ``problems`` lists why."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        """All problems at once."""
        self.problems = tuple(problems)
        super().__init__("; ".join(map(str, self.problems)))


def parse_phrases(value: str | Iterable[str]) -> tuple[str, ...]:
    """Phrases from the options form (or a list), stripped, empties kept.

    Empty phrases are kept so validation can reject them ("cancel,,abort").
    """
    if not isinstance(value, str):
        return tuple(phrase.strip() for phrase in value)
    phrases: list[str] = []
    for line in value.splitlines():
        stripped = line.strip()
        if not stripped:
            continue
        if is_regex(stripped):
            phrases.append(stripped)
        else:
            phrases.extend(part.strip() for part in stripped.split(","))
    return tuple(phrases)


def parse_shortcuts(value: str | Mapping[str, str]) -> dict[str, str]:
    """Shortcuts from ``phrase = action_id`` lines (or a mapping), stripped.

    Raises ``VocabularyError`` for a line without ``=``.
    """
    shortcuts, problems = read_shortcuts(value)
    if problems:
        raise VocabularyError(problems)
    return shortcuts


def read_shortcuts(
    value: str | Mapping[str, str],
) -> tuple[dict[str, str], list[Problem]]:
    """The shortcuts that parse, and a problem per line that does not."""
    if not isinstance(value, str):
        return {p.strip(): a.strip() for p, a in value.items()}, []
    shortcuts: dict[str, str] = {}
    problems: list[Problem] = []
    for number, line in enumerate(value.splitlines(), start=1):
        if not line.strip():
            continue
        phrase, equals, action = line.rpartition("=")
        if not equals:
            problems.append(
                Problem(
                    SHORTCUTS,
                    f"line {number} needs 'phrase = action': {line.strip()!r}",
                    code="bad_shortcut_line",
                )
            )
            continue
        shortcuts[phrase.strip()] = action.strip()
    return shortcuts, problems


class _Claims:
    """Who claims which normalized phrase, and which regexes exist."""

    def __init__(self) -> None:
        self.literals: dict[str, tuple[str, str]] = {}  # key → (owner, phrase)
        self.regexes: list[tuple[str, str, re.Pattern[str]]] = []
        self.problems: list[Problem] = []

    def phrase(self, key: str, owner: str, phrase: str, *, regex_ok: bool) -> None:
        if not phrase:
            self.problems.append(
                Problem(
                    key,
                    "an empty phrase (check for doubled commas)",
                    code="empty_phrase",
                )
            )
        elif is_regex(phrase):
            self._regex(key, owner, phrase, regex_ok=regex_ok)
        elif not (heard := hear(phrase)).real:
            self.problems.append(
                Problem(
                    key,
                    f"{phrase!r} has no words (filler and noise never count)",
                    code="no_words",
                )
            )
        elif (other := self.literals.get(heard.key)) is None:
            self.literals[heard.key] = (owner, phrase)
        elif other[0] != owner:
            self.problems.append(
                Problem(
                    key,
                    f"{phrase!r} is claimed twice: by {other[0]} and {owner}",
                    code="claimed_twice",
                )
            )

    def _regex(self, key: str, owner: str, phrase: str, *, regex_ok: bool) -> None:
        if not regex_ok:
            self.problems.append(
                Problem(
                    key,
                    f"{phrase!r}: only plain phrases here (no regular expressions)",
                    code="regex_not_allowed",
                )
            )
            return
        try:
            pattern = re.compile(phrase.removeprefix(REGEX_PREFIX))
        except re.error as err:
            self.problems.append(
                Problem(
                    key,
                    f"{phrase!r} is not a valid regular expression: {err}",
                    code="bad_regex",
                )
            )
            return
        if pattern.fullmatch(""):
            self.problems.append(
                Problem(
                    key, f"{phrase!r} matches an empty utterance", code="matches_empty"
                )
            )
            return
        self.regexes.append((key, owner, pattern))

    def cross_check(self) -> None:
        """A regex must not match a phrase another entry claims."""
        for key, owner, pattern in self.regexes:
            for normalized, (other, phrase) in self.literals.items():
                if other != owner and pattern.fullmatch(normalized):
                    self.problems.append(
                        Problem(
                            key,
                            f"re:{pattern.pattern!r} also matches {phrase!r} of {other}",
                            code="regex_overlap",
                        )
                    )


def _validate(
    phrases: Mapping[str, tuple[str, ...]], shortcuts: Mapping[str, str]
) -> list[Problem]:
    claims = _Claims()
    for key, values in phrases.items():
        entry = _ENTRY[key]
        if entry.required and not values:
            claims.problems.append(
                Problem(
                    key,
                    f"needs at least one phrase ({entry.meaning})",
                    code="needs_phrase",
                )
            )
        owner = f"{key} ({entry.meaning})"
        for phrase in values:
            claims.phrase(key, owner, phrase, regex_ok=entry.regex)
    for phrase, action in shortcuts.items():
        if not action:
            claims.problems.append(
                Problem(
                    SHORTCUTS, f"shortcut {phrase!r} has no action", code="no_action"
                )
            )
        claims.phrase(
            SHORTCUTS, f"shortcut {phrase!r} → {action}", phrase, regex_ok=True
        )
    claims.cross_check()
    return claims.problems


class Vocabulary:
    """Every entry's phrases (defaults where not given) and the shortcuts."""

    __slots__ = ("_phrases", "shortcuts")

    def __init__(
        self,
        phrases: Mapping[str, str | Iterable[str]] | None = None,
        shortcuts: str | Mapping[str, str] | None = None,
    ) -> None:
        """Override entries (form text or lists); raises ``VocabularyError``."""
        problems = [
            Problem(key, "unknown vocabulary entry", code="unknown_entry")
            for key in phrases or {}
            if key not in _ENTRY
        ]
        merged = dict(DEFAULT_PHRASES)
        merged.update(
            (key, parse_phrases(value))
            for key, value in (phrases or {}).items()
            if key in _ENTRY
        )
        # A bad line must not hide the other problems: check the rest anyway.
        parsed, unparsed = read_shortcuts(shortcuts or {})
        problems.extend(unparsed)
        problems.extend(_validate(merged, parsed))
        if problems:
            raise VocabularyError(problems)
        self._phrases = merged
        self.shortcuts: Mapping[str, str] = parsed

    def __getitem__(self, key: str) -> tuple[str, ...]:
        """The phrases of entry ``key``."""
        return self._phrases[key]

    def as_options(self) -> dict[str, str]:
        """The form text of every entry and of the shortcuts (round-trips)."""
        options = {
            key: "\n".join(self._separate(values))
            for key, values in self._phrases.items()
        }
        options[SHORTCUTS] = "\n".join(
            f"{phrase} = {action}" for phrase, action in self.shortcuts.items()
        )
        return options

    @staticmethod
    def _separate(values: tuple[str, ...]) -> list[str]:
        """Plain phrases joined by commas on one line, each regex on its own."""
        plain = ", ".join(value for value in values if not is_regex(value))
        return ([plain] if plain else []) + [
            value for value in values if is_regex(value)
        ]
