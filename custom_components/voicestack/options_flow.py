"""Options, per satellite: a menu of six forms, each saving only its own part.

A seventh entry, ``voices``, saves nothing: it enrolls or forgets a voice
(``voiceprints/options.py``).

- ``announcements``: the announcer's windows, limits and templates, built from
  ``AnnounceOptions`` (one field per option) and checked by its ``validate()``.
- ``modes``: how the voice-mode router listens, times out and delivers.
- ``vocabulary``: the phrases of every command (``core.router.vocabulary``).
- ``shortcuts``: ``phrase = script.entity_id`` lines.
- ``conversations``: the follow-up loop (``conversation/options.py``).
- ``recordings``: how many recorded requests the satellite keeps, and the disk
  space they may take (the debug panel's; the library deletes the oldest).

A step's values are merged into the entry's options (the rest, such as the voice
the satellite picked, is kept). The router steps are checked together with the
options already stored (``RouterConfig.from_options``): a phrase can clash with
a shortcut saved on another step, so every problem is shown, on its own field
when the step has it, and in words in the step's description.

The notes file is also checked on the disk when the modes are saved: a symbolic
link on the way to it, or a folder or special file where it should be, is
refused (``core/notes_file.py``; every write checks again).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
import re
from typing import Any, Final

from homeassistant.config_entries import ConfigFlowResult
from homeassistant.core import HomeAssistant
from homeassistant.helpers import selector
import voluptuous as vol

from .const import (
    CONF_RECORDINGS_KEEP,
    CONF_RECORDINGS_MAX_MB,
    DEFAULT_RECORDINGS_KEEP,
    DEFAULT_RECORDINGS_MAX_MB,
    RECORDINGS_KEEP_RANGE,
    RECORDINGS_MAX_MB_RANGE,
)
from .conversation import options as conversation_options
from .core.announce import AnnounceError, AnnounceOptions
from .core.conversation.policy import FollowUpConfigError
from .core.notes_file import notes_file_error, notes_file_refusal
from .core.router.config import (
    DEFAULTS,
    DESTINATIONS,
    GATHERING_FRAMES,
    MAX_TIMER_S,
    TIMERS,
    RouterConfig,
)
from .core.router.hooks import ListenMode
from .core.router.vocabulary import (
    ENTRIES,
    SHORTCUTS,
    Problem,
    Vocabulary,
    VocabularyError,
    read_shortcuts,
)
from .voiceprints.options import VoiceSteps

MENU: Final = (
    "announcements",
    "modes",
    "vocabulary",
    "shortcuts",
    "conversations",
    "recordings",
    "voices",
)
VOCABULARY: Final = "vocabulary"
PROBLEMS: Final = "problems"  # description placeholder of the router steps
SCRIPT_PREFIX: Final = "script."

_INTEGERS = frozenset(
    {"max_message_length", "queue_max", "names_max", "names_max_chars"}
)
# Characters a problem's text may hold (in a regex) that Markdown would eat.
_MARKDOWN = re.compile(r"([\\`*_\[\]<>~])")
NOTES_FILE: Final = "notes_file"
# What the disk says against a notes file, in words (the error code adds the key).
_NOTES_REFUSALS: Final = {
    "symlink": "a symbolic link is on the way; notes are written only to a"
    " regular file in the voicestack folder",
    "not_a_file": "a folder or special file is in the way, not a regular file",
    "unusable": "the file cannot be opened for appending",
}


def _field_selector(
    name: str, value: Any
) -> selector.TextSelector | selector.NumberSelector:
    if isinstance(value, str):
        return selector.TextSelector(selector.TextSelectorConfig(multiline=False))
    return selector.NumberSelector(
        selector.NumberSelectorConfig(
            min=0,
            step=1 if name in _INTEGERS else 0.05,
            mode=selector.NumberSelectorMode.BOX,
        )
    )


def options_schema(current: dict[str, Any]) -> vol.Schema:
    """Every announcer option, with ``current`` values as defaults."""
    return vol.Schema(
        {
            vol.Required(name, default=value): _field_selector(name, value)
            for name, value in current.items()
        }
    )


def _typed(user_input: dict[str, Any]) -> dict[str, Any]:
    """Number selectors give floats; whole-number options want ints."""
    return {
        k: int(v) if k in _INTEGERS and isinstance(v, float) and v.is_integer() else v
        for k, v in user_input.items()
    }


def _announcer_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The defaults, overridden by the announcer's part of ``options``."""
    defaults = AnnounceOptions().to_dict()
    return {**defaults, **{k: options[k] for k in defaults if k in options}}


