"""Where dictated notes may go: a regular file in ``<config>/voicestack/``.

The ``notes_file`` option is a path relative to Home Assistant's configuration
directory that lies inside the ``voicestack`` folder: ``voicestack/notes.txt``
(the default) or ``voicestack/kitchen/notes.txt``. Anything else is refused,
because an append there would damage something: the config directory itself
(``.``, whose lock file would land outside it), paths leaving it, and Home
Assistant's own files (``configuration.yaml``, ``secrets.yaml``, ``.storage/…``,
``home-assistant_v2.db``), none of which is in the folder.

Three checks, each where it can be made:

- ``notes_file_error``: the text alone, whenever options are read
  (``RouterConfig``), so a hand-edited entry cannot point elsewhere either;
- ``notes_file_refusal``: the disk, when the options flow saves: a symbolic
  link on the way, or a folder, FIFO or device where the file (or its lock
  file) should be;
- every write opens both files with ``open_confined`` (``O_NOFOLLOW`` on each
  component below the config directory), so a link planted after the options
  were saved, even during the write, is refused rather than followed.

``migrated_notes_file`` moves the value of an entry made before the folder
existed into it (the file name is kept).
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath
from typing import Final

from .filelock import ConfinementError, open_confined

__all__ = [
    "DEFAULT_NOTES_FILE",
    "NOTES_FOLDER",
    "OLD_DEFAULT_NOTES_FILE",
    "migrated_notes_file",
    "notes_file_error",
    "notes_file_refusal",
]

NOTES_FOLDER: Final = "voicestack"
DEFAULT_NOTES_FILE: Final = f"{NOTES_FOLDER}/notes.txt"
# Entries made before the folder wrote here, directly in the config directory.
OLD_DEFAULT_NOTES_FILE: Final = "voicestack_notes.txt"
LOCK_SUFFIX: Final = ".lock"  # RobustFileLock.for_file: <file>.lock next to it


def notes_file_error(value: object) -> str | None:
    """Why ``value`` is not a file path in the folder, in words; None if it is."""
    text = value.strip() if isinstance(value, str) else ""
    path = PurePosixPath(text)
    if (
        not text
        or "\0" in text
        or text.endswith("/")
        or path.is_absolute()
        or len(path.parts) < 2
        or path.parts[0] != NOTES_FOLDER
        or ".." in path.parts
    ):
        return (
            f"{text!r}: a file in the {NOTES_FOLDER} folder of the config"
            f" directory, such as {DEFAULT_NOTES_FILE}"
        )
    return None


def notes_file_refusal(config_dir: str | os.PathLike[str], value: str) -> str | None:
    """What the disk says against notes file ``value`` (text already checked).

    ``"symlink"``, ``"not_a_file"`` or ``"unusable"`` (no permission, name too
    long, ...); None when it may be used, including when it does not exist yet
    (it is created, with its folders, on the first write). Nothing is created or
    changed: the existing file and lock file are opened for appending, then
    closed. Blocking: run it in the executor.
    """
    path = PurePosixPath(value.strip())
    for candidate in (path, path.with_name(path.name + LOCK_SUFFIX)):
        try:
            fd = open_confined(
                config_dir, candidate, os.O_WRONLY | os.O_APPEND, make_dirs=False
            )
        except FileNotFoundError:
            continue
        except ConfinementError as err:
            return err.reason
        except OSError:
            return "unusable"
        os.close(fd)
    return None


def migrated_notes_file(value: object) -> str:
    """The notes file an older entry's ``value`` becomes.

    Already in the folder: unchanged. Otherwise its file name in the folder
    (``notes.txt`` -> ``voicestack/notes.txt``, ``configuration.yaml`` ->
    ``voicestack/configuration.yaml``), or the default when it names no file
    (``.``, ``..``, empty).
    """
    text = value.strip() if isinstance(value, str) else ""
    if notes_file_error(text) is None:
        return text
    moved = f"{NOTES_FOLDER}/{PurePosixPath(text).name}"
    return DEFAULT_NOTES_FILE if notes_file_error(moved) is not None else moved
