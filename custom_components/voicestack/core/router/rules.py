"""Rules: how a frame tells whether an utterance is its business, and what it does.

A frame holds an ordered list of rules. For each utterance the router asks them in
order: a rule that matches *handles* the utterance (its action runs, dispatch
stops); a rule that does not match passes to the next rule; ``CHECK_PARENT`` hands
the utterance to the frame below and, if nothing there handles it, continues with
the next rule of this frame (so ``CHECK_PARENT`` before a catch-all gives the
parent first refusal).

Rule types:

- ``ExactRule``: the normalized utterance equals one of a set of phrases (a dict
  lookup; consecutive exact rules of a frame share one table).
- ``PhraseRule``: a phrase at the start, at the end or anywhere in the utterance
  (word boundaries); the action gets the verbatim text before and after it.
- ``RegexRule``: a compiled regular expression on the normalized key (or on the
  cleaned text, for verbatim captures).
- ``CatchAllRule``: any utterance with real words (never noise or filler).
- ``CHECK_PARENT``: the sentinel described above.
- ``ClassifierRule``: asks an injected async ``classify(prompt, labels)`` which of
  N labels fits; gives up after its timeout (measured on the router's clock) and
  never waits for a classifier that ignores cancellation.

An action gets a ``Hit`` (the utterance, what the rule matched, the frame, the
stack) and returns an ``Outcome`` (what to say, what to send to the conversation
agent, why) or None, directly or as an awaitable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, replace
import logging
import re
from typing import Any, ClassVar, Final, NamedTuple, Protocol, cast

from ..clock import Cancellable, Clock
from .normalize import Heard, Position, hear

__all__ = [
    "CHECK_PARENT",
    "REGEX_PREFIX",
    "Action",
    "CatchAllRule",
    "Classified",
    "ClassifierRule",
    "ClassifierUnavailableError",
    "Classify",
    "ExactRule",
    "Hit",
    "Miss",
    "Outcome",
    "PhraseRule",
    "RegexRule",
    "Rule",
    "Split",
    "StackControl",
    "frame_action",
    "is_regex",
    "phrase_key",
    "phrase_rules",
]

_LOGGER = logging.getLogger(__name__)

# A vocabulary entry written ``re:<pattern>`` is a regular expression that must
# match the whole normalized utterance.
REGEX_PREFIX: Final = "re:"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What handling an utterance produced.

    ``speak`` is said on the satellite; ``agent_text`` goes to the conversation
    agent (None: nothing does); ``reason`` completes the explanation of the
    decision ("popped query, nothing sent").
    """

    speak: str | None = None
    agent_text: str | None = None
    reason: str = ""


type ActionResult = Outcome | None


class StackControl[F](Protocol):
    """What frames and actions may do to the stack (the router implements it).

    Generic in the frame type ``F`` (``frames.Frame``): frames are built from
    rules, so this module must not import them.
    """

    @property
    def clock(self) -> Clock:
        """The router's clock."""

    @property
    def stack(self) -> tuple[F, ...]:
        """Bottom (base) to top."""

    @property
    def top(self) -> F:
        """The innermost frame."""

    def push(self, frame: F) -> None:
        """Put ``frame`` on top."""

    def pop(self, frame: F | None = None) -> bool:
        """Remove ``frame`` (default: the top) and every frame above it."""

    def after(
        self,
        delay_s: float,
        frame: F,
        name: str,
        callback: Callable[[], ActionResult | Awaitable[ActionResult]],
    ) -> Cancellable:
        """Run ``callback`` as a decision of ``frame`` after ``delay_s``."""

    async def forward(self, text: str) -> Outcome:
        """Dispatch ``text`` through the current stack, inside this decision."""


@dataclass(frozen=True, slots=True)
class Hit[F]:
    """A rule matched: everything its action needs (``F``: the frame type)."""

    heard: Heard
    payload: Any  # what the rule matched (phrase value, Split, re.Match, ...)
    frame: F
    control: StackControl[F]
    rule: Rule


type Action = Callable[[Hit[Any]], ActionResult | Awaitable[ActionResult]]
type Classify = Callable[[str, tuple[str, ...]], Awaitable[str]]