def field_name(key: str) -> str:
    """The form field of an option or vocabulary entry (fields hold no dots)."""
    return key.replace(".", "_")


def _select(options: Iterable[str], translation_key: str) -> selector.SelectSelector:
    return selector.SelectSelector(
        selector.SelectSelectorConfig(
            options=list(options),
            translation_key=translation_key,
            mode=selector.SelectSelectorMode.DROPDOWN,
        )
    )


_MULTILINE: Final = selector.TextSelector(selector.TextSelectorConfig(multiline=True))
_TIMER: Final = selector.NumberSelector(
    selector.NumberSelectorConfig(
        min=0,
        max=MAX_TIMER_S,
        step=0.1,
        unit_of_measurement="s",
        mode=selector.NumberSelectorMode.BOX,
    )
)
MODES_SCHEMA: Final = vol.Schema(
    {
        vol.Required("listen_mode"): _select(
            (m.value for m in ListenMode), "listen_mode"
        ),
        **{vol.Required(name): _TIMER for name in TIMERS},
        **{
            vol.Required(f"{frame}_destination"): _select(DESTINATIONS, "destination")
            for frame in GATHERING_FRAMES
        },
        vol.Optional("todo_entity"): selector.EntitySelector(
            selector.EntitySelectorConfig(domain="todo")
        ),
        vol.Required(NOTES_FILE): selector.TextSelector(),
        vol.Required("confirm_sensitive"): selector.BooleanSelector(),
        vol.Optional("confirm_entities"): selector.EntitySelector(
            selector.EntitySelectorConfig(multiple=True)
        ),
    }
)
VOCABULARY_SCHEMA: Final = vol.Schema(
    {vol.Optional(field_name(entry.key)): _MULTILINE for entry in ENTRIES}
)
SHORTCUTS_SCHEMA: Final = vol.Schema({vol.Optional(SHORTCUTS): _MULTILINE})
# Each recordings option: its default and its range (the error code is its name).
RECORDINGS: Final = {
    CONF_RECORDINGS_KEEP: (DEFAULT_RECORDINGS_KEEP, RECORDINGS_KEEP_RANGE),
    CONF_RECORDINGS_MAX_MB: (DEFAULT_RECORDINGS_MAX_MB, RECORDINGS_MAX_MB_RANGE),
}
# No range in the selector: a value out of range gets its translated error.
RECORDINGS_SCHEMA: Final = vol.Schema(
    {
        vol.Required(name): selector.NumberSelector(
            selector.NumberSelectorConfig(step=1, mode=selector.NumberSelectorMode.BOX)
        )
        for name in RECORDINGS
    }
)


def _text(value: str | Iterable[str]) -> str:
    """Form text of stored phrases (hand-edited options may hold a list)."""
    return value if isinstance(value, str) else "\n".join(value)


def _changed_entries(vocabulary: Vocabulary) -> dict[str, str]:
    """The form text of the entries that differ from the defaults.

    Stored in this canonical form, an entry shows and saves the same way again;
    entries left at their defaults follow the defaults of a later version.
    """
    texts, defaults = vocabulary.as_options(), Vocabulary().as_options()
    return {
        entry.key: texts[entry.key]
        for entry in ENTRIES
        if texts[entry.key] != defaults[entry.key]
    }


