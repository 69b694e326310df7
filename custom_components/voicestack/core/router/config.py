"""One satellite's router configuration, read from (and validated for) its options.

The options flow stores plain values; ``RouterConfig.from_options`` turns them
into the router's ``Settings``, the ``ConfirmPolicy`` and where each gathering
frame delivers. Every problem is reported at once as a ``Problem`` naming the
option (or vocabulary entry) it belongs to and a ``code`` the form translates.

Option keys (all optional; ``DEFAULTS`` holds the defaults):

- ``listen_mode``: ``wake_word`` or ``always_listening`` at start-up;
- ``query_silence_s``, ``inventory_silence_s``, ``confirm_timeout_s``,
  ``picker_timeout_s``: seconds, 0 switches the timer off;
- ``query_destination``, ``dictation_destination``, ``inventory_destination``:
  one of ``DESTINATIONS``; ``todo_entity`` is the list ``todo`` delivers to;
- ``notes_file``: a file in the ``voicestack`` folder of Home Assistant's config
  directory, as a path relative to that directory (``core/notes_file.py``);
- ``confirm_sensitive``: ask before locks, garage doors, alarms (default on);
  ``confirm_entities``: more entity ids to ask about;
- ``vocabulary``: ``{entry key: phrases}`` overriding ``DEFAULT_PHRASES``;
- ``shortcuts``: ``phrase = script.entity_id`` lines.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Final

from ..notes_file import (
    DEFAULT_NOTES_FILE,
    notes_file_error,
)
from .builtin import Settings
from .hooks import ListenMode
from .sensitive import ConfirmPolicy
from .vocabulary import SHORTCUTS, Problem, Vocabulary, VocabularyError

__all__ = [
    "DEFAULTS",
    "DESTINATIONS",
    "GATHERING_FRAMES",
    "ROUTER_OPTIONS",
    "TIMERS",
    "RouterConfig",
]

DESTINATIONS: Final = ("agent", "notes", "todo", "event", "queue")
GATHERING_FRAMES: Final = ("query", "dictation", "inventory")
TIMERS: Final = (
    "query_silence_s",
    "inventory_silence_s",
    "confirm_timeout_s",
    "picker_timeout_s",
)
MAX_TIMER_S: Final = 3600.0
DEFAULTS: Final[Mapping[str, Any]] = {
    "listen_mode": ListenMode.WAKE_WORD.value,
    "query_silence_s": 3.0,
    "inventory_silence_s": 120.0,
    "confirm_timeout_s": 20.0,
    "picker_timeout_s": 30.0,
    "query_destination": "agent",
    "dictation_destination": "notes",
    "inventory_destination": "notes",
    "todo_entity": "",
    "notes_file": DEFAULT_NOTES_FILE,
    "confirm_sensitive": True,
    "confirm_entities": [],
}

# Every option key the router reads (the rest of an entry's options is not ours).
ROUTER_OPTIONS: Final = (*DEFAULTS, "vocabulary", SHORTCUTS)


@dataclass(frozen=True, slots=True)
class RouterConfig:
    """Everything the glue needs to build one satellite's ``VoiceRouter``."""

    settings: Settings = field(default_factory=Settings)
    policy: ConfirmPolicy = field(default_factory=ConfirmPolicy)
    destinations: Mapping[str, str] = field(
        default_factory=lambda: {
            frame: DEFAULTS[f"{frame}_destination"] for frame in GATHERING_FRAMES
        }
    )
    todo_entity: str | None = None
    notes_file: str = DEFAULTS["notes_file"]

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> RouterConfig:
        """Validate ``options``; raises ``VocabularyError`` listing every problem."""
        values = {**DEFAULTS, **{k: v for k, v in options.items() if k in DEFAULTS}}
        problems: list[Problem] = []
        vocabulary = _vocabulary(options, problems)
        timers = {name: _timer(name, values[name], problems) for name in TIMERS}
        destinations = {
            frame: _destination(frame, values, problems) for frame in GATHERING_FRAMES
        }
        todo_entity = str(values["todo_entity"] or "").strip() or None
        if "todo" in destinations.values() and todo_entity is None:
            problems.append(
                Problem("todo_entity", "choose the to-do list", code="todo_required")
            )
        elif todo_entity is not None and not todo_entity.startswith("todo."):
            problems.append(
                Problem("todo_entity", f"{todo_entity} is not a to-do list", "not_todo")
            )
        notes_file = _notes_file(values["notes_file"], problems)
        listen_mode = values["listen_mode"]
        if listen_mode not in tuple(ListenMode):
            problems.append(
                Problem("listen_mode", f"unknown mode {listen_mode!r}", "invalid")
            )
        if not isinstance(values["confirm_sensitive"], bool):
            problems.append(
                Problem("confirm_sensitive", "must be on or off", code="invalid")
            )
        entities = values["confirm_entities"] or ()
        if not _strings(entities):
            problems.append(
                Problem("confirm_entities", "must be a list of entity ids", "invalid")
            )
        if problems or vocabulary is None:
            raise VocabularyError(problems)
        settings = Settings(
            vocabulary=vocabulary,
            listen_mode=ListenMode(listen_mode),
            query_silence_s=timers["query_silence_s"],
            inventory_silence_s=timers["inventory_silence_s"],
            confirm_timeout_s=timers["confirm_timeout_s"],
            picker_timeout_s=timers["picker_timeout_s"],
        )
        policy = ConfirmPolicy(
            enabled=values["confirm_sensitive"], entities=frozenset(entities)
        )
        return cls(settings, policy, destinations, todo_entity, notes_file)