def frame_action[F, R](method: Callable[[F, Hit[F]], R]) -> Callable[[Hit[Any]], R]:
    """An action that calls ``method`` on the frame that matched.

    Plans (compiled rule lists) are shared by every frame of a kind, so actions
    cannot be bound methods; this calls the unbound method with ``hit.frame``.
    """

    def action(hit: Hit[Any]) -> R:
        return method(cast("F", hit.frame), hit)

    action.__name__ = method.__name__
    return action


class Miss(NamedTuple):
    """An async rule did not match, and says why (kept in the explanation)."""

    reason: str


class Split(NamedTuple):
    """Where a ``PhraseRule`` found its phrase, and the verbatim text around it."""

    phrase: str
    value: object
    before: str
    after: str


def is_regex(phrase: str) -> bool:
    """Whether a vocabulary entry is a regular expression (``re:...``)."""
    return phrase.startswith(REGEX_PREFIX)


def phrase_key(phrase: str) -> str:
    """The normalized key of a literal phrase (what exact rules compare)."""
    return hear(phrase).key


class Rule:
    """Base class: a named matcher with an action.

    ``top_only`` rules only apply while their frame is the top of the stack (the
    base frame's agent catch-all must not swallow what a child hands down);
    ``covered_only`` rules only while it is not (always-listening commands count
    only after a wake phrase opened a query above them).
    """

    __slots__ = ("action", "covered_only", "name", "top_only")
    is_async: ClassVar[bool] = False  # the router awaits ``amatch``
    merged: ClassVar[bool] = False  # matches give (rule, payload) of a merged rule

    def __init__(self, name: str, action: Action, *, top_only: bool = False) -> None:
        """``name`` shows in explanations and ``voicestack_utterance`` events."""
        self.name = name
        self.action = action
        self.top_only = top_only
        self.covered_only = False

    def match(self, heard: Heard) -> object | None:
        """What the action gets, or None when the utterance is not for this rule."""
        raise NotImplementedError

    async def amatch(self, heard: Heard, clock: Clock) -> object | None:
        """``match`` for async rules (the router calls this when ``is_async``)."""
        return self.match(heard)

    def why(self, hit: Hit[Any]) -> str:
        """The reason part of an explanation (what matched)."""
        return self.name

    def __repr__(self) -> str:
        """Class and name, for debugging."""
        return f"{type(self).__name__}({self.name!r})"


class ExactRule(Rule):
    """The normalized utterance is one of ``phrases``.

    With a mapping, the action's payload is the phrase's value (e.g. a shortcut's
    action id); otherwise it is the phrase as written.
    """

    __slots__ = ("table",)

    def __init__(
        self,
        name: str,
        phrases: Iterable[str] | Mapping[str, object],
        action: Action,
        *,
        top_only: bool = False,
    ) -> None:
        """Normalize every phrase; an empty one is a programming error."""
        super().__init__(name, action, top_only=top_only)
        items = (
            phrases.items()
            if isinstance(phrases, Mapping)
            else ((p, p) for p in phrases)
        )
        self.table: dict[str, object] = {}
        for phrase, value in items:
            key = phrase_key(phrase)
            if not key or value is None:
                raise ValueError(f"rule {name}: {phrase!r} has no words or no value")
            self.table.setdefault(key, value)

    def match(self, heard: Heard) -> object | None:
        """A dict lookup."""
        return self.table.get(heard.key)

    def why(self, hit: Hit[Any]) -> str:
        """Which phrase."""
        return f"exact phrase '{hit.heard.key}'"


class PhraseRule(Rule):
    """A phrase at the start, at the end or anywhere (word boundaries).

    The payload is a ``Split``: the phrase, its value and the verbatim text before
    and after it. The longest phrase wins where several fit.
    """

    __slots__ = ("at", "phrases")

    def __init__(
        self,
        name: str,
        phrases: Iterable[str] | Mapping[str, object],
        action: Action,
        *,
        at: Position = "start",
        top_only: bool = False,
    ) -> None:
        """Normalize every phrase into its key words."""
        super().__init__(name, action, top_only=top_only)
        items = (
            phrases.items()
            if isinstance(phrases, Mapping)
            else ((p, p) for p in phrases)
        )
        found = [(hear(phrase).keys, phrase, value) for phrase, value in items]
        if any(not keys for keys, _, _ in found):
            raise ValueError(f"rule {name}: a phrase has no words")
        self.phrases = sorted(found, key=lambda item: -len(item[0]))
        self.at: Position = at

    def match(self, heard: Heard) -> Split | None:
        """The first (longest) phrase found where ``at`` says."""
        for keys, phrase, value in self.phrases:
            index = heard.find(keys, self.at)
            if index is not None:
                last = index + len(keys) - 1
                return Split(phrase, value, heard.before(index), heard.after(last))
        return None

    def why(self, hit: Hit[Any]) -> str:
        """Which phrase, where."""
        where = "anywhere" if self.at == "anywhere" else f"at the {self.at}"
        return f"phrase '{hit.payload.phrase}' {where}"


