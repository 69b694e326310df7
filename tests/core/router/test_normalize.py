"""Normalization: keys for matching, verbatim text for content, real words."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.router.normalize import (
    clean,
    has_real_words,
    hear,
    normalize,
)


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("Cancel!", "cancel"),
        ("  Read   it\tBACK. ", "read it back"),
        ("Okay, Nabu, turn on the lights.", "okay nabu turn on the lights"),
        ("zero zero zero", "000"),
        ("000", "000"),
        ("0 0 0", "000"),
        ("twenty-one", "21"),
        ("twenty twenty one", "2021"),
        ("nineteen eighty four", "1984"),
        ("set a timer for twelve minutes", "set a timer for 12 minutes"),
        ("Don't", "dont"),
        ("don\u2019t", "dont"),
        ("[BLANK_AUDIO] cancel", "cancel"),
        ("Café crème", "café crème"),
    ],
)
def test_keys(text: str, key: str) -> None:
    assert normalize(text) == key


def test_number_words_and_digits_are_the_same_key_but_text_is_kept() -> None:
    spoken, written = hear("Code zero zero zero."), hear("code 000")

    assert spoken.key == written.key == "code 000"
    assert spoken.text == "Code zero zero zero."


@pytest.mark.parametrize(
    "text", ["", "   ", "[BLANK_AUDIO]", "(noise)", "*music*", "♪ ♪", "uh", "Um... uh?"]
)
def test_no_real_words(text: str) -> None:
    assert not has_real_words(text)


@pytest.mark.parametrize("text", ["uh, hello", "zero", "(coughs) yes", "oh"])
def test_real_words(text: str) -> None:
    assert has_real_words(text)


def test_clean_drops_noise_tokens_only() -> None:
    assert clean("(wind) Hello,  [BLANK_AUDIO] world! *beep*") == "Hello, world!"


def test_phrases_are_cut_out_verbatim() -> None:
    heard = hear("Well, okay Nabu, turn ON the light.")

    index = heard.find(("okay", "nabu"), "anywhere")

    assert index == 1
    assert heard.before(index) == "Well"
    assert heard.after(index + 1) == "turn ON the light."


def test_find_respects_position_and_word_boundaries() -> None:
    heard = hear("That is all. End dictation!")

    assert heard.find(("end", "dictation"), "end") == 3
    assert heard.before(3) == "That is all."
    assert heard.find(("end", "dictation"), "start") is None
    assert hear("weekend dictation").find(("end", "dictation"), "anywhere") is None
    assert hear("end").find(("end", "dictation"), "end") is None