def _strings(value: Any) -> bool:
    """A list of strings (a string itself is not: it would split into letters)."""
    return isinstance(value, list | tuple) and all(isinstance(v, str) for v in value)


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _phrases(value: Any) -> bool:
    """Form text, or a list of phrases."""
    return isinstance(value, str) or _strings(value)


def _text_map(value: Any, valid: Callable[[Any], bool]) -> bool:
    """A mapping of strings to ``valid`` values."""
    return isinstance(value, Mapping) and all(
        isinstance(key, str) and valid(text) for key, text in value.items()
    )


def _vocabulary(
    options: Mapping[str, Any], problems: list[Problem]
) -> Vocabulary | None:
    """The vocabulary, if its options have the right shape and validate.

    The shape is checked first: hand-edited options must end up as problems,
    not as a ``TypeError`` that keeps the entry from loading.
    """
    phrases = options.get("vocabulary") or {}
    shortcuts = options.get(SHORTCUTS) or {}
    shape: list[Problem] = []
    if not _text_map(phrases, _phrases):
        shape.append(Problem("vocabulary", "must map entries to phrases", "invalid"))
    if not (isinstance(shortcuts, str) or _text_map(shortcuts, _is_text)):
        shape.append(Problem(SHORTCUTS, "must be 'phrase = action' lines", "invalid"))
    if shape:
        problems.extend(shape)
        return None
    try:
        return Vocabulary(phrases, shortcuts)
    except VocabularyError as err:
        problems.extend(err.problems)
        return None


def _seconds(value: Any) -> float | None:
    """``value`` as a number, if it is one (a yes/no is not a number of seconds)."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _timer(name: str, value: Any, problems: list[Problem]) -> float | None:
    """Seconds; 0 (or None) is off."""
    if value is None:
        return None
    seconds = _seconds(value)
    if seconds is None:
        problems.append(Problem(name, f"{value!r} is not a number", "not_a_number"))
        return None
    if not 0 <= seconds <= MAX_TIMER_S:
        problems.append(
            Problem(
                name, f"{seconds:g} s is outside 0 to {MAX_TIMER_S:g}", "out_of_range"
            )
        )
        return None
    return seconds or None


def _destination(frame: str, values: Mapping[str, Any], problems: list[Problem]) -> str:
    key = f"{frame}_destination"
    value = values[key]
    if value not in DESTINATIONS:
        problems.append(
            Problem(key, f"{value!r}: one of {', '.join(DESTINATIONS)}", "invalid")
        )
        return str(DEFAULTS[key])
    return str(value)


def _notes_file(value: Any, problems: list[Problem]) -> str:
    """A file path in the notes folder, normalized (``./`` and ``//`` dropped)."""
    if (error := notes_file_error(value)) is not None:
        problems.append(Problem("notes_file", error, "bad_notes_file"))
        return str(value)
    return str(PurePosixPath(value.strip()))