def _unknown_scripts(hass: HomeAssistant, text: str) -> list[Problem]:
    """Shortcuts whose action is not an existing script."""
    shortcuts, _bad_lines = read_shortcuts(text)  # those are RouterConfig's
    return [
        Problem(SHORTCUTS, f"{phrase!r}: no script {action!r}", "unknown_script")
        for phrase, action in shortcuts.items()
        if action
        and (not action.startswith(SCRIPT_PREFIX) or hass.states.get(action) is None)
    ]


def _notes_file_problems(config_dir: str, value: Any) -> list[Problem]:
    """The disk's objection to notes file ``value`` (blocking: in the executor).

    A value whose text is wrong is ``RouterConfig``'s to report.
    """
    if notes_file_error(value) is not None:
        return []
    reason = notes_file_refusal(config_dir, value)
    if reason is None:
        return []
    return [
        Problem(
            NOTES_FILE, f"{value!r}: {_NOTES_REFUSALS[reason]}", f"notes_file_{reason}"
        )
    ]


def _errors(schema: vol.Schema, problems: Sequence[Problem]) -> dict[str, str]:
    """The first problem of each field, ``base`` for those not on this form."""
    fields = {str(key) for key in schema.schema}
    errors: dict[str, str] = {}
    for problem in problems:
        name = field_name(problem.key)
        errors.setdefault(name if name in fields else "base", problem.code)
    return errors


def _recordings_errors(user_input: Mapping[str, Any]) -> dict[str, str]:
    """Each recordings option that is no whole number in its range."""
    errors: dict[str, str] = {}
    for name, (_default, (low, high)) in RECORDINGS.items():
        value = user_input[name]
        if not float(value).is_integer() or not low <= value <= high:
            errors[name] = name
    return errors


def _details(problems: Sequence[Problem]) -> str:
    """Every problem in words, as a Markdown list (regexes shown as typed)."""
    return "\n".join(
        "- " + _MARKDOWN.sub(r"\\\1", str(problem)) for problem in problems
    )


