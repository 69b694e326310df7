"""Where an interrupted answer resumes: the start of the sentence it was in (issue 13).

An answer is synthesized sentence by sentence and played as one stream; the
satellite reports how far it played in samples of that stream's own rate. To
resume "from the start of the interrupted sentence" the sentences' lengths are
added up in the order they were synthesized, and the sentence whose samples
hold the offset is the one being played: an offset exactly at a boundary is
the next sentence's first sample, so nothing is said twice.

Each sentence is also placed in the response text, so what was heard and where
the answer goes on can be told in words. The design note (seeds/
barge-in-resume.md) found that ``str.find`` places a repeated sentence at its
first occurrence ("OK. OK. OK." gives three times the same place); here each
sentence must *start* the text that is left (``startswith`` at a running
offset), never searched for. Only what the splitter (core/sentences) drops may
lie before or inside it: whitespace and punctuation, never a letter or digit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


class SentenceMismatchError(ValueError):
    """A sentence does not start the response text that is left."""

    def __init__(self, index: int, offset: int) -> None:
        """``index``: the sentence; ``offset``: where in the text it had to start."""
        super().__init__(f"sentence {index} does not start the text at {offset}")
        self.index = index
        self.offset = offset


def _check_samples(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} {value!r} is not a sample count")


@dataclass(frozen=True, slots=True)
class SpokenSentence:
    """One synthesized sentence: its text and its audio's length in samples."""

    text: str
    samples: int

    def __post_init__(self) -> None:
        """ValueError unless ``samples`` is a count (an int >= 0)."""
        _check_samples(self.samples, "samples")


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """The sentence a playback offset falls in, and its first sample."""

    index: int  # the sentence being played (len(sentences): the next to come)
    start: int  # its first sample in the stream: where to resume
    played: int  # the offset asked about


def resume_point(
    sentences: Sequence[SpokenSentence], played: int, *, complete: bool = True
) -> ResumePoint | None:
    """The sentence ``played`` samples into the stream falls in; None: all played.

    With ``complete`` False more sentences are still being synthesized, so an
    offset at or past the end of the known ones is the start of the next one
    (the satellite waited for it), not the end of the answer. Sentences without
    samples (the engine said nothing) are never the one being played.
    """
    _check_samples(played, "played")
    start = 0
    for index, sentence in enumerate(sentences):
        end = start + sentence.samples
        if played < end:
            return ResumePoint(index, start, played)
        start = end
    return None if complete else ResumePoint(len(sentences), start, played)


def _skippable(char: str) -> bool:
    """What the splitter may drop: whitespace and punctuation, not words."""
    return not char.isalnum()


def match_at(text: str, sentence: str, offset: int) -> tuple[int, int] | None:
    """Where ``sentence`` starts and ends in ``text`` at ``offset``; None: it does not.

    Anchored, never searched: before it only skippable characters may be passed
    over, and inside it only runs of them that the splitter collapsed or
    dropped (a line break for a space, "Wait! ! The" for "Wait! The").
    """
    if not sentence:
        return offset, offset
    start = offset
    while start < len(text) and text[start] != sentence[0] and _skippable(text[start]):
        start += 1
    if text.startswith(sentence, start):
        return start, start + len(sentence)
    i, j = 0, start
    while i < len(sentence):
        if j < len(text) and text[j] == sentence[i]:
            i, j = i + 1, j + 1
        elif j < len(text) and _skippable(text[j]):
            j += 1
        elif sentence[i].isspace():
            i += 1
        else:
            return None
    return start, j


class SentenceTrack:
    """The sentences of one response as they are synthesized, placed in its text."""

    def __init__(self, text: str | None) -> None:
        """No sentence yet; ``text`` is the whole response as the agent wrote it.

        None: the text is still being written (an agent that streams its
        answer); it grows by each sentence as the sentence comes.
        """
        self.text = text or ""
        self._growing = text is None
        self.sentences: list[SpokenSentence] = []
        self.spans: list[tuple[int, int]] = []
        self.complete = False

    @property
    def total(self) -> int:
        """Samples synthesized so far."""
        return sum(sentence.samples for sentence in self.sentences)

    def add(self, text: str, samples: int) -> SpokenSentence:
        """The next sentence was synthesized; SentenceMismatchError if out of place.

        ``text`` "" is audio without words (a preannounce sound): it takes its
        place in the stream and none in the text.
        """
        if self.complete:
            raise ValueError("the response is complete: no sentence can follow")
        sentence = SpokenSentence(text, samples)
        offset = self.spans[-1][1] if self.spans else 0
        if self._growing and text:
            self.text = f"{self.text} {text}" if self.text else text
        span = match_at(self.text, text, offset)
        if span is None:
            raise SentenceMismatchError(len(self.sentences), offset)
        self.sentences.append(sentence)
        self.spans.append(span)
        return sentence

    def finish(self) -> None:
        """Every sentence has been synthesized: past them, the answer is over."""
        self.complete = True

    def point(self, played: int) -> ResumePoint | None:
        """``resume_point`` of this response's sentences so far."""
        return resume_point(self.sentences, played, complete=self.complete)

    def heard(self, point: ResumePoint | None) -> str:
        """The response text before ``point`` (all of it for None): what was said."""
        if point is None:
            return self.text
        if point.index < len(self.spans):
            return self.text[: self.spans[point.index][0]].rstrip()
        return self.text[: self.spans[-1][1]] if self.spans else ""
