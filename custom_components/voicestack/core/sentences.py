"""Split a spoken response into sentences: the first plays while the rest synthesize.

The boundaries are ``sentence-stream``'s, the splitter Home Assistant and
wyoming-piper use: a sentence ends at . ! ? … (with closing quotes or brackets)
before a capital letter, so abbreviations ("Dr.", "e.g.") and decimals ("21.5")
stay inside. Two things are added for speech engines:

- no sentence starts with punctuation: wyoming-piper says nothing at all for a
  text that starts with "…", and sentence-stream ends a sentence at every "…";
- pieces shorter than ``MIN_SENTENCE_CHARS`` are merged into the next one, as a
  synthesis call of their own costs more than it saves.

sentence-stream searches its whole buffer again for every sentence it finds, so
a text handed over in one piece costs time quadratic in its length (100 kB of
short sentences: 5 s). It is made for a stream, so it is fed one: pieces that
end after a sentence mark, and its buffer stays about a sentence long. Where
the pieces end does not change what it finds (it waits for the next piece
before deciding on a mark at the end of its buffer).
"""

from __future__ import annotations

from collections.abc import Iterator
import re
from typing import Final

from sentence_stream import stream_to_sentences

MIN_SENTENCE_CHARS: Final = 12  # shorter pieces are merged into the next one
_LEADING: Final = "….,;:!? "  # punctuation a sentence must not start with
# Punctuation standing alone after a sentence's end ("Wait! ! The door"): it
# would start the next sentence, and is not said anyway.
_STRAY: Final = re.compile(r"(?<=[.!?…]) [.,;:!?…]+(?= |$)")
# Where the text is cut to feed sentence-stream (see the module docstring):
# A Chinese full stop, exclamation or question mark needs no space after it.
_PIECE_END: Final = re.compile(r"[.!?…] |[\u3002\uff01\uff1f]")


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order; never empty strings."""
    text = _STRAY.sub("", " ".join(text.split()))
    pieces = (piece.lstrip(_LEADING) for piece in stream_to_sentences(_feed(text)))
    return _merge_short([piece for piece in pieces if piece])


def _feed(text: str) -> Iterator[str]:
    """``text`` in pieces, each ending after a sentence mark (the last: the rest)."""
    start = 0
    for mark in _PIECE_END.finditer(text):
        yield text[start : mark.end()]
        start = mark.end()
    yield text[start:]


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


class SentenceSplitter:
    """``split_sentences`` for text that arrives in pieces (an agent's deltas).

    ``add`` returns the sentences a piece completed, so the first can be
    synthesized while the agent still writes the rest; ``finish`` the rest.
    Text handed over in one piece gives exactly ``split_sentences``'s
    sentences. The last sentence found is held back until more text (or the
    end) confirms it: a mark at the end of the text so far may not end a
    sentence ("21." before "5 degrees"), and a short last piece is merged
    into it. Only that held-back sentence is split again with each piece, so
    the work stays linear in the length of the answer.
    """

    def __init__(self) -> None:
        """No text yet."""
        self._rest = ""  # the held-back sentence and what came after it

    def add(self, text: str) -> list[str]:
        """The sentences ``text`` completed, in order (often none)."""
        self._rest += text
        if not _PIECE_END.search(self._rest):
            return []
        sentences = split_sentences(self._rest)
        if len(sentences) < 2:
            return []
        # The held-back sentence, with the space that may separate it from
        # the next piece ("Hello " + "world").
        space = " " if self._rest[-1:].isspace() else ""
        self._rest = sentences[-1] + space
        return sentences[:-1]

    def finish(self) -> list[str]:
        """The sentences left once all text has come."""
        rest, self._rest = self._rest, ""
        return split_sentences(rest)
