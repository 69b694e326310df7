"""Sentence splitting for streamed responses."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.sentences import split_sentences


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
