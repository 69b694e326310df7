"""Config entries made by an older VoiceStack, brought up to date.

Version 1.2, notes in their own folder: the notes file may only be a file in
``<config>/voicestack/`` (``core/notes_file.py``). An entry whose
``notes_file`` points elsewhere (``voicestack_notes.txt``, ``.``,
``configuration.yaml``) gets that file name in the folder
(``voicestack/voicestack_notes.txt``; ``.`` becomes the default,
``voicestack/notes.txt``). An entry that never set it follows the new default
instead of the old ``voicestack_notes.txt``. Nothing is moved or deleted: if
the file notes used to go to exists, a repair issue and a warning in the log
say where they go now and that the earlier ones stay where they are.

Version 1.3, a bound on *Longest message*: it may be at most
``MAX_MESSAGE_LENGTH`` characters (a longer setting let one call freeze Home
Assistant). A larger value saved before is lowered to that bound, with a
warning, instead of failing the entry's setup.
"""

from __future__ import annotations

import logging
import os
from pathlib import PurePosixPath
from typing import Final

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from .const import DOMAIN
from .core.announce import MAX_MESSAGE_LENGTH
from .core.notes_file import (
    DEFAULT_NOTES_FILE,
    OLD_DEFAULT_NOTES_FILE,
    migrated_notes_file,
)

_LOGGER = logging.getLogger(__name__)

NOTES_FOLDER_MINOR: Final = 2  # the minor version that moved notes into the folder
MESSAGE_BOUND_MINOR: Final = 3  # the minor version that bounded Longest message
MAX_MESSAGE: Final = "max_message_length"
ISSUE_NOTES_MOVED: Final = "notes_file_moved"
NOTES_FILE: Final = "notes_file"


def notes_moved_issue_id(entry_id: str) -> str:
    """The repair issue of one entry whose notes moved."""
    return f"{ISSUE_NOTES_MOVED}_{entry_id}"


async def async_migrate(hass: HomeAssistant, entry: ConfigEntry) -> bool:
    """Migrate ``entry`` to the flow's version (Home Assistant refuses newer majors)."""
    if entry.version == 1 and entry.minor_version < NOTES_FOLDER_MINOR:
        await _move_notes_file(hass, entry)
    if entry.version == 1 and entry.minor_version < MESSAGE_BOUND_MINOR:
        _bound_longest_message(hass, entry)
    return True


def _bound_longest_message(hass: HomeAssistant, entry: ConfigEntry) -> None:
    options = dict(entry.options)
    stored = options.get(MAX_MESSAGE)
    if isinstance(stored, (int, float)) and stored > MAX_MESSAGE_LENGTH:
        options[MAX_MESSAGE] = MAX_MESSAGE_LENGTH
        _LOGGER.warning(
            "%s: Longest message was %s characters; it is %d now, the most allowed",
            entry.title,
            stored,
            MAX_MESSAGE_LENGTH,
        )
    hass.config_entries.async_update_entry(
        entry, options=options, minor_version=MESSAGE_BOUND_MINOR
    )


def _written_before(stored: object) -> str:
    """Where notes went before 1.2: a stored relative path, else the old default.

    Version 1.1 used the default for a value it refused (empty, absolute, ``..``).
    """
    text = stored.strip() if isinstance(stored, str) else ""
    path = PurePosixPath(text)
    if not text or path.is_absolute() or ".." in path.parts or text.endswith("/"):
        return OLD_DEFAULT_NOTES_FILE
    return text


async def _move_notes_file(hass: HomeAssistant, entry: ConfigEntry) -> None:
    stored = entry.options.get(NOTES_FILE)
    options = dict(entry.options)
    if stored is None:
        new = DEFAULT_NOTES_FILE
    else:
        new = options[NOTES_FILE] = migrated_notes_file(stored)
    hass.config_entries.async_update_entry(
        entry, options=options, minor_version=NOTES_FOLDER_MINOR
    )
    if stored is not None and new != stored:
        _LOGGER.warning(
            "%s: notes file %r is not in the voicestack folder of the config"
            " directory; notes go to %s now",
            entry.title,
            stored,
            new,
        )
    old = _written_before(stored)
    if old == new or not await hass.async_add_executor_job(
        os.path.isfile, hass.config.path(old)
    ):
        return
    _LOGGER.warning(
        "%s: notes go to %s now; the notes saved before stay in %s",
        entry.title,
        new,
        old,
    )
    ir.async_create_issue(
        hass,
        DOMAIN,
        notes_moved_issue_id(entry.entry_id),
        is_fixable=False,
        is_persistent=True,
        severity=ir.IssueSeverity.WARNING,
        translation_key=ISSUE_NOTES_MOVED,
        translation_placeholders={"name": entry.title, "old": old, "new": new},
    )


def async_remove_issues(hass: HomeAssistant, entry_id: str) -> None:
    """The entry is removed: its migration notice goes with it."""
    ir.async_delete_issue(hass, DOMAIN, notes_moved_issue_id(entry_id))
