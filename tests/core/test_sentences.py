"""Sentence splitting for streamed responses."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.sentences import (
    SentenceSplitter,
    split_sentences,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", []),
        ("   ", []),
        ("Turned on the light.", ["Turned on the light."]),
        (
            "The kitchen light is on. The hallway is 21.5 degrees! Anything else?",
            [
                "The kitchen light is on.",
                "The hallway is 21.5 degrees!",
                "Anything else?",
            ],
        ),
        (
            "Dr. Smith arrives at 10.30 today. He brings e.g. cake.",
            ["Dr. Smith arrives at 10.30 today.", "He brings e.g. cake."],
        ),
        (
            "Done. The garage door is closed now.",
            ["Done. The garage door is closed now."],
        ),
        (
            'He said "stop." Then the music ended.',
            ['He said "stop."', "Then the music ended."],
        ),
        ("No punctuation at the end", ["No punctuation at the end"]),
        ("Line one.\n\nLine  two is here.", ["Line one. Line two is here."]),
        # No sentence starts with punctuation: Piper says nothing for "… and".
        (
            "The smoke detector went off … and the water sensor reports a leak.",
            ["The smoke detector went off …", "and the water sensor reports a leak."],
        ),
        ("… and then it stopped.", ["and then it stopped."]),
        ("Wait! ! The door is open.", ["Wait! The door is open."]),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_nothing_is_lost_or_reordered() -> None:
    text = "First sentence here. Second one follows! Third, a question? Fourth."
    assert " ".join(split_sentences(text)) == text


STREAMED = (
    "Sure, here it is. The kitchen is at 21.5 degrees… and the fan is off! "
    "Dr. Smith called? Yes. OK."
)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7, 16, len(STREAMED)])
def test_text_in_pieces_splits_as_the_whole_text(size: int) -> None:
    splitter = SentenceSplitter()
    found = []
    for start in range(0, len(STREAMED), size):
        found += splitter.add(STREAMED[start : start + size])
    found += splitter.finish()

    assert found == split_sentences(STREAMED)


def test_a_sentence_is_handed_on_once_the_next_one_has_begun() -> None:
    splitter = SentenceSplitter()

    assert splitter.add("Sure, here it is.") == []  # "it is. 5" could follow
    assert splitter.add(" The kitc") == []  # too short to stand alone yet
    assert splitter.add("hen light is off.") == ["Sure, here it is."]
    assert splitter.finish() == ["The kitchen light is off."]
    assert splitter.finish() == []


def test_a_decimal_split_between_pieces_stays_in_its_sentence() -> None:
    splitter = SentenceSplitter()

    assert splitter.add("It is 21.") == []
    assert splitter.add("5 degrees in the kitchen. The fan is off") == [
        "It is 21.5 degrees in the kitchen."
    ]
    assert splitter.finish() == ["The fan is off"]
