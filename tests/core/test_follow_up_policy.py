"""Follow-up options: defaults, form values, and bad input named by its option."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.conversation.policy import (
    DEFAULT_STOP_WORDS,
    MAX_CLOSING_CHARS,
    MAX_PHRASE_CHARS,
    MAX_PHRASES,
    FollowUpConfigError,
    FollowUpMode,
    FollowUpPolicy,
    Memory,
    validate_phrases,
)


def test_the_defaults() -> None:
    policy = FollowUpPolicy()

    assert (policy.mode, policy.max_turns, policy.memory, policy.listen_s) == (
        FollowUpMode.AGENT,
        3,
        Memory.SHARED,
        8.0,
    )
    assert policy.stop_words == DEFAULT_STOP_WORDS
    assert policy.closing == "Say the wake word to go on."
    assert FollowUpPolicy.parse() == policy


def test_form_values_parse_into_a_policy() -> None:
    policy = FollowUpPolicy.parse(
        mode="always",
        max_turns=10.0,
        memory="independent",
        listen_s=2,
        stop_words=["stop"],
    )

    assert policy == FollowUpPolicy(
        FollowUpMode.ALWAYS, 10, Memory.INDEPENDENT, 2, ("stop",)
    )


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ({"max_turns": 0}, "max_turns"),
        ({"max_turns": 11}, "max_turns"),
        ({"max_turns": 2.5}, "max_turns"),
        ({"max_turns": True}, "max_turns"),
        ({"listen_s": 1.5}, "listen_s"),
        ({"listen_s": 30.5}, "listen_s"),
        ({"listen_s": True}, "listen_s"),
        ({"listen_s": "8"}, "listen_s"),
        ({"mode": "sometimes"}, "mode"),
        ({"memory": "forever"}, "memory"),
        ({"stop_words": "stop"}, "stop_words"),
        ({"stop_words": ["stop", ""]}, "stop_words"),
        ({"stop_words": ["  "]}, "stop_words"),
        ({"stop_words": ["um"]}, "stop_words"),
        ({"stop_words": [5]}, "stop_words"),
        ({"stop_words": ["That's all", "thats all!"]}, "stop_words"),
        ({"stop_words": ["x" * (MAX_PHRASE_CHARS + 1)]}, "stop_words"),
        ({"stop_words": [f"stop {n}" for n in range(MAX_PHRASES + 1)]}, "stop_words"),
        ({"closing": "x" * (MAX_CLOSING_CHARS + 1)}, "closing"),
        ({"closing": ["Bye."]}, "closing"),
    ],
)
def test_bad_options_name_the_option(options: dict[str, object], code: str) -> None:
    with pytest.raises(FollowUpConfigError) as raised:
        FollowUpPolicy.parse(**options)  # type: ignore[arg-type]

    assert raised.value.code == code
    assert isinstance(raised.value, ValueError)


def test_phrases_are_stripped() -> None:
    policy = FollowUpPolicy(stop_words=(" Enough ", "we're done"))

    assert policy.stop_words == ("Enough", "we're done")


def test_phrases_at_the_limits_are_valid() -> None:
    phrases = [f"stop {n}" for n in range(MAX_PHRASES - 1)] + ["x" * MAX_PHRASE_CHARS]

    assert validate_phrases(phrases, "stop_words") == tuple(phrases)
    assert validate_phrases([], "stop_words") == ()


def test_a_duplicate_names_both_phrases() -> None:
    with pytest.raises(FollowUpConfigError, match="'stop!' repeats 'Stop'"):
        validate_phrases(["Stop", "stop!"], "emergency")


def test_the_closing_is_the_languages_stripped_or_none() -> None:
    assert FollowUpPolicy.parse(language="de-CH").closing == (
        "Sag das Aktivierungswort, um weiterzumachen."
    )
    assert FollowUpPolicy.parse(closing="  Bye for now. ").closing == "Bye for now."
    assert FollowUpPolicy.parse(closing="x" * MAX_CLOSING_CHARS).closing
    assert FollowUpPolicy.parse(closing="").closing == ""  # nothing is said
