"""``RouterConfig.from_options``: the router's options, checked all at once."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from custom_components.voicestack.core.router import (
    ConfirmPolicy,
    ListenMode,
    Settings,
    Vocabulary,
)
from custom_components.voicestack.core.router.config import (
    DEFAULTS,
    ROUTER_OPTIONS,
    RouterConfig,
)
from custom_components.voicestack.core.router.vocabulary import (
    Problem,
    VocabularyError,
)


def comparable(config: RouterConfig) -> tuple[Any, ...]:
    """``config`` with its vocabulary as text (``Vocabulary`` has no ``==``)."""
    return (
        dataclasses.replace(config.settings, vocabulary=None),
        config.settings.vocabulary.as_options(),
        config.policy,
        dict(config.destinations),
        config.todo_entity,
        config.notes_file,
    )


def problems(**options: Any) -> list[tuple[str, str]]:
    """``(key, code)`` of every problem ``options`` have."""
    with pytest.raises(VocabularyError) as caught:
        RouterConfig.from_options(options)
    return [(problem.key, problem.code) for problem in caught.value.problems]


def test_no_options_are_the_defaults() -> None:
    config = RouterConfig.from_options({})

    assert comparable(config) == comparable(RouterConfig.from_options(DEFAULTS))
    assert config.settings.listen_mode is ListenMode.WAKE_WORD
    assert (
        config.settings.query_silence_s,
        config.settings.inventory_silence_s,
        config.settings.confirm_timeout_s,
        config.settings.picker_timeout_s,
    ) == (3.0, 120.0, 20.0, 30.0)
    assert config.settings.vocabulary.as_options() == Vocabulary().as_options()
    assert dict(config.destinations) == {
        "query": "agent",
        "dictation": "notes",
        "inventory": "notes",
    }
    assert config.todo_entity is None
    assert config.notes_file == "voicestack/notes.txt"
    assert config.policy == ConfirmPolicy()


def test_the_defaults_match_the_routers_own() -> None:
    """An entry without options behaves like a router built without them."""
    settings = RouterConfig.from_options({}).settings

    assert dataclasses.replace(settings, vocabulary=None) == dataclasses.replace(
        Settings(), vocabulary=None
    )


def test_router_options_are_every_key_it_reads_and_nothing_else() -> None:
    assert set(ROUTER_OPTIONS) == {*DEFAULTS, "vocabulary", "shortcuts"}
    # Other parts of an entry's options are not the router's business.
    assert "voice" not in ROUTER_OPTIONS
    assert comparable(
        RouterConfig.from_options({"voice": "en_US-amy", "queue_max": 3})
    ) == comparable(RouterConfig.from_options({}))


def test_timers_take_numbers_and_zero_switches_them_off() -> None:
    settings = RouterConfig.from_options(
        {
            "query_silence_s": 0,
            "inventory_silence_s": "45",
            "confirm_timeout_s": 0.0,
            "picker_timeout_s": 3600,
        }
    ).settings

    assert settings.query_silence_s is None
    assert settings.inventory_silence_s == 45.0
    assert settings.confirm_timeout_s is None
    assert settings.picker_timeout_s == 3600.0


@pytest.mark.parametrize(
    ("value", "code"),
    [
        (-1, "out_of_range"),
        (3600.5, "out_of_range"),
        (float("nan"), "out_of_range"),
        (float("inf"), "out_of_range"),
        ("soon", "not_a_number"),
        ([3], "not_a_number"),
        (True, "not_a_number"),
    ],
)
def test_a_bad_timer_is_reported_on_its_option(value: Any, code: str) -> None:
    assert problems(confirm_timeout_s=value) == [("confirm_timeout_s", code)]


def test_out_of_range_names_the_limits() -> None:
    with pytest.raises(VocabularyError) as caught:
        RouterConfig.from_options({"picker_timeout_s": 5000})

    assert caught.value.problems == (
        Problem("picker_timeout_s", "5000 s is outside 0 to 3600"),
    )


def test_destinations() -> None:
    config = RouterConfig.from_options(
        {
            "query_destination": "queue",
            "dictation_destination": "event",
            "inventory_destination": "todo",
            "todo_entity": " todo.shopping ",
        }
    )

    assert dict(config.destinations) == {
        "query": "queue",
        "dictation": "event",
        "inventory": "todo",
    }
    assert config.todo_entity == "todo.shopping"


def test_an_unknown_destination_is_invalid() -> None:
    assert problems(query_destination="email", dictation_destination=None) == [
        ("query_destination", "invalid"),
        ("dictation_destination", "invalid"),
    ]


def test_a_todo_destination_needs_a_todo_list() -> None:
    assert problems(inventory_destination="todo") == [("todo_entity", "todo_required")]
    assert problems(inventory_destination="todo", todo_entity="  ") == [
        ("todo_entity", "todo_required")
    ]
    assert problems(query_destination="todo", todo_entity="light.kitchen") == [
        ("todo_entity", "not_todo")
    ]


def test_a_todo_list_is_checked_even_when_no_destination_uses_it() -> None:
    assert problems(todo_entity="sensor.list") == [("todo_entity", "not_todo")]
    assert RouterConfig.from_options({"todo_entity": "todo.x"}).todo_entity == "todo.x"


@pytest.mark.parametrize(
    "notes_file",
    ["", "  ", "/etc/x", "../x", "notes.txt", "voicestack/../x", "voicestack/", None],
)
def test_the_notes_file_stays_inside_the_voicestack_folder(notes_file: Any) -> None:
    assert problems(notes_file=notes_file) == [("notes_file", "bad_notes_file")]


@pytest.mark.parametrize(
    ("notes_file", "used"),
    [
        ("voicestack/notes.txt", "voicestack/notes.txt"),
        ("voicestack/kitchen/notes.md", "voicestack/kitchen/notes.md"),
        (" ./voicestack//notes.txt ", "voicestack/notes.txt"),
    ],
)
def test_notes_files_in_the_folder_are_fine(notes_file: str, used: str) -> None:
    assert RouterConfig.from_options({"notes_file": notes_file}).notes_file == used


def test_listen_mode() -> None:
    config = RouterConfig.from_options({"listen_mode": "always_listening"})

    assert config.settings.listen_mode is ListenMode.ALWAYS_LISTENING
    assert problems(listen_mode="push_to_talk") == [("listen_mode", "invalid")]


def test_the_confirmation_policy() -> None:
    policy = RouterConfig.from_options(
        {"confirm_sensitive": False, "confirm_entities": ["switch.heater"]}
    ).policy

    assert policy.enabled is False
    assert policy.entities == frozenset({"switch.heater"})
    assert problems(confirm_sensitive="no") == [("confirm_sensitive", "invalid")]
    # One entity id as a string would otherwise become a set of letters.
    assert problems(confirm_entities="switch.heater") == [
        ("confirm_entities", "invalid")
    ]


def test_vocabulary_and_shortcuts_are_used() -> None:
    config = RouterConfig.from_options(
        {
            "vocabulary": {"query.submit": "fire, send it", "base.wake": ""},
            "shortcuts": "movie time = script.movie",
        }
    )
    vocabulary = config.settings.vocabulary

    assert vocabulary["query.submit"] == ("fire", "send it")
    assert vocabulary["base.wake"] == ()
    assert vocabulary["confirm.yes"] == Vocabulary()["confirm.yes"]
    assert vocabulary.shortcuts == {"movie time": "script.movie"}


def test_vocabulary_problems_are_carried_through_with_their_codes() -> None:
    assert problems(
        vocabulary={
            "common.cancel": "cancel,,abort",
            "query.submit": "go\nre:(",
            "confirm.yes": "yes, go",
            "dictation.exit": "",
            "base.wake": "re:hey \\w+",
            "query.shout": "hey",
        }
    ) == [
        ("query.shout", "unknown_entry"),
        ("common.cancel", "empty_phrase"),
        ("base.wake", "regex_not_allowed"),
        ("query.submit", "bad_regex"),
        ("dictation.exit", "needs_phrase"),
        ("confirm.yes", "claimed_twice"),
    ]


def test_shortcut_problems_are_carried_through_with_their_codes() -> None:
    assert problems(shortcuts="cancel = script.x\nlights off =") == [
        ("shortcuts", "claimed_twice"),
        ("shortcuts", "no_action"),
    ]
    assert problems(shortcuts="movie time script.movie") == [
        ("shortcuts", "bad_shortcut_line")
    ]


def test_every_kind_of_problem_is_reported_at_once() -> None:
    assert problems(
        listen_mode="loud",
        query_silence_s=-1,
        query_destination="todo",
        notes_file="/x",
        vocabulary={"confirm.no": "go"},
    ) == [
        ("confirm.no", "claimed_twice"),
        ("query_silence_s", "out_of_range"),
        ("todo_entity", "todo_required"),
        ("notes_file", "bad_notes_file"),
        ("listen_mode", "invalid"),
    ]


@pytest.mark.parametrize(
    ("options", "key"),
    [
        ({"vocabulary": "go"}, "vocabulary"),
        ({"vocabulary": {"query.submit": 3}}, "vocabulary"),
        ({"shortcuts": ["movie = script.movie"]}, "shortcuts"),
        ({"shortcuts": {"movie": ["script.movie"]}}, "shortcuts"),
    ],
)
def test_hand_edited_options_of_the_wrong_shape_are_problems_not_crashes(
    options: dict[str, Any], key: str
) -> None:
    assert problems(**options) == [(key, "invalid")]


def test_lists_of_phrases_and_shortcut_mappings_are_accepted() -> None:
    vocabulary = RouterConfig.from_options(
        {
            "vocabulary": {"query.submit": ["fire", "send it"]},
            "shortcuts": {"movie time": "script.movie"},
        }
    ).settings.vocabulary

    assert vocabulary["query.submit"] == ("fire", "send it")
    assert vocabulary.shortcuts == {"movie time": "script.movie"}
