"""What an utterance says, in a form rules can compare, with the words kept verbatim.

Speech-to-text writes the same words many ways: "Cancel!", "cancel", "Okay, Nabu",
"zero zero zero", "000". Rules compare a *key*: case folded, punctuation and
apostrophes dropped, whitespace collapsed, number words turned into digits and
neighbouring digits joined ("zero zero zero" and "000" both become ``000``,
"twenty-one" becomes ``21``). The key is only for matching: what a frame keeps is
the cleaned *text*, verbatim, and every word remembers where it stands in it, so a
phrase can be cut out of an utterance without touching the rest ("okay nabu, turn
on the light" → "turn on the light").

Not everything speech-to-text returns is speech. Bracketed and parenthesized
tokens (``[BLANK_AUDIO]``, ``(noise)``, ``*music*``, ``♪``) are removed by
``clean``; filler ("uh", "um", ...) stays in the text but never counts as a real
word. An utterance without real words is never content and never a command.
"""

from __future__ import annotations

import re
from typing import Final, Literal
import unicodedata

__all__ = [
    "FILLER",
    "Heard",
    "Position",
    "clean",
    "has_real_words",
    "hear",
    "normalize",
]

# Sounds that are not words. "oh" is not here: it is also a digit in speech.
FILLER: Final = frozenset(
    {"uh", "uhh", "uhm", "um", "umm", "er", "erm", "ah", "eh", "hm", "hmm", "mm"}
    | {"mmm", "mhm"}
)

_NOISE = re.compile(r"\[[^\]]*\]|\([^)]*\)|\*[^*]*\*|[♪♫]+")
_MAY_BE_NOISE = re.compile(r"[\[(*♪♫]")
_TOKEN = re.compile(r"\S+")
_UNITS: Final = {
    word: str(value)
    for value, word in enumerate(
        (
            *("zero", "one", "two", "three", "four", "five", "six", "seven"),
            *("eight", "nine", "ten", "eleven", "twelve", "thirteen", "fourteen"),
            *("fifteen", "sixteen", "seventeen", "eighteen", "nineteen"),
        )
    )
}
_TENS: Final = {
    word: str(value)
    for value, word in zip(
        range(20, 100, 10),
        ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"),
        strict=True,
    )
}

_NUMBER_WORDS: Final = frozenset(_UNITS) | frozenset(_TENS)

# Characters trimmed where a phrase is cut out of the verbatim text.
_DASHES: Final = "-\u2013\u2014"
_TRIM_BEFORE: Final = " \t\n,;:" + _DASHES
_TRIM_AFTER: Final = " \t\n,.;:!?" + _DASHES

Position = Literal["start", "end", "anywhere"]


class _Separators(dict[int, int]):
    """``str.translate`` table: a character that is not part of a word → space.

    Word characters are letters, digits, combining marks and apostrophes (the
    typographic one becomes ``'``). One character in, one out, so positions in
    the translated text are positions in the original. Filled lazily: each
    character is classified once, then translation runs at C speed.
    """

    def __missing__(self, code: int) -> int:
        char = chr(code)
        if char in "'\u2019":
            value = ord("'")
        elif char.isalnum() or unicodedata.category(char).startswith("M"):
            value = code
        else:
            value = ord(" ")
        self[code] = value
        return value


_SEPARATORS: Final = _Separators()


