"""Turn a burst of messages into one utterance: when (the window) and what (text).

**When** (``CoalesceWindow``): a window opens with the first message of a batch
and closes ``coalesce_window_s`` later at the latest, or earlier once nothing
arrived for ``coalesce_idle_s``. One timer per batch: arrivals only move the idle
deadline, and the timer re-arms itself if it fires before the current deadline,
so a flood costs no timer churn. A batch that is ready while the speaker is
busy or offline stays ready; whatever arrives meanwhile joins it.

**What** (``compose``):

- *supersession*: lifecycle states make lower ones stale (``model.SUPERSEDES``:
  shutdown beats ready, init, health and progress; ready beats init and
  progress); events (error, critical, warning, general) are never stale;
- a batch of one message is said exactly as written;
- otherwise one sentence per category, the most important first (priority, then
  the category's priority): a category with one message says it as written,
  several use the category's template with ``{count}``, ``{names}`` (first
  ``names_max`` texts, at most ``names_max_chars`` characters, ", and N more"),
  ``{summary}`` (the same joined by "; ") and ``{latest}``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from ..clock import Cancellable, Clock
from .model import EPSILON_S, SUPERSEDES, Announcement
from .options import AnnounceOptions

_SENTENCE_END: Final = (".", "!", "?", "…")
# Not "… and N more": a sentence splitter ends a sentence at "…", and
# wyoming-piper says nothing for a sentence that starts with it.
_MORE: Final = ", and {} more"


class CoalesceWindow:
    """Says when the current batch is ready; calls ``on_ready`` once per batch."""

    def __init__(
        self, clock: Clock, options: AnnounceOptions, on_ready: Callable[[], None]
    ) -> None:
        """Windows follow ``options``; ``on_ready`` runs when a batch is ready."""
        self._clock = clock
        self.options = options
        self._on_ready = on_ready
        self._opened_at: float | None = None
        self._last_at = 0.0
        self._ready = False
        self._timer: Cancellable | None = None

    @property
    def ready(self) -> bool:
        """The current batch may be said now."""
        return self._ready

    @property
    def open(self) -> bool:
        """A batch is being collected (ready or not)."""
        return self._opened_at is not None

    def arrived(self) -> None:
        """A message joined the batch (opens the window if none is open)."""
        now = self._clock.now()
        self._last_at = now
        if self._opened_at is None:
            self._opened_at = now
            self._arm(self._deadline())

    def flush_now(self) -> None:
        """Make the batch ready at once (shutdown, messages back from a lost link)."""
        if self._opened_at is None:
            self._opened_at = self._last_at = self._clock.now()
        self._set_ready()

    def reset(self) -> None:
        """The batch was taken: the next message opens a new window."""
        self._cancel()
        self._opened_at = None
        self._ready = False

    def _deadline(self) -> float:
        assert self._opened_at is not None
        deadline = self._opened_at + self.options.coalesce_window_s
        if self.options.coalesce_idle_s > 0:
            deadline = min(deadline, self._last_at + self.options.coalesce_idle_s)
        return deadline

    def _arm(self, at: float) -> None:
        self._timer = self._clock.call_later(at - self._clock.now(), self._fire)

    def _fire(self) -> None:
        self._timer = None
        if self._opened_at is None or self._ready:
            return
        deadline = self._deadline()
        if self._clock.now() + EPSILON_S < deadline:
            self._arm(deadline)  # something arrived since: the idle time restarts
            return
        self._set_ready()

    def _set_ready(self) -> None:
        self._cancel()
        if not self._ready:
            self._ready = True
            self._on_ready()

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def superseded_by(categories: Iterable[str]) -> frozenset[str]:
    """The categories made stale by any of ``categories``."""
    stale: set[str] = set()
    for category in categories:
        stale |= SUPERSEDES.get(category, frozenset())
    return frozenset(stale)


@dataclass(frozen=True, slots=True)
class Composition:
    """One utterance: its text, the messages it carries, those that went stale."""

    text: str
    items: tuple[Announcement, ...]  # in the order they are spoken
    stale: tuple[Announcement, ...]


def compose(items: Sequence[Announcement], options: AnnounceOptions) -> Composition:
    """The utterance for a batch (arrival order); see the module docstring."""
    stale_categories = superseded_by({item.category for item in items})
    kept = [item for item in items if item.category not in stale_categories]
    stale = tuple(item for item in items if item.category in stale_categories)
    if len(kept) == 1:
        return Composition(kept[0].text, (kept[0],), stale)
    groups: dict[str, list[Announcement]] = {}
    for item in kept:
        groups.setdefault(item.category, []).append(item)
    ordered = sorted(
        groups.values(),
        key=lambda group: (
            -max(item.priority.rank for item in group),
            -group[0].category_priority,
            group[0].seq,
        ),
    )
    text = " ".join(_sentence(group, options) for group in ordered)
    return Composition(text, tuple(item for group in ordered for item in group), stale)


def _sentence(group: list[Announcement], options: AnnounceOptions) -> str:
    if len(group) == 1:
        text = group[0].text
    else:
        texts = [_bare(item.text) for item in group]
        cap = (options.names_max, options.names_max_chars)
        text = options.template(group[0].category).format(
            count=len(group),
            names=cap_names(texts, *cap),
            summary=cap_names(texts, *cap, separator="; "),
            latest=texts[-1],
        )
    return text if text.endswith(_SENTENCE_END) else f"{text}."


def cap_names(
    names: Sequence[str], max_names: int, max_chars: int, *, separator: str = ", "
) -> str:
    """The first ``max_names`` names within ``max_chars``, then ", and N more".

    Fewer names are listed if they would not fit; a single name that does not
    fit is cut at a word boundary.
    """
    shown = max(1, min(max_names, len(names)))
    while True:
        more = _MORE.format(len(names) - shown) if shown < len(names) else ""
        listed = separator.join(names[:shown])
        if len(listed) + len(more) <= max_chars or shown == 1:
            break
        shown -= 1
    room = max_chars - len(more)
    if len(listed) > room:
        # "…" marks the cut, unless ", and N more" follows anyway.
        listed = _cut(listed, room if more else room - 1) + ("" if more else "…")
    return listed + more


def _cut(text: str, limit: int) -> str:
    cut = text[: max(0, limit)]
    if " " in cut and len(text) > limit and text[limit] != " ":
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;")


def _bare(text: str) -> str:
    """A message as a list item: without its final full stop."""
    return text.rstrip(".!").rstrip() or text
