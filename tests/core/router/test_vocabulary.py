"""Vocabulary validation: every problem found at once, with a message for the form."""

from __future__ import annotations

import pytest

from custom_components.voicestack.core.router import Vocabulary, VocabularyError
from custom_components.voicestack.core.router.vocabulary import (
    DEFAULT_PHRASES,
    ENTRIES,
    Problem,
    parse_phrases,
    parse_shortcuts,
)

from .harness import Dialog


def problems(phrases=None, shortcuts=None) -> list[Problem]:
    with pytest.raises(VocabularyError) as caught:
        Vocabulary(phrases, shortcuts)
    return list(caught.value.problems)


def test_the_defaults_are_valid_and_complete() -> None:
    vocabulary = Vocabulary()

    assert {entry.key for entry in ENTRIES} == set(DEFAULT_PHRASES)
    assert vocabulary["query.submit"] == ("go", "done", "send", "send it")
    assert vocabulary.shortcuts == {}


def test_form_text_is_split_on_commas_and_lines_but_a_regex_keeps_its_line() -> None:
    assert parse_phrases("cancel, abort\n\n never mind \nre:stop{1,2} now, please") == (
        "cancel",
        "abort",
        "never mind",
        "re:stop{1,2} now, please",
    )
    assert parse_phrases(["  go ", "send"]) == ("go", "send")


def test_an_empty_phrase_is_rejected() -> None:
    assert problems({"common.cancel": "cancel,,abort"}) == [
        Problem("common.cancel", "an empty phrase (check for doubled commas)")
    ]
    assert problems({"query.submit": "go,"})[0].message.startswith("an empty phrase")


def test_a_phrase_without_words_is_rejected() -> None:
    assert problems({"query.submit": ["go", "?!"], "confirm.yes": "yes, uhm"}) == [
        Problem("query.submit", "'?!' has no words (filler and noise never count)"),
        Problem("confirm.yes", "'uhm' has no words (filler and noise never count)"),
    ]


def test_a_regex_that_does_not_compile_is_rejected() -> None:
    (problem,) = problems({"common.cancel": "cancel\nre:(never mind"})

    assert problem.key == "common.cancel"
    assert problem.message.startswith(
        "'re:(never mind' is not a valid regular expression:"
    )
    assert "missing )" in problem.message


def test_a_regex_matching_nothing_at_all_is_rejected() -> None:
    assert problems({"confirm.yes": "yes\nre:(yes)?"}) == [
        Problem("confirm.yes", "'re:(yes)?' matches an empty utterance")
    ]


def test_regexes_are_refused_where_phrases_are_searched_inside_utterances() -> None:
    assert problems({"base.wake": "re:hey \\w+"}) == [
        Problem(
            "base.wake",
            "'re:hey \\\\w+': only plain phrases here (no regular expressions)",
        )
    ]


def test_a_phrase_claimed_by_two_frames_is_rejected() -> None:
    found = problems({"confirm.yes": "yes, OK", "inventory.save": "save, ok!"})

    assert found == [
        Problem(
            "confirm.yes",
            "'OK' is claimed twice: by inventory.save (save the list)"
            " and confirm.yes (run the pending action)",
        )
    ]


def test_a_shortcut_may_not_shadow_a_frame_word() -> None:
    found = problems(shortcuts={"Stop": "script.stop", "Send": "script.send"})

    assert [problem.message for problem in found] == [
        (
            "'Send' is claimed twice: by query.submit (send the query)"
            " and shortcut 'Send' → script.send"
        )
    ]


def test_a_regex_matching_another_entrys_phrase_is_rejected() -> None:
    (problem,) = problems(shortcuts={"re:go( now)?": "script.go"})

    assert problem.key == "shortcuts"
    assert problem.message == (
        "re:'go( now)?' also matches 'go' of query.submit (send the query)"
    )


def test_required_entries_cannot_be_emptied_but_others_can() -> None:
    assert problems({"dictation.exit": ""}) == [
        Problem(
            "dictation.exit", "needs at least one phrase (end and save the dictation)"
        )
    ]
    assert Vocabulary({"base.wake": "", "inventory.undo": []})["base.wake"] == ()


def test_unknown_entries_and_bad_shortcut_lines() -> None:
    assert problems({"query.shout": "hey"}) == [
        Problem("query.shout", "unknown vocabulary entry")
    ]
    assert problems(shortcuts="lights off =\n") == [
        Problem("shortcuts", "shortcut 'lights off' has no action")
    ]
    with pytest.raises(VocabularyError, match="line 2 needs 'phrase = action'"):
        parse_shortcuts("movie = script.movie\nlights off")


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(VocabularyError) as caught:
        Vocabulary(
            {"common.cancel": "", "query.submit": "go,,re:(", "confirm.no": "go"}
        )
    error_text = str(caught.value)

    assert error_text.count(";") >= 3
    assert "common.cancel: needs at least one phrase" in error_text
    assert "'go' is claimed twice" in error_text


def test_options_round_trip() -> None:
    vocabulary = Vocabulary(
        {"query.submit": "go, fire\nre:send( it)? now"}, "movie time = script.movie"
    )
    options = vocabulary.as_options()

    assert options["query.submit"] == "go, fire\nre:send( it)? now"
    assert options["shortcuts"] == "movie time = script.movie"
    again = Vocabulary(
        {k: v for k, v in options.items() if k != "shortcuts"}, options["shortcuts"]
    )
    assert again["query.submit"] == vocabulary["query.submit"]
    assert again.shortcuts == vocabulary.shortcuts


async def test_a_custom_vocabulary_drives_the_frames() -> None:
    from custom_components.voicestack.core.router import Settings

    vocabulary = Vocabulary(
        {"query.submit": "fire\nre:send (it )?now", "base.wake": "computer"}
    )
    dialog = Dialog(Settings(vocabulary=vocabulary))
    await dialog.always_listening()
    await dialog.says("Computer, lights on", at="base/wake", stack="base > query")

    await dialog.says("go", at="query/append")
    await dialog.says("send it now", at="query/submit", agent="lights on go")


def test_a_bad_shortcut_line_does_not_hide_other_problems() -> None:
    with pytest.raises(VocabularyError) as caught:
        Vocabulary({"confirm.yes": "go"}, "lights off\ngo = script.go")

    assert [problem.code for problem in caught.value.problems] == [
        "bad_shortcut_line",
        "claimed_twice",
        "claimed_twice",
    ]
