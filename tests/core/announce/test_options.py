"""Options and requests: the seed's defaults, and a clear error for bad values."""

from __future__ import annotations

import dataclasses
import math

import pytest

from custom_components.voicestack.core.announce import (
    CATEGORY_PRIORITY,
    DEFAULT_TEMPLATES,
    AnnounceError,
    AnnounceOptions,
    AnnounceRequest,
    Priority,
)


def test_defaults_are_the_seeds() -> None:
    options = AnnounceOptions().validate()
    assert options.queue_max == 50
    assert options.rate_per_source == 5.0
    assert options.dedup_s == 10.0
    assert options.coalesce_window_s == 2.0
    assert options.coalesce_idle_s == 0.3
    assert (options.names_max, options.names_max_chars) == (3, 100)
    assert options.max_message_length == 1000
    assert options.goodbye_timeout_s == 5.0
    assert dict(CATEGORY_PRIORITY) == {
        "shutdown": 100,
        "error": 90,
        "critical": 90,
        "warning": 70,
        "ready": 50,
        "init": 40,
        "health": 30,
        "progress": 20,
        "general": 10,
    }
    # The seed's own templates, unchanged.
    assert DEFAULT_TEMPLATES["init"] == "{count} components initialized: {names}"
    assert DEFAULT_TEMPLATES["health"] == "Health update: {summary}"
    assert DEFAULT_TEMPLATES["progress"] == "Progress: {latest}"
    assert DEFAULT_TEMPLATES["ready"] == "System ready: {names}"
    assert DEFAULT_TEMPLATES["error"] == "{count} errors: {names}"
    assert set(DEFAULT_TEMPLATES) == set(CATEGORY_PRIORITY)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"queue_max": 0}, "queue_max"),
        ({"queue_max": 2.5}, "queue_max"),
        ({"queue_max": True}, "queue_max"),
        ({"max_message_length": -1}, "max_message_length"),
        ({"max_message_length": 10_001}, "max_message_length"),  # MAX_MESSAGE_LENGTH
        ({"names_max": 0}, "names_max"),
        ({"names_max_chars": 10}, "names_max_chars"),
        ({"rate_per_source": -1.0}, "rate_per_source"),
        ({"dedup_s": math.nan}, "dedup_s"),
        ({"coalesce_window_s": math.inf}, "coalesce_window_s"),
        ({"coalesce_idle_s": "0.3"}, "coalesce_idle_s"),
        ({"ttl_normal_s": 0}, "ttl_normal_s"),
        ({"ttl_critical_s": -5}, "ttl_critical_s"),
        ({"shutdown_flush_s": -0.1}, "shutdown_flush_s"),
        ({"goodbye": 3}, "goodbye"),
    ],
)
def test_bad_numbers_name_their_field(changes: dict[str, object], field: str) -> None:
    options = dataclasses.replace(AnnounceOptions(), **changes)
    with pytest.raises(AnnounceError) as info:
        options.validate()
    assert info.value.field == field
    assert field in str(info.value)


@pytest.mark.parametrize(
    ("template", "code"),
    [
        ("{count} errors: {nmes}", "invalid_template"),
        ("{count errors", "invalid_template"),
        ("{count:>5} errors", "invalid_template"),
        ("{names!r}", "invalid_template"),
        ("{0} errors", "invalid_template"),
    ],
)
def test_bad_templates_are_refused(template: str, code: str) -> None:
    options = AnnounceOptions(templates={"error": template})
    with pytest.raises(AnnounceError) as info:
        options.validate()
    assert (info.value.code, info.value.field) == (code, "template_error")


def test_template_for_unknown_category_is_refused() -> None:
    with pytest.raises(AnnounceError) as info:
        AnnounceOptions(templates={"doorbell": "{names}"}).validate()
    assert info.value.code == "unknown_option"


def test_flat_form_round_trips_and_overrides_merge_with_defaults() -> None:
    options = AnnounceOptions.from_dict(
        {"queue_max": 10, "template_error": "Trouble: {names}", "template_init": ""}
    )
    assert options.queue_max == 10
    assert options.template("error") == "Trouble: {names}"
    assert options.template("init") == DEFAULT_TEMPLATES["init"]  # empty: default
    assert options.template("ready") == DEFAULT_TEMPLATES["ready"]
    flat = options.to_dict()
    assert flat["template_error"] == "Trouble: {names}"
    assert AnnounceOptions.from_dict(flat).to_dict() == flat


def test_flat_form_refuses_unknown_keys_and_validates() -> None:
    with pytest.raises(AnnounceError) as info:
        AnnounceOptions.from_dict({"queue_size": 5})
    assert (info.value.code, info.value.field) == ("unknown_option", "queue_size")
    with pytest.raises(AnnounceError) as info:
        AnnounceOptions.from_dict({"coalesce_window_s": -1})
    assert info.value.field == "coalesce_window_s"


def test_ttl_per_priority() -> None:
    options = AnnounceOptions(ttl_low_s=7)
    assert options.ttl_s(Priority.LOW) == 7
    assert options.ttl_s(Priority.CRITICAL) == options.ttl_critical_s


def test_request_normalizes_and_defaults() -> None:
    request = AnnounceRequest.create("  Door\n open  ", priority="high")
    assert request.text == "Door open"
    assert request.priority is Priority.HIGH
    assert (request.category, request.source) == ("general", "service")
    assert request.ttl_s is None


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"message": "   "}, "empty_message"),
        ({"message": "hi", "priority": "urgent"}, "invalid_priority"),
        ({"message": "hi", "category": "doorbell"}, "unknown_category"),
        ({"message": "hi", "ttl_s": 0}, "invalid_ttl"),
        ({"message": "hi", "ttl_s": math.inf}, "invalid_ttl"),
    ],
)
def test_bad_requests_raise_with_a_code(kwargs: dict[str, object], code: str) -> None:
    with pytest.raises(AnnounceError) as info:
        AnnounceRequest.create(**kwargs)  # type: ignore[arg-type]
    assert info.value.code == code
