"""The options flow's menu and its voice-mode steps, in a real Home Assistant.

Options flows work on entries that are not loaded, so no satellite is needed: the
entry only has to exist. Each step is opened through the menu, like in the UI.
"""

from __future__ import annotations

from collections.abc import Callable
import json
from pathlib import Path
from typing import Any

from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.agent.options import AGENT_MENU
from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.conversation.options import CONVERSATIONS_SCHEMA
from custom_components.voicestack.core.announce import AnnounceOptions
from custom_components.voicestack.core.conversation.debounce import (
    OPTION_FIELDS as DEBOUNCE_FIELDS,
)
from custom_components.voicestack.core.conversation.policy import OPTION_FIELDS
from custom_components.voicestack.core.router import Vocabulary
from custom_components.voicestack.core.router.config import DEFAULTS, RouterConfig
from custom_components.voicestack.core.router.vocabulary import ENTRIES
from custom_components.voicestack.options_flow import (
    MENU,
    MODES_SCHEMA,
    RECORDINGS,
    RECORDINGS_SCHEMA,
    SHORTCUTS_SCHEMA,
    VOCABULARY_SCHEMA,
    field_name,
)

INTEGRATION = Path(__file__).parents[2] / "custom_components" / "voicestack"
# What the integration and the announcements step stored: other steps keep it.
KEPT = {"voice": "en_US-amy-medium", "coalesce_window_s": 1.0}
MODES = {
    "listen_mode": "always_listening",
    "query_silence_s": 0.0,
    "inventory_silence_s": 90.0,
    "confirm_timeout_s": 15.0,
    "picker_timeout_s": 0.0,
    "query_destination": "queue",
    "dictation_destination": "event",
    "inventory_destination": "todo",
    "todo_entity": "todo.shopping",
    "notes_file": "voicestack/voice/notes.txt",
    "confirm_sensitive": False,
    "confirm_entities": ["switch.heater"],
}
SCRIPT = "script.movie_time"
IN_THE_FOLDER = (
    "a file in the voicestack folder of the config directory,"
    " such as voicestack/notes.txt"
)


