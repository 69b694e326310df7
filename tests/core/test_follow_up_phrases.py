"""The follow-up loop's default phrases per language: valid, and they work."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.conversation.debounce import (
    debounce_from_options,
    is_bypass,
)
from custom_components.voicestack.core.conversation.follow_up import FollowUpLoop
from custom_components.voicestack.core.conversation.phrases import (
    EMERGENCY_PHRASES,
    POLITENESS,
    STOP_WORDS,
    language_of,
)
from custom_components.voicestack.core.conversation.policy import (
    policy_from_options,
    validate_phrases,
)
from devstack.manual_clock import ManualClock


@pytest.mark.parametrize(
    ("tag", "language"),
    [("de-CH", "de"), ("fr", "fr"), ("EN_us", "en"), ("pt-BR", "en"), (None, "en")],
)
def test_a_tag_gives_a_language_with_phrases_or_english(
    tag: str | None, language: str
) -> None:
    assert language_of(tag) == language


def test_every_language_has_every_list_and_each_is_valid() -> None:
    assert set(STOP_WORDS) == set(POLITENESS) == set(EMERGENCY_PHRASES)
    for language in STOP_WORDS:
        for table in (STOP_WORDS, POLITENESS, EMERGENCY_PHRASES):
            assert validate_phrases(table[language], "check") == table[language]


@pytest.mark.parametrize(
    ("language", "said", "stops"),
    [
        ("de", "Stopp, bitte!", True),
        ("de", "Das war's, danke.", True),
        ("de", "Stopp die Musik.", False),
        ("fr", "C'est tout, merci.", True),
        ("fr", "Arrête la musique.", False),
        ("es", "Eso es todo, gracias.", True),
        ("nl", "Laat maar, bedankt.", True),
        ("it", "Basta, grazie.", True),
        ("en", "That's all, thank you.", True),
    ],
)
def test_home_assistants_language_gives_the_loop_its_stop_words(
    language: str, said: str, stops: bool
) -> None:
    policy = policy_from_options({}, language)
    loop = FollowUpLoop(policy, ManualClock(), lambda _session, _reason: None)

    assert policy.stop_words == STOP_WORDS[language]
    assert loop.is_stop(said) is stops


def test_own_stop_words_win_over_the_languages() -> None:
    policy = policy_from_options({"follow_up_stop_words": ["genug"]}, "de")

    assert policy.stop_words == ("genug",)
    assert policy.language == "de"


def test_the_emergency_phrases_follow_the_language() -> None:
    french = debounce_from_options({}, "fr-FR")

    assert french.emergency_phrases == EMERGENCY_PHRASES["fr"]
    assert is_bypass("Au secours !", french.emergency_phrases)
    assert not is_bypass("Allume la lumière.", french.emergency_phrases)
