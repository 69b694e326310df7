"""Split a spoken response into sentences: the first plays while the rest synthesize.

Conservative on purpose: a wrong split costs a slightly odd pause, a missed split
only costs latency. Abbreviations ("Dr.", "e.g."), decimals ("21.5") and times
("10.30") never end a sentence.
"""

from __future__ import annotations

import re

_ABBREVIATIONS = frozenset(
    {"dr", "mr", "mrs", "ms", "st", "vs", "etc", "e.g", "i.e", "approx", "no", "min"}
)
# A sentence ends at . ! ? … (and closing quotes/brackets), then whitespace.
_END = re.compile(r"""(?<=[.!?…])["')\]]*\s+""")
MIN_SENTENCE_CHARS = 12  # shorter pieces are merged into the next one
_LEADING = "….,;:!? "  # punctuation a sentence must not start with


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order; never empty strings.

    A sentence never starts with punctuation ("… and then"): wyoming-piper
    says nothing at all for a text that starts with "…".
    """
    text = " ".join(text.split())
    if not text:
        return []
    pieces: list[str] = []
    start = 0
    for match in _END.finditer(text):
        candidate = text[start : match.start()].rstrip()
        last_word = candidate.rsplit(" ", 1)[-1].rstrip(".").lower()
        if last_word in _ABBREVIATIONS:
            continue
        pieces.append(text[start : match.end()].strip())
        start = match.end()
    if start < len(text):
        pieces.append(text[start:].strip())
    words = (piece.lstrip(_LEADING) for piece in pieces)
    return _merge_short([piece for piece in words if piece])


def _merge_short(pieces: list[str]) -> list[str]:
    """Join pieces too short to be worth a synthesis call of their own."""
    merged: list[str] = []
    carry = ""
    for piece in pieces:
        carry = f"{carry} {piece}".strip()
        if len(carry) >= MIN_SENTENCE_CHARS:
            merged.append(carry)
            carry = ""
    if carry:
        if merged:
            merged[-1] = f"{merged[-1]} {carry}"
        else:
            merged.append(carry)
    return merged
