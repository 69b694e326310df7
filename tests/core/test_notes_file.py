"""Where notes may go: the text check, the disk check and the migration of old values.

Real files in a temporary config directory; the write-time check itself is
tested with the file lock (tests/core/test_filelock.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from custom_components.voicestack.core.notes_file import (
    DEFAULT_NOTES_FILE,
    migrated_notes_file,
    notes_file_error,
    notes_file_refusal,
)

REFUSED_TEXTS = [
    "",
    "  ",
    ".",
    "..",
    "./",
    "configuration.yaml",
    "secrets.yaml",
    ".storage/core.config_entries",
    "home-assistant_v2.db",
    "voicestack_notes.txt",
    "voicestack",
    "voicestack/",
    "voicestack/.",
    "voicestack/..",
    "voicestack/../secrets.yaml",
    "voicestack/notes/",
    "/config/voicestack/notes.txt",
    "/etc/passwd",
    "notes/voicestack/x.txt",
    "voicestack/a\0b.txt",
    None,
    42,
]


@pytest.mark.parametrize("value", REFUSED_TEXTS)
def test_only_files_in_the_voicestack_folder_are_notes_files(value: object) -> None:
    error = notes_file_error(value)

    assert error is not None
    assert error.endswith(
        "a file in the voicestack folder of the config directory,"
        " such as voicestack/notes.txt"
    )


@pytest.mark.parametrize(
    "value",
    [
        DEFAULT_NOTES_FILE,
        "voicestack/kitchen/notes.md",
        " voicestack/notes.txt ",
        "./voicestack/notes.txt",
        "voicestack/.hidden",
    ],
)
def test_files_in_the_folder_are_fine(value: str) -> None:
    assert notes_file_error(value) is None


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A config directory with its notes folder and HA's own secrets."""
    (tmp_path / "voicestack").mkdir()
    (tmp_path / "secrets.yaml").write_text("pin: 4711\n", encoding="utf-8")
    return tmp_path


def test_the_disk_check_refuses_links_and_non_files(config: Path) -> None:
    folder = config / "voicestack"
    (folder / "out.txt").symlink_to("../secrets.yaml")
    (folder / "in.txt").write_text("", encoding="utf-8")
    (folder / "inner.txt").symlink_to("in.txt")  # even a link that stays inside
    (folder / "locked.txt.lock").symlink_to("../secrets.yaml")
    (folder / "archive").mkdir()
    os.mkfifo(folder / "pipe")
    (config / "linked").symlink_to("voicestack")

    assert notes_file_refusal(config, "voicestack/out.txt") == "symlink"
    assert notes_file_refusal(config, "voicestack/inner.txt") == "symlink"
    assert notes_file_refusal(config, "voicestack/locked.txt") == "symlink"
    assert notes_file_refusal(config, "voicestack/archive") == "not_a_file"
    assert notes_file_refusal(config, "voicestack/pipe") == "not_a_file"
    assert notes_file_refusal(config, "voicestack/in.txt/x.txt") == "not_a_file"
    assert notes_file_refusal(config, "voicestack/" + "n" * 300) == "unusable"
    assert (config / "secrets.yaml").read_text(encoding="utf-8") == "pin: 4711\n"


def test_the_disk_check_accepts_regular_and_missing_files(config: Path) -> None:
    (config / "voicestack" / "notes.txt").write_text("kept\n", encoding="utf-8")

    assert notes_file_refusal(config, "voicestack/notes.txt") is None
    assert notes_file_refusal(config, " voicestack/notes.txt ") is None
    assert notes_file_refusal(config, "voicestack/new/today.txt") is None
    # Nothing was created or changed by looking.
    assert not (config / "voicestack" / "new").exists()
    assert not (config / "voicestack" / "notes.txt.lock").exists()
    assert (config / "voicestack" / "notes.txt").read_text(encoding="utf-8") == (
        "kept\n"
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("voicestack_notes.txt", "voicestack/voicestack_notes.txt"),
        ("notes.txt", "voicestack/notes.txt"),
        ("notes/today.md", "voicestack/today.md"),
        ("configuration.yaml", "voicestack/configuration.yaml"),
        (".storage/core.config_entries", "voicestack/core.config_entries"),
        ("/etc/passwd", "voicestack/passwd"),
        (".", DEFAULT_NOTES_FILE),
        ("..", DEFAULT_NOTES_FILE),
        ("", DEFAULT_NOTES_FILE),
        ("x\0y", DEFAULT_NOTES_FILE),
        (None, DEFAULT_NOTES_FILE),
        ("voicestack/kitchen.txt", "voicestack/kitchen.txt"),
    ],
)
def test_old_values_move_into_the_folder_keeping_their_name(
    old: object, new: str
) -> None:
    assert migrated_notes_file(old) == new
    assert notes_file_error(new) is None
