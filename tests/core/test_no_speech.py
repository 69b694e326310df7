"""What speech-to-text makes up from silence is nothing said, unless speech was heard."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.no_speech import (
    EmptyReason,
    emptiness,
    made_up,
)


@pytest.mark.parametrize(
    "text",
    [
        "Thanks.",
        "Thank you.",
        " thank you! ",
        "Thank you for watching.",
        "Thank you so much for watching!",
        "THANKS FOR WATCHING",
        "you",
        "You.",
        "Bye.",
    ],
)
def test_whispers_phrases_for_silence_are_made_up(text: str) -> None:
    assert made_up(text)


@pytest.mark.parametrize(
    "text",
    ["Thank you, turn off the light.", "Turn on the fan.", "you too", "yes", ""],
)
def test_requests_are_not_made_up(text: str) -> None:
    assert not made_up(text)


@pytest.mark.parametrize("text", ["Thanks.", "Thank you for watching.", "you"])
def test_a_phrase_for_silence_with_no_speech_heard_is_empty(text: str) -> None:
    assert emptiness(text, speech_heard=False) is EmptyReason.NO_SPEECH


@pytest.mark.parametrize("heard", [True, None])
def test_thank_you_with_speech_heard_or_unknown_is_a_request(
    heard: bool | None,
) -> None:
    """Said, "thank you" reaches the agent; a VAD that cannot tell never drops it."""
    assert emptiness("Thank you.", speech_heard=heard) is None


@pytest.mark.parametrize("text", ["", ".", "[BLANK_AUDIO]", "(noise)", "uh"])
def test_no_words_is_empty_whatever_was_heard(text: str) -> None:
    assert emptiness(text, speech_heard=True) is EmptyReason.NO_WORDS
    assert emptiness(text, speech_heard=None) is EmptyReason.NO_WORDS
    assert emptiness(text, speech_heard=False) is EmptyReason.NO_SPEECH


def test_a_real_request_is_never_empty() -> None:
    for heard in (True, False, None):
        assert emptiness("Turn on the kitchen lights.", speech_heard=heard) is None
