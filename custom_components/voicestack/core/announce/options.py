"""Every window, limit and template of the announcer, with the seed's defaults.

``AnnounceOptions`` is frozen: a change is a new object (``dataclasses.replace``
or ``from_dict``) handed to ``set_options``, so a half-edited set is never live.
``validate()`` raises ``AnnounceError`` with ``field`` (the option key) and
``code`` (``invalid_number`` | ``invalid_template`` | ``unknown_option``), which an
options flow turns into a per-field error.

The flat form (``to_dict``/``from_dict``) is what an options flow stores: every
field by name, and one ``template_<category>`` key per summary template.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
import math
import string
from types import MappingProxyType
from typing import Any, Final

from .model import CATEGORIES, MAX_MESSAGE_LENGTH, AnnounceError, Priority

# Per-category summaries of two or more messages. Placeholders: {count} messages,
# {names} their texts (the first few, capped; "… and N more"), {summary} the same
# joined by "; ", {latest} the newest text. One message is always said as written.
DEFAULT_TEMPLATES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "shutdown": "{latest}",
        "error": "{count} errors: {names}",
        "critical": "{count} critical alerts: {names}",
        "warning": "{count} warnings: {names}",
        "ready": "System ready: {names}",
        "init": "{count} components initialized: {names}",
        "health": "Health update: {summary}",
        "progress": "Progress: {latest}",
        "general": "{count} announcements: {names}",
    }
)
PLACEHOLDERS: Final = frozenset({"count", "names", "summary", "latest"})
TEMPLATE_PREFIX: Final = "template_"
_MIN_NAMES_CHARS: Final = 20  # room for one short name and ", and 99 more"


@dataclass(frozen=True, slots=True, kw_only=True)
class AnnounceOptions:
    """The announcer's settings (seconds, counts, characters).

    A zero rate limit, dedup window, coalescing window or idle time switches that
    feature off.
    """

    # Longer messages are cut (with a warning); at most ``MAX_MESSAGE_LENGTH``.
    max_message_length: int = 1000
    queue_max: int = 50  # waiting messages per speaker (high/critical may exceed)
    rate_per_source: float = 5.0  # messages per second per source; bursts of as many
    dedup_s: float = 10.0  # same text + category (or dedup key) within: dropped
    coalesce_window_s: float = 2.0  # a batch is said at most this long after its first
    coalesce_idle_s: float = 0.3  # ... or as soon as nothing arrived for this long
    names_max: int = 3  # names listed in a summary
    names_max_chars: int = 100  # length of the names list, "… and N more" included
    ttl_critical_s: float = 300.0  # how long a message may wait (offline, overload)
    ttl_high_s: float = 300.0
    ttl_normal_s: float = 60.0
    ttl_low_s: float = 30.0
    shutdown_flush_s: float = 5.0  # shutdown: time to say what is queued
    goodbye: str = ""  # shutdown: said last if not empty
    goodbye_timeout_s: float = 5.0  # shutdown: time the goodbye may take
    templates: Mapping[str, str] = field(default_factory=lambda: DEFAULT_TEMPLATES)

    def ttl_s(self, priority: Priority) -> float:
        """The default time to live of a message of ``priority``."""
        return {
            Priority.CRITICAL: self.ttl_critical_s,
            Priority.HIGH: self.ttl_high_s,
            Priority.NORMAL: self.ttl_normal_s,
            Priority.LOW: self.ttl_low_s,
        }[priority]

    def template(self, category: str) -> str:
        """The summary template of ``category`` (override or default)."""
        return self.templates.get(category) or DEFAULT_TEMPLATES[category]

    def validate(self) -> AnnounceOptions:
        """Return self, or raise ``AnnounceError`` naming the first bad field."""
        for name in ("queue_max", "names_max"):
            _check_number(name, getattr(self, name), minimum=1, integer=True)
        _check_number(
            "max_message_length",
            self.max_message_length,
            minimum=1,
            maximum=MAX_MESSAGE_LENGTH,
            integer=True,
        )
        _check_number(
            "names_max_chars",
            self.names_max_chars,
            minimum=_MIN_NAMES_CHARS,
            integer=True,
        )
        for name in (
            "rate_per_source",
            "dedup_s",
            "coalesce_window_s",
            "coalesce_idle_s",
            "shutdown_flush_s",
            "goodbye_timeout_s",
        ):
            _check_number(name, getattr(self, name), minimum=0)
        for priority in Priority:
            name = f"ttl_{priority}_s"
            _check_number(name, getattr(self, name), minimum=0, exclusive=True)
        if not isinstance(self.goodbye, str):
            raise AnnounceError("invalid_text", "goodbye must be text", field="goodbye")
        for category, template in self.templates.items():
            _check_template(category, template)
        return self

    def to_dict(self) -> dict[str, Any]:
        """The flat form: fields by name, effective templates as ``template_*``."""
        data: dict[str, Any] = {
            f.name: getattr(self, f.name) for f in fields(self) if f.name != "templates"
        }
        data.update({TEMPLATE_PREFIX + c: self.template(c) for c in CATEGORIES})
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnnounceOptions:
        """Options from the flat form (missing keys keep defaults), validated."""
        known = {f.name for f in fields(cls)} - {"templates"}
        values: dict[str, Any] = {}
        templates: dict[str, str] = {}
        for key, value in data.items():
            if key in known:
                values[key] = value
            elif key.startswith(TEMPLATE_PREFIX):
                templates[key.removeprefix(TEMPLATE_PREFIX)] = value
            else:
                raise AnnounceError(
                    "unknown_option", f"unknown option {key!r}", field=key
                )
        return cls(**values, templates=MappingProxyType(templates)).validate()


def _check_number(
    name: str,
    value: object,
    *,
    minimum: float,
    maximum: float = math.inf,
    integer: bool = False,
    exclusive: bool = False,
) -> None:
    kinds: tuple[type, ...] = (int,) if integer else (int, float)
    ok = (
        isinstance(value, kinds)
        and not isinstance(value, bool)
        and math.isfinite(value)  # type: ignore[arg-type]
        and (value > minimum if exclusive else value >= minimum)  # type: ignore[operator]
        and value <= maximum  # type: ignore[operator]
    )
    if not ok:
        kind = "a whole number" if integer else "a number"
        bound = f"greater than {minimum}" if exclusive else f"at least {minimum}"
        if maximum < math.inf:
            bound += f" and at most {maximum}"
        raise AnnounceError(
            "invalid_number",
            f"{name} must be {kind} {bound}, got {value!r}",
            field=name,
        )


def _check_template(category: str, template: object) -> None:
    key = TEMPLATE_PREFIX + str(category)
    if category not in CATEGORIES:
        raise AnnounceError(
            "unknown_option", f"no category {category!r} to template", field=key
        )
    if not isinstance(template, str):
        raise AnnounceError("invalid_template", f"{key} must be text", field=key)
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        raise AnnounceError("invalid_template", f"{key}: {err}", field=key) from None
    for _literal, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in PLACEHOLDERS or spec or conversion:
            raise AnnounceError(
                "invalid_template",
                f"{key}: {{{name}}} is not one of "
                + ", ".join(f"{{{p}}}" for p in sorted(PLACEHOLDERS)),
                field=key,
            )