class VoiceStackOptionsFlow(VoiceSteps):
    """Edit one satellite's announcer and voice-mode options."""

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The menu: which part of the options to edit."""
        return self.async_show_menu(step_id="init", menu_options=list(MENU))

    async def async_step_announcements(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """One form; errors stay on the offending field."""
        errors: dict[str, str] = {}
        current = _announcer_options(self.config_entry.options)
        if user_input is not None:
            data = _typed(user_input)
            try:
                AnnounceOptions.from_dict(data)
            except AnnounceError as err:
                errors[err.field or "base"] = err.code
                current = {**current, **data}
            else:
                return self._save(data)
        return self.async_show_form(
            step_id="announcements", data_schema=options_schema(current), errors=errors
        )

    async def async_step_modes(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Listen mode, timers, destinations, confirmations."""
        if user_input is None:
            options = self.config_entry.options
            current = {k: options.get(k, default) for k, default in DEFAULTS.items()}
            # Shown as "" the UI would send it back, and "" is no entity id.
            if not current["todo_entity"]:
                del current["todo_entity"]
            return self._router_form("modes", MODES_SCHEMA, current)
        # A cleared optional field is left out of the input: store it empty.
        new = {"todo_entity": "", "confirm_entities": [], **user_input}
        notes = await self.hass.async_add_executor_job(
            _notes_file_problems, self.hass.config.config_dir, user_input[NOTES_FILE]
        )
        return self._router_save("modes", MODES_SCHEMA, user_input, new, extra=notes)

    async def async_step_vocabulary(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The phrases of every command; a cleared field is an empty entry."""
        if user_input is None:
            stored = self.config_entry.options.get(VOCABULARY) or {}
            texts = {**Vocabulary().as_options(), **stored}
            current = {
                field_name(entry.key): _text(texts[entry.key]) for entry in ENTRIES
            }
            return self._router_form("vocabulary", VOCABULARY_SCHEMA, current)
        phrases = {
            entry.key: user_input.get(field_name(entry.key), "") for entry in ENTRIES
        }
        return self._router_save(
            "vocabulary",
            VOCABULARY_SCHEMA,
            user_input,
            {VOCABULARY: phrases},
            store=lambda config: {
                VOCABULARY: _changed_entries(config.settings.vocabulary)
            },
        )

    async def async_step_shortcuts(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """``phrase = script.entity_id`` lines; each script must exist."""
        if user_input is None:
            stored = self.config_entry.options.get(SHORTCUTS) or ""
            return self._router_form(
                "shortcuts", SHORTCUTS_SCHEMA, {SHORTCUTS: _text(stored)}
            )
        text = user_input.get(SHORTCUTS, "")
        return self._router_save(
            "shortcuts",
            SHORTCUTS_SCHEMA,
            user_input,
            {SHORTCUTS: text},
            extra=_unknown_scripts(self.hass, text),
            store=lambda config: {
                SHORTCUTS: config.settings.vocabulary.as_options()[SHORTCUTS]
            },
        )

    async def async_step_conversations(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Follow-up mode, turn limit, memory, window and stop words."""
        errors: dict[str, str] = {}
        language = self.hass.config.language
        values = conversation_options.form_values(self.config_entry.options, language)
        if user_input is not None:
            try:
                return self._save(conversation_options.to_options(user_input, language))
            except FollowUpConfigError as err:
                errors[conversation_options.error_field(err.code)] = (
                    f"follow_up_{err.code}"
                )
                values = {**values, **user_input}
        return self.async_show_form(
            step_id="conversations",
            data_schema=self.add_suggested_values_to_schema(
                conversation_options.CONVERSATIONS_SCHEMA, values
            ),
            errors=errors,
        )

    async def async_step_recordings(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Recordings kept and the disk space they may take."""
        options = self.config_entry.options
        values = {
            name: options.get(name, default)
            for name, (default, _) in RECORDINGS.items()
        }
        errors: dict[str, str] = {}
        if user_input is not None:
            errors = _recordings_errors(user_input)
            if not errors:
                return self._save({name: int(user_input[name]) for name in RECORDINGS})
            values = {**values, **user_input}
        return self.async_show_form(
            step_id="recordings",
            data_schema=self.add_suggested_values_to_schema(RECORDINGS_SCHEMA, values),
            errors=errors,
        )

    def _router_form(
        self,
        step_id: str,
        schema: vol.Schema,
        values: Mapping[str, Any],
        problems: Sequence[Problem] = (),
    ) -> ConfigFlowResult:
        """The step's form showing ``values``, and the problems if any."""
        return self.async_show_form(
            step_id=step_id,
            data_schema=self.add_suggested_values_to_schema(schema, values),
            errors=_errors(schema, problems),
            description_placeholders={PROBLEMS: _details(problems)},
        )

    def _router_save(
        self,
        step_id: str,
        schema: vol.Schema,
        user_input: dict[str, Any],
        new: dict[str, Any],
        *,
        extra: Sequence[Problem] = (),
        store: Callable[[RouterConfig], Mapping[str, Any]] | None = None,
    ) -> ConfigFlowResult:
        """Save ``new`` (or what ``store`` makes of the checked config) if valid.

        ``new`` is checked merged into the stored options, so a clash with
        another step's values is found; ``extra`` are the step's own problems.
        """
        try:
            config = RouterConfig.from_options({**self.config_entry.options, **new})
        except VocabularyError as err:
            return self._router_form(
                step_id, schema, user_input, [*err.problems, *extra]
            )
        if extra:
            return self._router_form(step_id, schema, user_input, extra)
        return self._save(new if store is None else store(config))

    def _save(self, new: Mapping[str, Any]) -> ConfigFlowResult:
        """Merge ``new`` into the options: the other steps' values are kept."""
        return self.async_create_entry(data={**self.config_entry.options, **new})