class RegexRule(Rule):
    """A regular expression; the payload is the ``re.Match``.

    It runs on the normalized key (lower case, no punctuation, digits) unless
    ``on="text"`` (the cleaned verbatim text, for captures that keep case).
    ``search`` finds it anywhere; otherwise it must match the whole string.
    """

    __slots__ = ("_find", "_on_text", "on", "pattern")

    def __init__(
        self,
        name: str,
        pattern: str | re.Pattern[str],
        action: Action,
        *,
        on: str = "key",
        search: bool = False,
        top_only: bool = False,
    ) -> None:
        """Compile ``pattern`` now (a bad one fails here, not per utterance)."""
        super().__init__(name, action, top_only=top_only)
        self.pattern = re.compile(pattern)
        self.on = on
        self._on_text = on == "text"
        self._find = self.pattern.search if search else self.pattern.fullmatch

    def match(self, heard: Heard) -> re.Match[str] | None:
        """One compiled match."""
        return self._find(heard.text if self._on_text else heard.key)

    def why(self, hit: Hit[Any]) -> str:
        """Which pattern."""
        return f"pattern '{self.pattern.pattern}'"


class CatchAllRule(Rule):
    """Any utterance with real words; the payload is its cleaned verbatim text."""

    __slots__ = ()

    def match(self, heard: Heard) -> str | None:
        """Never noise, filler or an empty transcript."""
        return heard.text if heard.real else None

    def why(self, hit: Hit[Any]) -> str:
        """Catch-all."""
        return "catch-all (real words)"


class _CheckParent(Rule):
    """The sentinel; the router recognizes it by identity and never calls it."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__("check_parent", lambda _hit: None)

    def match(self, heard: Heard) -> None:
        """Never matches by itself."""
        return


CHECK_PARENT: Final[Rule] = _CheckParent()


class Classified(NamedTuple):
    """A classifier's verdict: the label and how it was reached."""

    label: str
    why: str


class ClassifierUnavailableError(Exception):
    """Raised by ``classify`` when it cannot classify now (e.g. no LLM agent).

    Not a failure: the rule falls back without a warning.
    """


DEFAULT_CLASSIFIER_PROMPT: Final = (
    "Classify the request with exactly one of these labels: {labels}. "
    "Answer with the label only.\nRequest: {text}"
)


def _retrieve(task: asyncio.Task[str]) -> None:
    """Consume the result of an abandoned classification (no 'never retrieved')."""
    if not task.cancelled():
        task.exception()