class Heard:
    """An utterance as the rules see it; built once per dispatch by ``hear``."""

    __slots__ = ("_spans", "key", "keys", "raw", "real", "text")

    def __init__(self, raw: str, text: str, keys: tuple[str, ...], real: bool) -> None:
        """Use ``hear``."""
        self.raw = raw  # what speech-to-text returned
        self.text = text  # ``clean(raw)``: what content keeps, verbatim
        self.keys = keys  # each word's key
        self.key = " ".join(keys)  # what exact rules compare
        self.real = real  # a word that is neither noise nor filler
        self._spans: tuple[tuple[int, int], ...] | None = None

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """Where each key's word stands in ``text`` (computed when first needed)."""
        if self._spans is None:
            keys, spans = _words(self.text, with_spans=True)
            self._spans = tuple(_fold_numbers(keys, spans)[1] or ())
        return self._spans

    def find(self, phrase: tuple[str, ...], at: Position) -> int | None:
        """Index of the first word where the key words ``phrase`` stand, or None.

        ``at`` restricts where: the start of the utterance, its end or anywhere
        (word boundaries always).
        """
        keys, size = self.keys, len(phrase)
        if at == "start":
            return 0 if keys[:size] == phrase else None
        if at == "end":
            return len(keys) - size if size and keys[-size:] == phrase else None
        first = phrase[0]
        for index in range(len(keys) - size + 1):
            if keys[index] == first and keys[index : index + size] == phrase:
                return index
        return None

    def before(self, index: int) -> str:
        """The verbatim text before word ``index`` (trailing commas etc. trimmed)."""
        if index >= len(self.keys):
            return self.text
        return self.text[: self.spans[index][0]].rstrip(_TRIM_BEFORE)

    def after(self, index: int) -> str:
        """The verbatim text after word ``index`` (leading punctuation trimmed)."""
        if index < 0:
            return self.text
        return self.text[self.spans[index][1] :].lstrip(_TRIM_AFTER)

    def __repr__(self) -> str:
        """The text and its key."""
        return f"Heard({self.text!r}, key={self.key!r}, real={self.real})"


def clean(text: str) -> str:
    """``text`` without noise tokens, whitespace collapsed: what content keeps."""
    if _MAY_BE_NOISE.search(text):
        text = _NOISE.sub(" ", text)
    return " ".join(text.split())


type _Spans = list[tuple[int, int]]


def _words(text: str, *, with_spans: bool = False) -> tuple[list[str], _Spans | None]:
    """The words' keys (case folded, no apostrophes) and, if asked, their spans."""
    spaced = text.translate(_SEPARATORS)
    keys = spaced.casefold().split()
    spans = [match.span() for match in _TOKEN.finditer(spaced)] if with_spans else None
    if "'" in spaced:  # drop apostrophes; a token of apostrophes only is no word
        kept = [index for index, key in enumerate(keys) if key.strip("'")]
        keys = [keys[index].replace("'", "") for index in kept]
        spans = [spans[index] for index in kept] if spans is not None else None
    return keys, spans


def _fold_numbers(
    keys: list[str], spans: _Spans | None
) -> tuple[list[str], _Spans | None]:
    """Number words to digits; "twenty one" → 21; neighbouring digits joined."""
    if _NUMBER_WORDS.isdisjoint(keys) and not any(map(str.isdigit, keys)):
        return keys, spans
    out_keys: list[str] = []
    out_spans: _Spans = []
    numeric = tens_open = False  # the last word was a number / a bare tens word
    for index, key in enumerate(keys):
        digits = _UNITS.get(key) or _TENS.get(key) or (key if key.isdigit() else None)
        span = spans[index] if spans is not None else (0, 0)
        if digits is None:
            out_keys.append(key)
            out_spans.append(span)
        elif numeric:
            last = out_keys[-1]
            if tens_open and len(digits) == 1 and digits != "0":
                out_keys[-1] = last[:-1] + digits  # "twenty" "one": 20 → 21
            else:
                out_keys[-1] = last + digits  # "zero" "zero": 0 → 00
            out_spans[-1] = (out_spans[-1][0], span[1])
        else:
            out_keys.append(digits)
            out_spans.append(span)
        numeric = digits is not None
        tens_open = key in _TENS
    return out_keys, (out_spans if spans is not None else None)


def hear(text: str, filler: frozenset[str] = FILLER) -> Heard:
    """Clean, tokenize and normalize ``text`` once for all rules of a dispatch."""
    cleaned = clean(text)
    keys = _fold_numbers(_words(cleaned)[0], None)[0]
    return Heard(text, cleaned, tuple(keys), not filler.issuperset(keys))


def normalize(text: str) -> str:
    """The matching key of ``text`` (what exact rules and vocabularies compare)."""
    return hear(text).key


def has_real_words(text: str, filler: frozenset[str] = FILLER) -> bool:
    """Whether ``text`` holds a word that is neither noise nor filler."""
    return hear(text, filler).real
