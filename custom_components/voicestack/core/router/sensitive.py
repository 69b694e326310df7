"""Which requests must be confirmed by voice before the agent acts on them.

Opening a garage door or unlocking a lock because speech-to-text misheard is worse
than asking once. The glue tells the router which entities a request would touch
(it recognizes the intent without running it); ``sensitive_entities`` picks those
that need a spoken "yes" under the user's ``ConfirmPolicy``:

- every entity of a listed domain (default ``lock``, ``alarm_control_panel``);
- covers that are garage doors, doors or gates (by device class; without one, by
  the entity id naming a garage, door or gate, so blinds are not asked about);
- every entity the user listed.

On by default; ``ConfirmPolicy(enabled=False)`` turns it off.

When the recognizer cannot say in time what a request acts on,
``mentions_sensitive`` is the cheap first pass on the text alone: does it name
an action of a sensitive domain ("unlock", "disarm"), a cover class ("garage",
"door", "gate") or an entity the policy asks about (by its name, an alias or
its object id)? Only then is the request asked about without the full answer.
The action words are English (as the default question is); names match in any
language.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import re
from typing import Final

__all__ = [
    "DEFAULT_QUESTION",
    "ConfirmPolicy",
    "Touched",
    "mentions_sensitive",
    "sensitive_entities",
]

DEFAULT_QUESTION: Final = "Should I {text}? Say yes or no."
# "Please unlock the door" is asked as "Should I unlock the door?".
_POLITE: Final = re.compile(r"^please,?\s+|,?\s+please$", re.IGNORECASE)
_COVER_WORDS: Final = re.compile(r"(?:^|_)(garage|door|gate)(?:s)?(?:_|$)")
_WORD: Final = re.compile(r"\w+")
# What people say to act on a domain; other domains are matched by their name.
_ACTION_WORDS: Final[Mapping[str, frozenset[str]]] = {
    "lock": frozenset(
        {"lock", "locks", "locked", "locking"}
        | {"unlock", "unlocks", "unlocked", "unlocking"}
    ),
    "alarm_control_panel": frozenset(
        {"alarm", "alarms", "arm", "arms", "armed", "arming"}
        | {"disarm", "disarms", "disarmed", "disarming"}
    ),
}


@dataclass(frozen=True, slots=True)
class Touched:
    """An entity a request would act on, with its device class if known."""

    entity_id: str
    device_class: str | None = None
    # What people call it (name, aliases): only the first pass reads them.
    names: tuple[str, ...] = field(default=(), compare=False)

    @property
    def domain(self) -> str:
        """``lock`` of ``lock.front_door``."""
        return self.entity_id.partition(".")[0]


@dataclass(frozen=True, slots=True)
class ConfirmPolicy:
    """What needs a spoken "yes" first (the options flow edits it).

    ``question`` is what the satellite asks; ``{text}`` is the request.
    """

    enabled: bool = True
    domains: frozenset[str] = frozenset({"lock", "alarm_control_panel"})
    cover_classes: frozenset[str] = frozenset({"garage", "door", "gate"})
    entities: frozenset[str] = field(default_factory=frozenset)
    question: str = DEFAULT_QUESTION

    def ask(self, text: str) -> str:
        """The question for request ``text`` ("Should I unlock the front door?")."""
        request = _POLITE.sub("", text.strip().rstrip(".!?")).strip()
        if request[:1].isupper() and not request[1:2].isupper():
            request = request[0].lower() + request[1:]
        return self.question.format(text=request)


def _needs(touched: Touched, policy: ConfirmPolicy) -> bool:
    if touched.entity_id in policy.entities or touched.domain in policy.domains:
        return True
    if touched.domain != "cover":
        return False
    if touched.device_class is not None:
        return touched.device_class in policy.cover_classes
    object_id = touched.entity_id.partition(".")[2]
    match = _COVER_WORDS.search(object_id)
    return match is not None and match.group(1) in policy.cover_classes


def sensitive_entities(
    touched: Iterable[Touched | str], policy: ConfirmPolicy
) -> tuple[str, ...]:
    """The entity ids among ``touched`` that need confirmation (empty: none)."""
    if not policy.enabled:
        return ()
    items = (Touched(item) if isinstance(item, str) else item for item in touched)
    return tuple(item.entity_id for item in items if _needs(item, policy))


def _words(text: str) -> str:
    """``text`` as lower-case words between single spaces, padded with spaces."""
    return f" {' '.join(_WORD.findall(text.casefold()))} "


def _policy_words(policy: ConfirmPolicy) -> set[str]:
    """The words that name a sensitive domain's actions or a sensitive cover."""
    words: set[str] = set()
    for domain in policy.domains:
        words |= _ACTION_WORDS.get(domain, {domain.replace("_", " ")})
    for cover_class in policy.cover_classes:
        words |= {cover_class, f"{cover_class}s"}
    return words


def mentions_sensitive(
    text: str, policy: ConfirmPolicy, known: Iterable[Touched] = ()
) -> bool:
    """Whether ``text`` names something ``policy`` asks about (the first pass).

    ``known`` are the entities that could be meant, with their ``names``; those
    the policy asks about count by each name and by their object id
    (``front_door`` as "front door"), as do the policy's listed entities.
    """
    if not policy.enabled:
        return False
    said = _words(text)
    if any(f" {word} " in said for word in _policy_words(policy)):
        return True
    candidates = (*known, *(Touched(entity_id) for entity_id in policy.entities))
    for entity in candidates:
        if not _needs(entity, policy):
            continue
        object_id = entity.entity_id.partition(".")[2].replace("_", " ")
        for name in (*entity.names, object_id):
            if (words := _words(name)).strip() and words in said:
                return True
    return False