class ClassifierRule(Rule):
    """Ask an (LLM-backed) ``classify(prompt, labels)`` which label fits.

    ``labels`` maps each label to its action; a label mapped to None means "not
    for this rule" (dispatch goes on with the next rule). The answer is compared
    normalized; an answer that names exactly one label also counts. When the
    classifier fails, answers something else, or does not answer within
    ``timeout_s`` (on the router's clock), ``fallback`` decides: a label whose
    action runs, or None for "no match". Utterances without real words are never
    sent. A classifier that ignores cancellation is abandoned, not awaited.
    """

    __slots__ = ("_keys", "classify", "fallback", "labels", "prompt", "timeout_s")
    is_async: ClassVar[bool] = True

    def __init__(
        self,
        name: str,
        classify: Classify,
        labels: Mapping[str, Action | None],
        *,
        prompt: str = DEFAULT_CLASSIFIER_PROMPT,
        timeout_s: float = 2.0,
        fallback: str | None = None,
        top_only: bool = False,
    ) -> None:
        """``prompt`` may use ``{text}`` and ``{labels}``."""
        super().__init__(name, self._act, top_only=top_only)
        if not labels:
            raise ValueError(f"rule {name}: no labels")
        if fallback is not None and fallback not in labels:
            raise ValueError(f"rule {name}: fallback {fallback!r} is not a label")
        if timeout_s <= 0:
            raise ValueError(f"rule {name}: timeout must be positive")
        self.classify = classify
        self.labels = dict(labels)
        self.prompt = prompt
        self.timeout_s = timeout_s
        self.fallback = fallback
        self._keys = {phrase_key(label): label for label in labels}

    def match(self, heard: Heard) -> object | None:
        """Classification is async only."""
        raise TypeError("ClassifierRule is async: use amatch")

    async def amatch(self, heard: Heard, clock: Clock) -> Classified | Miss | None:
        """Ask, bounded by the timeout; fall back as configured."""
        if not heard.real:
            return None
        answer, why = await self._ask(heard, clock)
        label = None if answer is None else self._resolve(answer)
        if label is None:
            if answer is not None:
                why = f"answer {answer!r} is not a label"
            if self.fallback is None:
                return Miss(f"{why}; no fallback")
            label, why = self.fallback, f"{why}; fallback '{self.fallback}'"
        if self.labels[label] is None:
            return Miss(f"classified as '{label}' ({why}): not handled here")
        return Classified(label, why)

    async def _ask(self, heard: Heard, clock: Clock) -> tuple[str | None, str]:
        labels = tuple(self.labels)
        prompt = self.prompt.format(text=heard.text, labels=", ".join(labels))

        async def call() -> str:
            return await self.classify(prompt, labels)

        loop = asyncio.get_running_loop()
        task = loop.create_task(call())
        expired: asyncio.Future[None] = loop.create_future()

        def expire() -> None:
            if not expired.done():
                expired.set_result(None)

        timer = clock.call_later(self.timeout_s, expire)
        try:
            done, _ = await asyncio.wait(
                (task, expired), return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            timer.cancel()
            expired.cancel()
            if not task.done():
                task.cancel()
                task.add_done_callback(_retrieve)
        if task not in done:
            return None, f"no answer within {self.timeout_s:g} s"
        if task.cancelled():
            return None, "classifier cancelled"
        if isinstance(error := task.exception(), ClassifierUnavailableError):
            return None, f"no classifier: {error}"
        if error is not None:
            _LOGGER.warning("Classifier of rule %s failed: %r", self.name, error)
            return None, f"classifier failed: {error!r}"
        return str(task.result()), "answered"

    def _resolve(self, answer: str) -> str | None:
        heard = hear(answer)
        if heard.key in self._keys:
            return self._keys[heard.key]
        named = [
            label
            for key, label in self._keys.items()
            if heard.find(tuple(key.split()), "anywhere") is not None
        ]
        return named[0] if len(named) == 1 else None

    def _act(self, hit: Hit[Any]) -> ActionResult | Awaitable[ActionResult]:
        action = self.labels[hit.payload.label]
        assert action is not None  # amatch never returns a label without one
        return action(hit)

    def why(self, hit: Hit[Any]) -> str:
        """The label and how it was reached (answered, timeout, fallback)."""
        return f"classified as '{hit.payload.label}' ({hit.payload.why})"


def phrase_rules(
    name: str,
    phrases: Iterable[str] | Mapping[str, object],
    action: Action,
    *,
    top_only: bool = False,
) -> list[Rule]:
    """Rules for a vocabulary entry.

    One exact rule for the plain phrases, one whole-utterance regex rule per
    ``re:`` entry.

    With a mapping (e.g. shortcuts: phrase → action id), a regex entry's action
    gets the entry's value as payload, like an exact phrase would.
    """
    items = dict(phrases) if isinstance(phrases, Mapping) else {p: p for p in phrases}
    plain = {phrase: value for phrase, value in items.items() if not is_regex(phrase)}
    rules: list[Rule] = []
    if plain:
        rules.append(ExactRule(name, plain, action, top_only=top_only))
    for phrase, value in items.items():
        if is_regex(phrase):
            pattern = phrase.removeprefix(REGEX_PREFIX)
            valued = (
                action
                if not isinstance(phrases, Mapping)
                else _with_payload(action, value)
            )
            rules.append(RegexRule(name, pattern, valued, top_only=top_only))
    return rules


def _with_payload(action: Action, value: object) -> Action:
    def valued(hit: Hit[Any]) -> ActionResult | Awaitable[ActionResult]:
        return action(replace(hit, payload=value))

    return valued