@pytest.fixture
def entry(hass: HomeAssistant) -> MockConfigEntry:
    """A satellite's entry, not loaded, with options from elsewhere."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="test-satellite",
        data={CONF_HOST: "127.0.0.1", CONF_PORT: 10700},
        options=KEPT,
    )
    entry.add_to_hass(hass)
    return entry


@pytest.fixture(autouse=True)
def script(hass: HomeAssistant) -> None:
    """The script shortcuts may run."""
    hass.states.async_set(SCRIPT, "off")


async def open_step(hass: HomeAssistant, entry: MockConfigEntry, step: str) -> Any:
    """Open the options, then ``step`` from the menu."""
    menu = await hass.config_entries.options.async_init(entry.entry_id)
    return await hass.config_entries.options.async_configure(
        menu["flow_id"], {"next_step_id": step}
    )


async def submit(hass: HomeAssistant, form: Any, data: dict[str, Any]) -> Any:
    """Send ``data`` to the form."""
    return await hass.config_entries.options.async_configure(form["flow_id"], data)


def shown(form: Any) -> dict[str, Any]:
    """The values the form shows in its fields (suggested values)."""
    return {
        str(key): key.description["suggested_value"]
        for key in form["data_schema"].schema
        if key.description and "suggested_value" in key.description
    }


def vocabulary_form(**changes: str) -> dict[str, str]:
    """The vocabulary form with the default text, ``changes`` applied."""
    defaults = Vocabulary().as_options()
    return {field_name(e.key): defaults[e.key] for e in ENTRIES} | changes


def rejected(result: Any, entry: MockConfigEntry, options: dict[str, Any]) -> bool:
    """The form came back and nothing was stored."""
    return result["type"] is FlowResultType.FORM and entry.options == options


# -- menu and announcements ----------------------------------------------------


async def test_the_options_open_on_a_menu_of_seven_steps(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    menu = await hass.config_entries.options.async_init(entry.entry_id)

    assert menu["type"] is FlowResultType.MENU
    assert menu["step_id"] == "init"
    assert menu["menu_options"] == [
        "announcements",
        "modes",
        "vocabulary",
        "shortcuts",
        "conversations",
        "recordings",
        "voices",
    ]


async def test_announcements_show_only_announcer_options_and_merge(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "announcements")
    defaults = {str(key): key.default() for key in form["data_schema"].schema}
    bad = await submit(hass, form, {"template_warning": "{oops"})
    bad_options = dict(entry.options)
    good = await submit(hass, bad, {"queue_max": 7.0, "template_warning": "{count} x"})

    assert form["step_id"] == "announcements"
    assert defaults == {**AnnounceOptions().to_dict(), "coalesce_window_s": 1.0}
    assert bad["errors"] == {"template_warning": "invalid_template"}
    assert bad_options == KEPT
    assert good["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options == {
        **defaults,
        "voice": KEPT["voice"],
        "queue_max": 7,
        "template_warning": "{count} x",
    }
    assert isinstance(entry.options["queue_max"], int)


# -- voice modes ---------------------------------------------------------------


async def test_modes_show_the_defaults(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "modes")

    assert form["type"] is FlowResultType.FORM
    assert form["step_id"] == "modes"
    # No todo list: the entity field is empty (an empty string is no entity id).
    assert shown(form) == {k: v for k, v in DEFAULTS.items() if k != "todo_entity"}
    assert form["errors"] == {}
    assert form["description_placeholders"] == {"problems": ""}


async def test_modes_are_saved_merged_and_shown_again(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        entry, options={**KEPT, "shortcuts": f"movie time = {SCRIPT}"}
    )
    form = await open_step(hass, entry, "modes")
    saved = await submit(hass, form, MODES)
    again = await open_step(hass, entry, "modes")
    config = RouterConfig.from_options(entry.options)

    assert saved["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options == {**KEPT, "shortcuts": f"movie time = {SCRIPT}", **MODES}
    assert shown(again) == MODES
    assert dict(config.destinations)["inventory"] == "todo"
    assert config.settings.query_silence_s is None


async def test_cleared_optional_fields_are_stored_empty(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """A cleared entity field is left out of the input; it must not keep its value."""
    hass.config_entries.async_update_entry(entry, options={**KEPT, **MODES})
    form = await open_step(hass, entry, "modes")
    cleared = {
        k: v for k, v in MODES.items() if k not in {"todo_entity", "confirm_entities"}
    }
    await submit(hass, form, {**cleared, "inventory_destination": "notes"})

    assert entry.options["todo_entity"] == ""
    assert entry.options["confirm_entities"] == []
    assert entry.options["inventory_destination"] == "notes"


@pytest.mark.parametrize(
    ("changes", "errors", "detail"),
    [
        (
            {"notes_file": "../x"},
            {"notes_file": "bad_notes_file"},
            f"notes\\_file: '../x': {IN_THE_FOLDER}",
        ),
        (
            {"notes_file": "/etc/x"},
            {"notes_file": "bad_notes_file"},
            f"notes\\_file: '/etc/x': {IN_THE_FOLDER}",
        ),
        (
            {"dictation_destination": "todo"},
            {"todo_entity": "todo_required"},
            "todo\\_entity: choose the to-do list",
        ),
    ],
)
async def test_bad_modes_are_rejected_on_their_field(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    changes: dict[str, Any],
    errors: dict[str, str],
    detail: str,
) -> None:
    form = await open_step(hass, entry, "modes")
    result = await submit(hass, form, shown(form) | changes)

    assert rejected(result, entry, KEPT)
    assert result["errors"] == errors
    assert result["description_placeholders"] == {"problems": f"- {detail}"}
    # The form keeps what was typed.
    assert shown(result)["notes_file"] == changes.get(
        "notes_file", "voicestack/notes.txt"
    )


@pytest.fixture
def config_dir(hass: HomeAssistant, tmp_path: Path) -> Path:
    """A config directory like a user's: Home Assistant's files, a notes folder."""
    path = tmp_path / "config"
    (path / ".storage").mkdir(parents=True)
    (path / "voicestack" / "archive").mkdir(parents=True)
    for name in ("configuration.yaml", "secrets.yaml", "home-assistant_v2.db"):
        (path / name).write_text("", encoding="utf-8")
    (path / ".storage" / "core.config_entries").write_text("{}", encoding="utf-8")
    hass.config.config_dir = str(path)
    return path


async def save_notes_file(
    hass: HomeAssistant, entry: MockConfigEntry, notes_file: str
) -> Any:
    """Save the modes form with ``notes_file`` (the rest as shown)."""
    form = await open_step(hass, entry, "modes")
    return await submit(hass, form, shown(form) | {"notes_file": notes_file})


@pytest.mark.parametrize(
    "notes_file",
    [
        ".",
        "..",
        "configuration.yaml",
        "secrets.yaml",
        ".storage/core.config_entries",
        "home-assistant_v2.db",
        "voicestack_notes.txt",  # the old default, beside Home Assistant's files
        "voicestack",
        "voicestack/../secrets.yaml",
        "/etc/passwd",
        "/config/voicestack/notes.txt",
    ],
)
@pytest.mark.usefixtures("config_dir")
async def test_a_notes_file_outside_the_voicestack_folder_is_refused(
    hass: HomeAssistant, entry: MockConfigEntry, notes_file: str
) -> None:
    result = await save_notes_file(hass, entry, notes_file)

    assert rejected(result, entry, KEPT)
    assert result["errors"] == {"notes_file": "bad_notes_file"}
    typed = repr(notes_file).replace("_", "\\_")  # the list is Markdown
    assert result["description_placeholders"]["problems"] == (
        f"- notes\\_file: {typed}: {IN_THE_FOLDER}"
    )


def _link_out(config_dir: Path) -> None:
    (config_dir / "voicestack" / "notes.txt").symlink_to("../configuration.yaml")


def _link_the_folder(config_dir: Path) -> None:
    (config_dir / "voicestack" / "archive").rmdir()
    (config_dir / "voicestack" / "archive").symlink_to("../.storage")


def _link_the_lock(config_dir: Path) -> None:
    (config_dir / "voicestack" / "notes.txt.lock").symlink_to("../secrets.yaml")


def _nothing(config_dir: Path) -> None:
    """The directory ``voicestack/archive`` is there already."""


@pytest.mark.parametrize(
    ("plant", "notes_file", "code", "detail"),
    [
        pytest.param(
            _link_out,
            "voicestack/notes.txt",
            "notes_file_symlink",
            "a symbolic link",
            id="file-linked-outside",
        ),
        pytest.param(
            _link_the_folder,
            "voicestack/archive/notes.txt",
            "notes_file_symlink",
            "a symbolic link",
            id="folder-linked-outside",
        ),
        pytest.param(
            _link_the_lock,
            "voicestack/notes.txt",
            "notes_file_symlink",
            "a symbolic link",
            id="lock-file-linked-outside",
        ),
        pytest.param(
            _nothing,
            "voicestack/archive",
            "notes_file_not_a_file",
            "a folder or special file",
            id="a-directory",
        ),
        pytest.param(
            _nothing,
            "voicestack/" + "n" * 300,
            "notes_file_unusable",
            "the file cannot be opened",
            id="name-too-long",
        ),
    ],
)
async def test_a_notes_file_the_disk_refuses_is_refused(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    config_dir: Path,
    plant: Callable[[Path], None],
    notes_file: str,
    code: str,
    detail: str,
) -> None:
    plant(config_dir)

    result = await save_notes_file(hass, entry, notes_file)

    assert rejected(result, entry, KEPT)
    assert result["errors"] == {"notes_file": code}
    assert result["description_placeholders"]["problems"].startswith(
        f"- notes\\_file: {notes_file!r}: {detail}"
    )
    assert (config_dir / "configuration.yaml").read_text(encoding="utf-8") == ""


@pytest.mark.parametrize(
    "notes_file",
    [
        "voicestack/notes.txt",  # exists, a regular file
        "voicestack/kitchen/today.md",  # its folder is made on the first note
        "voicestack/archive/2026.txt",
    ],
)
async def test_a_file_in_the_voicestack_folder_is_saved(
    hass: HomeAssistant, entry: MockConfigEntry, config_dir: Path, notes_file: str
) -> None:
    (config_dir / "voicestack" / "notes.txt").write_text("kept\n", encoding="utf-8")

    result = await save_notes_file(hass, entry, notes_file)

    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options["notes_file"] == notes_file
    assert not (config_dir / "voicestack" / "kitchen").exists()  # only looked


async def test_a_todo_destination_without_the_field_is_todo_required(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """Like the UI sends it: the empty entity field is missing."""
    form = await open_step(hass, entry, "modes")
    no_todo = {k: v for k, v in MODES.items() if k != "todo_entity"}
    result = await submit(hass, form, no_todo)

    assert rejected(result, entry, KEPT)
    assert result["errors"] == {"todo_entity": "todo_required"}


# -- vocabulary ----------------------------------------------------------------


async def test_vocabulary_shows_the_default_phrases(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "vocabulary")

    assert form["step_id"] == "vocabulary"
    assert shown(form) == vocabulary_form()
    assert shown(form)["common_cancel"] == (
        "cancel, abort, never mind, nevermind, forget it"
    )
    assert form["description_placeholders"] == {"problems": ""}


async def test_vocabulary_stores_only_changed_entries_and_round_trips(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "vocabulary")
    saved = await submit(
        hass,
        form,
        vocabulary_form(
            query_submit=" fire ,send it\nre:send (it )?now\n",
            base_wake="",
        ),
    )
    stored = dict(entry.options)
    again = await open_step(hass, entry, "vocabulary")
    resaved = await submit(hass, again, shown(again))
    vocabulary = RouterConfig.from_options(entry.options).settings.vocabulary

    assert saved["type"] is FlowResultType.CREATE_ENTRY
    assert stored == {
        **KEPT,
        "vocabulary": {
            "query.submit": "fire, send it\nre:send (it )?now",
            "base.wake": "",
        },
    }
    assert shown(again) == vocabulary_form(
        query_submit="fire, send it\nre:send (it )?now", base_wake=""
    )
    assert resaved["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options == stored
    assert vocabulary["query.submit"] == ("fire", "send it", "re:send (it )?now")
    assert vocabulary["base.wake"] == ()


async def test_a_cleared_entry_is_empty_and_defaults_store_nothing(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        entry, options={**KEPT, "vocabulary": {"confirm.yes": "sure"}}
    )
    form = await open_step(hass, entry, "vocabulary")
    defaults = vocabulary_form()
    cleared = {k: v for k, v in defaults.items() if k != "inventory_undo"}
    await submit(hass, form, cleared)
    undo_cleared = dict(entry.options)
    form = await open_step(hass, entry, "vocabulary")
    await submit(hass, form, defaults)

    assert undo_cleared == {**KEPT, "vocabulary": {"inventory.undo": ""}}
    assert entry.options == {**KEPT, "vocabulary": {}}


@pytest.mark.parametrize(
    ("changes", "errors", "detail"),
    [
        (
            {"common_cancel": "cancel,,abort"},
            {"common_cancel": "empty_phrase"},
            "common.cancel: an empty phrase",
        ),
        (
            {"common_cancel": "cancel\nre:("},
            {"common_cancel": "bad_regex"},
            "common.cancel: 're:(' is not a valid regular expression",
        ),
        (
            {"confirm_yes": "yes, go"},
            {"confirm_yes": "claimed_twice"},
            "confirm.yes: 'go' is claimed twice: by query.submit",
        ),
        (
            {"base_wake": "re:hey computer"},
            {"base_wake": "regex_not_allowed"},
            "base.wake: 're:hey computer': only plain phrases here",
        ),
        (
            {"confirm_no": "no\nre:(no)*"},
            {"confirm_no": "matches_empty"},
            # Escaped: the placeholder is Markdown, the user sees what was typed.
            "confirm.no: 're:(no)\\*' matches an empty utterance",
        ),
        (
            {"inventory_undo": "undo\nre:(go|went)"},
            {"inventory_undo": "regex_overlap"},
            "inventory.undo: re:'(go|went)' also matches 'go' of query.submit",
        ),
        (
            {"query_submit": ""},
            {"query_submit": "needs_phrase"},
            "query.submit: needs at least one phrase (send the query)",
        ),
        (
            {"base_what_mode": "uhm"},
            {"base_what_mode": "no_words"},
            "base.what\\_mode: 'uhm' has no words",
        ),
    ],
)
async def test_bad_vocabulary_is_rejected_on_its_field(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    changes: dict[str, str],
    errors: dict[str, str],
    detail: str,
) -> None:
    form = await open_step(hass, entry, "vocabulary")
    result = await submit(hass, form, vocabulary_form(**changes))

    assert rejected(result, entry, KEPT)
    assert result["errors"] == errors
    assert result["description_placeholders"]["problems"].startswith(f"- {detail}")
    assert shown(result) == vocabulary_form(**changes)


async def test_every_vocabulary_problem_is_listed(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "vocabulary")
    result = await submit(
        hass, form, vocabulary_form(common_cancel="cancel,,abort", confirm_yes="go")
    )
    lines = result["description_placeholders"]["problems"].splitlines()

    assert result["errors"] == {
        "common_cancel": "empty_phrase",
        "confirm_yes": "claimed_twice",
    }
    assert [line.split(":")[0] for line in lines] == [
        "- common.cancel",
        "- confirm.yes",
    ]


async def test_a_phrase_clashing_with_a_saved_shortcut_is_shown_on_base(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        entry, options={**KEPT, "shortcuts": f"movie time = {SCRIPT}"}
    )
    options = dict(entry.options)
    form = await open_step(hass, entry, "vocabulary")
    result = await submit(hass, form, vocabulary_form(confirm_yes="yes, movie time"))

    assert rejected(result, entry, options)
    assert result["errors"] == {"base": "claimed_twice"}
    assert result["description_placeholders"] == {
        "problems": "- shortcuts: 'movie time' is claimed twice: by confirm.yes"
        " (run the pending action) and shortcut 'movie time' → script.movie\\_time"
    }


async def test_invalid_stored_options_of_another_step_block_saving(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    """Hand-edited options: never stored as valid, and the user is told why."""
    hass.config_entries.async_update_entry(
        entry, options={**KEPT, "notes_file": "/etc/passwd"}
    )
    options = dict(entry.options)
    form = await open_step(hass, entry, "vocabulary")
    result = await submit(hass, form, vocabulary_form())

    assert rejected(result, entry, options)
    assert result["errors"] == {"base": "bad_notes_file"}
    assert result["description_placeholders"]["problems"].startswith(
        "- notes\\_file: '/etc/passwd'"
    )


# -- shortcuts -----------------------------------------------------------------


async def test_shortcuts_are_stored_tidy_and_accepted_by_the_router(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "shortcuts")
    saved = await submit(
        hass,
        form,
        {"shortcuts": f"\n Movie time={SCRIPT} \n\nre:cinema( now)? = {SCRIPT}"},
    )
    again = await open_step(hass, entry, "shortcuts")
    vocabulary = RouterConfig.from_options(entry.options).settings.vocabulary

    assert form["step_id"] == "shortcuts"
    assert shown(form) == {"shortcuts": ""}
    assert saved["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options == {
        **KEPT,
        "shortcuts": f"Movie time = {SCRIPT}\nre:cinema( now)? = {SCRIPT}",
    }
    assert shown(again) == {"shortcuts": entry.options["shortcuts"]}
    assert vocabulary.shortcuts == {"Movie time": SCRIPT, "re:cinema( now)?": SCRIPT}


async def test_cleared_shortcuts_are_stored_empty(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        entry, options={**KEPT, "shortcuts": f"movie time = {SCRIPT}"}
    )
    form = await open_step(hass, entry, "shortcuts")
    await submit(hass, form, {})

    assert entry.options == {**KEPT, "shortcuts": ""}


@pytest.mark.parametrize(
    ("text", "code", "detail"),
    [
        (
            f"cancel = {SCRIPT}",
            "claimed_twice",
            "- shortcuts: 'cancel' is claimed twice: by common.cancel",
        ),
        (
            f"movie time {SCRIPT}",
            "bad_shortcut_line",
            "- shortcuts: line 1 needs 'phrase = action': 'movie time script.movie\\_time'",
        ),
        (
            "party = script.party",
            "unknown_script",
            "- shortcuts: 'party': no script 'script.party'",
        ),
        (
            "lights = light.kitchen",
            "unknown_script",
            "- shortcuts: 'lights': no script 'light.kitchen'",
        ),
        ("lights =", "no_action", "- shortcuts: shortcut 'lights' has no action"),
    ],
)
async def test_bad_shortcuts_are_rejected(
    hass: HomeAssistant, entry: MockConfigEntry, text: str, code: str, detail: str
) -> None:
    form = await open_step(hass, entry, "shortcuts")
    result = await submit(hass, form, {"shortcuts": text})

    assert rejected(result, entry, KEPT)
    assert result["errors"] == {"shortcuts": code}
    assert result["description_placeholders"]["problems"].startswith(detail)
    assert shown(result) == {"shortcuts": text}


async def test_a_bad_shortcut_line_does_not_hide_a_missing_script(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "shortcuts")
    result = await submit(hass, form, {"shortcuts": "movie time\nparty = script.party"})

    assert rejected(result, entry, KEPT)
    problems = result["description_placeholders"]["problems"]
    assert "line 1 needs 'phrase = action'" in problems
    assert "'party': no script 'script.party'" in problems


async def test_a_shortcut_clashing_with_a_saved_phrase_is_rejected(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    hass.config_entries.async_update_entry(
        entry, options={**KEPT, "vocabulary": {"confirm.yes": "yes, movie time"}}
    )
    options = dict(entry.options)
    form = await open_step(hass, entry, "shortcuts")
    result = await submit(hass, form, {"shortcuts": f"movie time = {SCRIPT}"})

    assert rejected(result, entry, options)
    assert result["errors"] == {"shortcuts": "claimed_twice"}


async def test_router_and_script_problems_are_listed_together(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "shortcuts")
    result = await submit(
        hass, form, {"shortcuts": "cancel = script.movie_time\nparty = script.party"}
    )

    assert result["errors"] == {"shortcuts": "claimed_twice"}
    assert [
        line.split(":")[1].strip()
        for line in result["description_placeholders"]["problems"].splitlines()
    ] == ["'cancel' is claimed twice", "'party'"]


# -- translations --------------------------------------------------------------


def test_every_step_field_and_error_is_translated() -> None:
    strings = json.loads((INTEGRATION / "strings.json").read_text(encoding="utf-8"))
    english = json.loads(
        (INTEGRATION / "translations" / "en.json").read_text(encoding="utf-8")
    )
    options = strings["options"]
    steps = options["step"]

    assert english == strings
    # A satellite's menu, then the agent entry's own step (AGENT_MENU).
    assert list(steps["init"]["menu_options"]) == [*MENU, "agent"]
    assert set(AGENT_MENU) <= set(steps["init"]["menu_options"])
    assert set(steps["announcements"]["data"]) == set(AnnounceOptions().to_dict())
    for step, schema in (
        ("modes", MODES_SCHEMA),
        ("vocabulary", VOCABULARY_SCHEMA),
        ("shortcuts", SHORTCUTS_SCHEMA),
    ):
        fields = {str(key) for key in schema.schema}
        assert set(steps[step]["data"]) == fields, step
        assert set(steps[step]["data_description"]) == fields, step
        assert "{problems}" in steps[step]["description"], step
    assert set(options["error"]) == {
        # announcements
        "invalid_number",
        "invalid_template",
        "invalid_text",
        "unknown_option",
        # voice modes, vocabulary, shortcuts
        "empty_phrase",
        "no_words",
        "claimed_twice",
        "regex_not_allowed",
        "bad_regex",
        "matches_empty",
        "regex_overlap",
        "needs_phrase",
        "no_action",
        "bad_shortcut_line",
        "unknown_entry",
        "unknown_script",
        "todo_required",
        "not_todo",
        "bad_notes_file",
        "notes_file_symlink",
        "notes_file_not_a_file",
        "notes_file_unusable",
        "not_a_number",
        "out_of_range",
        "invalid",
        # conversations: one per policy field (FollowUpConfigError's codes)
        *(f"follow_up_{field}" for field in OPTION_FIELDS.values()),
        *(f"follow_up_{field}" for field in DEBOUNCE_FIELDS.values()),
        # recordings: one per option
        *RECORDINGS,
        # the agent entry's wrapped agent
        "own_agent",
        "agent_not_found",
    }
    for step, schema in (
        ("conversations", CONVERSATIONS_SCHEMA),
        ("recordings", RECORDINGS_SCHEMA),
    ):
        fields = {str(key) for key in schema.schema}
        assert set(steps[step]["data"]) == fields, step
        assert set(steps[step]["data_description"]) == fields, step


# -- conversations -----------------------------------------------------------------


CONVERSATIONS = {
    "follow_up_mode": "always",
    "follow_up_max_turns": 4.0,  # number selectors give floats
    "follow_up_memory": "independent",
    "follow_up_listen_s": 6.5,
    "follow_up_stop_words": "stop\n  that's it  \n\nenough",
    "follow_up_closing": " Wake me to go on. ",
    "follow_up_quiet_s": 1.0,
    "follow_up_max_s": 4.0,
    "follow_up_emergency_phrases": "help\ncall",
}


async def test_conversations_show_the_defaults_and_round_trip(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "conversations")
    defaults = shown(form)
    saved = await submit(hass, form, CONVERSATIONS)
    again = shown(await open_step(hass, entry, "conversations"))

    assert defaults["follow_up_mode"] == "agent"
    assert defaults["follow_up_max_turns"] == 3
    assert defaults["follow_up_memory"] == "shared"
    assert defaults["follow_up_listen_s"] == 8.0
    assert "that's all" in defaults["follow_up_stop_words"].splitlines()
    assert defaults["follow_up_closing"] == "Say the wake word to go on."
    assert saved["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options == {
        **KEPT,
        "follow_up_mode": "always",
        "follow_up_max_turns": 4,
        "follow_up_memory": "independent",
        "follow_up_listen_s": 6.5,
        "follow_up_stop_words": ["stop", "that's it", "enough"],
        "follow_up_closing": "Wake me to go on.",
        "follow_up_quiet_s": 1.0,
        "follow_up_max_s": 4.0,
        "follow_up_emergency_phrases": ["help", "call"],
    }
    assert again["follow_up_stop_words"] == "stop\nthat's it\nenough"


async def test_a_cleared_closing_says_nothing_at_the_turn_limit(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "conversations")
    cleared = {k: v for k, v in CONVERSATIONS.items() if k != "follow_up_closing"}
    await submit(hass, form, cleared)  # the form leaves an empty field out

    assert entry.options["follow_up_closing"] == ""
    assert (
        shown(await open_step(hass, entry, "conversations"))["follow_up_closing"] == ""
    )


@pytest.mark.parametrize(
    ("change", "field", "error"),
    [
        ({"follow_up_max_turns": 2.5}, "follow_up_max_turns", "follow_up_max_turns"),
        (
            {"follow_up_stop_words": "stop\nStop!"},
            "follow_up_stop_words",
            "follow_up_stop_words",
        ),
        (
            {"follow_up_stop_words": "x" * 61},
            "follow_up_stop_words",
            "follow_up_stop_words",
        ),
        ({"follow_up_max_s": 0.5}, "follow_up_max_s", "follow_up_max_s"),
        ({"follow_up_closing": "x" * 101}, "follow_up_closing", "follow_up_closing"),
        (
            {"follow_up_emergency_phrases": "help\nHelp!"},
            "follow_up_emergency_phrases",
            "follow_up_emergency_phrases",
        ),
    ],
)
async def test_bad_conversation_options_are_rejected_on_their_field(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    change: dict[str, Any],
    field: str,
    error: str,
) -> None:
    form = await open_step(hass, entry, "conversations")
    result = await submit(hass, form, {**CONVERSATIONS, **change})

    assert rejected(result, entry, KEPT)
    assert result["errors"] == {field: error}
    assert shown(result)[field] == change[field]
    strings = json.loads((INTEGRATION / "strings.json").read_text(encoding="utf-8"))
    assert error in strings["options"]["error"]


async def test_stored_conversation_options_that_do_not_validate_show_the_defaults(
    hass: HomeAssistant,
) -> None:
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="hand-edited",
        data={CONF_HOST: "127.0.0.1", CONF_PORT: 10700},
        options={"follow_up_max_turns": 99},
    )
    entry.add_to_hass(hass)

    form = await open_step(hass, entry, "conversations")

    assert shown(form)["follow_up_max_turns"] == 3


# -- recordings --------------------------------------------------------------------


async def test_recordings_show_the_defaults_and_round_trip(
    hass: HomeAssistant, entry: MockConfigEntry
) -> None:
    form = await open_step(hass, entry, "recordings")
    defaults = shown(form)
    saved = await submit(
        hass, form, {"recordings_keep": 500.0, "recordings_max_mb": 1.0}
    )
    again = shown(await open_step(hass, entry, "recordings"))

    assert defaults == {"recordings_keep": 20, "recordings_max_mb": 100}
    assert saved["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options == {**KEPT, "recordings_keep": 500, "recordings_max_mb": 1}
    assert isinstance(entry.options["recordings_keep"], int)
    assert again == {"recordings_keep": 500, "recordings_max_mb": 1}


@pytest.mark.parametrize(
    ("change", "errors"),
    [
        ({"recordings_keep": 0.0}, {"recordings_keep": "recordings_keep"}),
        ({"recordings_keep": 501.0}, {"recordings_keep": "recordings_keep"}),
        ({"recordings_keep": 2.5}, {"recordings_keep": "recordings_keep"}),
        ({"recordings_max_mb": 0.0}, {"recordings_max_mb": "recordings_max_mb"}),
        ({"recordings_max_mb": 2001.0}, {"recordings_max_mb": "recordings_max_mb"}),
        (
            {"recordings_keep": -1.0, "recordings_max_mb": 0.5},
            {
                "recordings_keep": "recordings_keep",
                "recordings_max_mb": "recordings_max_mb",
            },
        ),
    ],
)
async def test_bad_recordings_options_are_rejected_on_their_field(
    hass: HomeAssistant,
    entry: MockConfigEntry,
    change: dict[str, float],
    errors: dict[str, str],
) -> None:
    form = await open_step(hass, entry, "recordings")
    result = await submit(
        hass, form, {"recordings_keep": 20.0, "recordings_max_mb": 100.0, **change}
    )

    assert rejected(result, entry, KEPT)
    assert result["errors"] == errors
    assert shown(result) == {
        "recordings_keep": 20.0,
        "recordings_max_mb": 100.0,
        **change,
    }
