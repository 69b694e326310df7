"""Entries made by an older VoiceStack (1.1, 1.2) are migrated when Home Assistant loads them.

Real Home Assistant, real files in a temporary config directory. Nothing listens
at the entry's address, so setup is retried after the migration (which is what
is checked: options, version, repair issue, log); the entry is then unloaded.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.config_flow import VoiceStackConfigFlow
from custom_components.voicestack.const import DOMAIN
from devstack import servers

HA_FILES = ("configuration.yaml", "secrets.yaml")


@pytest.fixture
def config_dir(hass: HomeAssistant, tmp_path: Path) -> Path:
    """A user's config directory with Home Assistant's own files."""
    path = tmp_path / "config"
    path.mkdir()
    for name in HA_FILES:
        (path / name).write_text("", encoding="utf-8")
    hass.config.config_dir = str(path)
    return path


async def load_old_entry(
    hass: HomeAssistant, options: dict[str, Any], minor_version: int = 1
) -> MockConfigEntry:
    """A 1.``minor_version`` entry with ``options``, set up (migrated), unloaded."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Kitchen",
        data={CONF_HOST: "127.0.0.1", CONF_PORT: servers.free_port()},
        options={"voice": "en_US-joe-medium", **options},
        version=1,
        minor_version=minor_version,
    )
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY  # migrated; no satellite
    assert await hass.config_entries.async_unload(entry.entry_id)
    return entry


def notice(hass: HomeAssistant, entry: MockConfigEntry) -> ir.IssueEntry | None:
    """The entry's "notes moved" repair issue, if any."""
    issue_id = f"notes_file_moved_{entry.entry_id}"
    return ir.async_get(hass).async_get_issue(DOMAIN, issue_id)


def test_new_entries_are_made_at_the_current_version() -> None:
    assert (VoiceStackConfigFlow.VERSION, VoiceStackConfigFlow.MINOR_VERSION) == (1, 3)


@pytest.mark.parametrize(
    ("stored", "migrated"),
    [
        ("voicestack_notes.txt", "voicestack/voicestack_notes.txt"),
        ("notes/today.md", "voicestack/today.md"),
        (".", "voicestack/notes.txt"),
        ("/etc/passwd", "voicestack/passwd"),
    ],
)
@pytest.mark.usefixtures("config_dir")
async def test_a_notes_file_elsewhere_moves_into_the_folder(
    hass: HomeAssistant,
    caplog: pytest.LogCaptureFixture,
    stored: str,
    migrated: str,
) -> None:
    with caplog.at_level(logging.WARNING):
        entry = await load_old_entry(hass, {"notes_file": stored})

    assert entry.minor_version == 3
    assert entry.options == {"voice": "en_US-joe-medium", "notes_file": migrated}
    assert (
        f"Kitchen: notes file {stored!r} is not in the voicestack folder of the"
        f" config directory; notes go to {migrated} now"
    ) in caplog.text
    assert notice(hass, entry) is None  # no old notes file: nothing to tell


async def test_an_old_notes_file_is_left_in_place_and_a_repair_issue_says_so(
    hass: HomeAssistant, config_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = config_dir / "voicestack_notes.txt"
    old.write_text("2026-11-01T08:00:00+00:00\tdictation\tbuy milk\n", "utf-8")

    with caplog.at_level(logging.WARNING):
        entry = await load_old_entry(hass, {})  # never set: the old default

    issue = notice(hass, entry)
    assert entry.minor_version == 3
    assert "notes_file" not in entry.options  # the new default applies
    assert issue is not None
    assert issue.translation_key == "notes_file_moved"
    assert issue.severity is ir.IssueSeverity.WARNING
    assert not issue.is_fixable
    assert issue.is_persistent
    assert issue.translation_placeholders == {
        "name": "Kitchen",
        "old": "voicestack_notes.txt",
        "new": "voicestack/notes.txt",
    }
    assert (
        "Kitchen: notes go to voicestack/notes.txt now; the notes saved before"
        " stay in voicestack_notes.txt"
    ) in caplog.text
    assert old.read_text("utf-8").endswith("buy milk\n")  # not moved, not deleted

    await hass.config_entries.async_remove(entry.entry_id)
    assert notice(hass, entry) is None


async def test_notes_that_went_into_home_assistants_own_file_are_pointed_out(
    hass: HomeAssistant, config_dir: Path
) -> None:
    entry = await load_old_entry(hass, {"notes_file": "configuration.yaml"})

    issue = notice(hass, entry)
    assert entry.options["notes_file"] == "voicestack/configuration.yaml"
    assert issue is not None
    assert issue.translation_placeholders["old"] == "configuration.yaml"
    assert issue.translation_placeholders["new"] == "voicestack/configuration.yaml"
    assert not (config_dir / "voicestack").exists()  # made on the first note


@pytest.mark.usefixtures("config_dir")
async def test_a_notes_file_in_the_folder_is_kept_quietly(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        entry = await load_old_entry(hass, {"notes_file": "voicestack/mine.txt"})

    assert entry.minor_version == 3
    assert entry.options["notes_file"] == "voicestack/mine.txt"
    assert "notes" not in caplog.text
    assert notice(hass, entry) is None


@pytest.mark.parametrize(("stored", "migrated"), [(1_000_000, 10_000), (800, 800)])
@pytest.mark.usefixtures("config_dir")
async def test_a_longest_message_over_the_bound_is_lowered_to_it(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture, stored: int, migrated: int
) -> None:
    """Before 1.3 any length was taken; now the entry would not set up with it."""
    with caplog.at_level(logging.WARNING):
        entry = await load_old_entry(
            hass, {"max_message_length": stored}, minor_version=2
        )

    assert entry.minor_version == 3
    assert entry.options["max_message_length"] == migrated
    lowered = f"Kitchen: Longest message was {stored} characters; it is 10000 now"
    assert (lowered in caplog.text) is (stored != migrated)
