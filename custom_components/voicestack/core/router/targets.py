"""Dispatch targets: where a frame's content goes when it is submitted.

A gathering frame (query, dictation, inventory) decides *when* to submit; its
``Target`` decides *where*. Every target gets a ``Submission`` (the frame, the
items gathered, whether they are a list, why now) and returns a ``Delivery``: what
to say, what to send to the conversation agent, or a question to ask first.

The adapters here are Home Assistant-free; the glue hands them small callables:

| target | glue provides | a submission becomes |
|---|---|---|
| ``AgentTarget`` | optional ``resolve(text)``: entities the request would touch; ``known()``, ``reused()`` | ``agent_text`` for the voice loop (after a spoken "yes" if sensitive) |
| ``TodoTarget`` | ``add_item(text)`` (``todo.add_item``) | one to-do item per line |
| ``NotesFileTarget`` | a path in ``<config>/voicestack/``, confined to the config dir | timestamped lines, appended under ``RobustFileLock`` |
| ``EventTarget`` | ``fire(event_type, data)`` (``hass.bus.async_fire``) | one ``voicestack_dictation`` event |
| ``QueueTarget`` | a ``DeferredQueue`` (persisted with ``Store``) | one queued entry; ``put`` returns the new length |

*Lines*: a list (inventory) gives one line per item; text (query, dictation) one
line with the items joined by spaces. A target that fails raises; the frame keeps
its content and says so. A target that delivered some lines before failing raises
``PartialDeliveryError(delivered)`` so the frame keeps only the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
import logging
from pathlib import Path
from typing import Any, Protocol

from ..clock import Clock, LoopClock
from ..filelock import append_lines
from .sensitive import ConfirmPolicy, Touched, mentions_sensitive, sensitive_entities

__all__ = [
    "AddItem",
    "AgentTarget",
    "DeferredQueue",
    "Delivery",
    "EntityResolver",
    "EventTarget",
    "FireEvent",
    "KnownEntities",
    "NotesFileTarget",
    "PartialDeliveryError",
    "QueueTarget",
    "Submission",
    "Target",
    "TodoTarget",
]

_LOGGER = logging.getLogger(__name__)

type EntityResolver = Callable[[str], Awaitable[Sequence[Touched | str]]]
type KnownEntities = Callable[[], Iterable[Touched]]
type AddItem = Callable[[str], Awaitable[None]]
type FireEvent = Callable[[str, dict[str, Any]], None]
type Now = Callable[[], datetime]


def local_now() -> datetime:
    """Aware local time (timestamps in notes and queue entries)."""
    return datetime.now(UTC).astimezone()


@dataclass(frozen=True, slots=True)
class Submission:
    """What a frame submits."""

    frame: str  # "query", "dictation", "inventory", "base"
    items: tuple[str, ...]  # each utterance (or list item) verbatim
    as_list: bool = False  # items are separate entries (inventory)
    reason: str = ""  # why now: "said 'end dictation'", "silence for 3 s"

    @property
    def text(self) -> str:
        """The items as one text (a list's items separated by commas)."""
        return (", " if self.as_list else " ").join(self.items)

    def lines(self) -> tuple[str, ...]:
        """One line per item for a list, one line of text otherwise."""
        return self.items if self.as_list else (self.text,)

    def as_dict(self) -> dict[str, Any]:
        """For events and queue entries."""
        return {
            "frame": self.frame,
            "text": self.text,
            "items": list(self.items),
            "as_list": self.as_list,
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class Delivery:
    """What a target did, as far as the satellite is concerned.

    ``confirm``: ask this question first; ``agent_text`` and ``speak`` apply only
    after a spoken "yes" (the router pushes a confirm frame).
    """

    speak: str | None = None
    agent_text: str | None = None
    confirm: str | None = None


class PartialDeliveryError(Exception):
    """A target delivered the first ``delivered`` lines, then failed."""

    def __init__(self, delivered: int, cause: BaseException) -> None:
        """Keep the cause for the message."""
        super().__init__(f"{cause} (after {delivered} delivered)")
        self.delivered = delivered


class Target(Protocol):
    """Where submissions go. ``name`` shows in explanations."""

    name: str

    async def deliver(self, submission: Submission) -> Delivery:
        """Deliver, or raise (the frame keeps the content)."""


class DeferredQueue(Protocol):
    """A persisted queue for later processing (the glue stores it with ``Store``)."""

    async def put(self, entry: dict[str, Any]) -> int:
        """Append ``entry`` durably; the queue's new length."""


class AgentTarget:
    """The conversation agent: the text becomes the route's ``agent_text``.

    With ``resolve``, a request that would touch a sensitive entity (``policy``)
    is asked about first. The check may take ``resolve_timeout_s`` (on
    ``clock``); a check still running then is dropped, and the request is asked
    about only if its text names something sensitive (``mentions_sensitive``,
    with ``known()``'s entity names); otherwise it goes to the agent unasked and
    a warning is logged. Under CPU load the check runs late for every command,
    and asking about each one would make voice control useless.

    ``reused()`` true means the agent will reuse the check's work (Home
    Assistant's default agent recognizes each text once and caches it): the
    check then costs the request no time of its own, so it is awaited to the
    end rather than cut, and the request is recognized once. A check that
    fails (raises) asks: a broken check must not unlock a door.
    """

    name = "agent"

    def __init__(
        self,
        resolve: EntityResolver | None = None,
        policy: ConfirmPolicy | None = None,
        *,
        known: KnownEntities | None = None,
        reused: Callable[[], bool] | None = None,
        clock: Clock | None = None,
        resolve_timeout_s: float = 2.0,
    ) -> None:
        """No ``resolve``: nothing is ever asked about."""
        self.resolve = resolve
        self.policy = policy or ConfirmPolicy()
        self.known = known
        self.reused = reused
        self.clock = clock or LoopClock()
        self.resolve_timeout_s = resolve_timeout_s

    async def deliver(self, submission: Submission) -> Delivery:
        """``agent_text``, or a question first."""
        text = submission.text
        if self.resolve is None or not self.policy.enabled:
            return Delivery(agent_text=text)
        ask = Delivery(agent_text=text, confirm=self.policy.ask(text))
        try:
            touched = await self._check(self.resolve, text)
            if touched is None:
                return ask if self._named_sensitive(text) else Delivery(agent_text=text)
        except Exception:
            _LOGGER.exception("Could not tell what %r would act on; asking first", text)
            return ask
        if sensitive_entities(touched, self.policy):
            return ask
        return Delivery(agent_text=text)

    async def _check(
        self, resolve: EntityResolver, text: str
    ) -> Sequence[Touched | str] | None:
        """What ``text`` would act on; None when the deadline came first."""
        if self.reused is not None and self.reused():
            return await resolve(text)
        check = asyncio.ensure_future(resolve(text))
        expired = False

        def expire() -> None:
            nonlocal expired
            expired = True
            check.cancel()

        timer = self.clock.call_later(self.resolve_timeout_s, expire)
        try:
            return await check
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if expired and (task is None or not task.cancelling()):
                return None
            raise
        finally:
            timer.cancel()

    def _named_sensitive(self, text: str) -> bool:
        """The first pass, when the check ran out of time; logs either way."""
        known = self.known() if self.known is not None else ()
        if mentions_sensitive(text, self.policy, known):
            _LOGGER.warning(
                "Could not tell within %g s what %r would act on; it names"
                " something that needs a yes, so asking first",
                self.resolve_timeout_s,
                text,
            )
            return True
        _LOGGER.warning(
            "Could not tell within %g s what %r would act on; it names nothing"
            " that needs a yes, so it goes to the agent unasked",
            self.resolve_timeout_s,
            text,
        )
        return False


class TodoTarget:
    """A to-do list: one item per line (``todo.add_item`` in the glue)."""

    def __init__(
        self,
        add_item: AddItem,
        *,
        name: str = "todo",
        speak: str = "Added {count} to the list.",
    ) -> None:
        """``speak`` may use ``{count}``."""
        self.add_item = add_item
        self.name = name
        self.speak = speak

    async def deliver(self, submission: Submission) -> Delivery:
        """Add each line in order; a failure says how many made it."""
        lines = submission.lines()
        for delivered, line in enumerate(lines):
            try:
                await self.add_item(line)
            except Exception as err:
                if delivered == 0:
                    raise
                raise PartialDeliveryError(delivered, err) from err
        count = f"{len(lines)} item" + ("s" if len(lines) != 1 else "")
        return Delivery(speak=self.speak.format(count=count))


class NotesFileTarget:
    """A notes file: one ``timestamp<TAB>frame<TAB>line`` per line, appended locked."""

    def __init__(
        self,
        path: str | Path,
        *,
        within: str | Path | None = None,
        name: str = "notes",
        now: Now = local_now,
        lock_timeout_s: float = 5.0,
        speak: str = "Saved to your notes.",
    ) -> None:
        """``path`` is created with its directory on first use.

        With ``within`` (the config directory), ``path`` must lie below it and
        no symbolic link below it is followed at write time: a link planted
        after the options were checked raises ``ConfinementError`` instead of
        redirecting the notes (``open_confined``).
        """
        self.path = Path(path)
        self.within = None if within is None else Path(within)
        self.name = name
        self.now = now
        self.lock_timeout_s = lock_timeout_s
        self.speak = speak

    async def deliver(self, submission: Submission) -> Delivery:
        """All lines in one locked append (line breaks inside become spaces)."""
        stamp = self.now().isoformat(timespec="seconds")
        lines = [
            f"{stamp}\t{submission.frame}\t{' '.join(line.split())}"
            for line in submission.lines()
        ]
        await append_lines(
            self.path, lines, timeout_s=self.lock_timeout_s, within=self.within
        )
        return Delivery(speak=self.speak)


class EventTarget:
    """One Home Assistant bus event per submission (``Submission.as_dict``)."""

    def __init__(
        self,
        fire: FireEvent,
        *,
        event_type: str = "voicestack_dictation",
        name: str = "event",
        speak: str = "Sent.",
    ) -> None:
        """``fire`` is ``hass.bus.async_fire`` (or a wrapper adding the device)."""
        self.fire = fire
        self.event_type = event_type
        self.name = name
        self.speak = speak

    async def deliver(self, submission: Submission) -> Delivery:
        """Fire and confirm."""
        self.fire(self.event_type, submission.as_dict())
        return Delivery(speak=self.speak)


class QueueTarget:
    """The deferred queue: saved now, processed later (an action drains it)."""

    def __init__(
        self,
        queue: DeferredQueue,
        *,
        name: str = "queue",
        now: Now = local_now,
        speak: str = "Saved for later; {length} waiting.",
    ) -> None:
        """``speak`` may use ``{length}``."""
        self.queue = queue
        self.name = name
        self.now = now
        self.speak = speak

    async def deliver(self, submission: Submission) -> Delivery:
        """One entry with a timestamp."""
        entry = submission.as_dict() | {"at": self.now().isoformat(timespec="seconds")}
        length = await self.queue.put(entry)
        return Delivery(speak=self.speak.format(length=length))
