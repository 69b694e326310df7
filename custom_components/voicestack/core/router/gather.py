"""Frames that gather speech for one submission: query, raw dictation, inventory.

They share one mechanism (``GatheringFrame``): utterances are kept verbatim as
items; a submit word, the frame's exit phrase or its silence timer submits them to
the frame's target and closes the frame; cancel discards them. If the target
fails, the frame stays with its content (and says so), so nothing is lost; a
target that delivered part of a list keeps only the rest.

- **query**: cancel / submit / read back, then ``CHECK_PARENT`` (the base frame
  takes mode words, shortcuts, "start dictation" ...), then a catch-all that
  appends. Submits after ``silence_s`` without new content (None: never).
- **dictation**: everything verbatim — "cancel", "go", "zero zero zero" are
  content. Only the exit phrase (alone, or ending an utterance) submits and the
  abort phrase discards; no silence timer; exclusive.
- **inventory**: like dictation, for lists: each utterance is one item; a save
  word submits, undo drops the last item, read back lists them; a long silence
  timer also submits. Each item lands in the target separately.
"""

from __future__ import annotations

from collections.abc import Awaitable
import logging
from typing import ClassVar

from .confirm import Deliverer
from .frames import Frame, Plan
from .normalize import hear
from .replies import Replies
from .rules import (
    CHECK_PARENT,
    CatchAllRule,
    Hit,
    Outcome,
    PhraseRule,
    Split,
    frame_action,
    phrase_rules,
)
from .targets import PartialDeliveryError, Submission, Target
from .vocabulary import Vocabulary

__all__ = ["DictationFrame", "GatheringFrame", "InventoryFrame", "QueryFrame"]

_LOGGER = logging.getLogger(__name__)


class GatheringFrame(Frame):
    """Gathers items and submits them to a target."""

    kind: ClassVar[str] = "gathering"  # the frame's name
    as_list: ClassVar[bool] = False  # items are separate entries (inventory)

    def __init__(
        self,
        plan: Plan,
        *,
        target: Target,
        deliver: Deliverer,
        replies: Replies,
        silence_s: float | None,
    ) -> None:
        """Empty, with ``plan`` from the class's ``build_plan`` (shared).

        ``silence_s``: submit after this long without new content (None: never).
        """
        super().__init__(
            self.kind,
            plan,
            expects_speech=True,
            timeout_s=silence_s,
            timer_name="silence",
        )
        self.target = target
        self.deliver = deliver
        self.replies = replies
        self.items: list[str] = []

    @staticmethod
    def build_plan(vocabulary: Vocabulary) -> Plan:
        """The kind's rules, compiled once and shared by its frames."""
        raise NotImplementedError

    def gathered(self) -> str:
        """The items as one text."""
        return " ".join(self.items)

    # -- what the frame does ----------------------------------------------------------

    def append(self, text: str) -> Outcome:
        """Keep ``text`` verbatim; the silence timer starts again."""
        self.items.append(text)
        self.restart_timer()
        return Outcome(reason=f"gathered ({len(self.items)} so far)")

    async def submit(self, why: str) -> Outcome:
        """Deliver everything and close; on failure keep what was not delivered."""
        if not self.items:
            self.stack.pop(self)
            return Outcome(reason=f"{why}; nothing gathered, closed")
        submission = Submission(self.name, tuple(self.items), self.as_list, why)
        try:
            outcome = await self.deliver(self, self.target, submission)
        except PartialDeliveryError as err:
            del self.items[: err.delivered]
            return self._failed(err)
        except Exception as err:
            _LOGGER.exception(
                "%s: delivering to %s failed", self.name, self.target.name
            )
            return self._failed(err)
        return Outcome(
            speak=outcome.speak,
            agent_text=outcome.agent_text,
            reason=f"{why}; {len(submission.items)} item(s), {outcome.reason}",
        )

    def _failed(self, error: Exception) -> Outcome:
        return Outcome(
            speak=self.replies.delivery_failed.format(target=self.target.name) or None,
            reason=f"{self.target.name} failed ({error}); {len(self.items)} item(s) kept",
        )

    def discard(self, why: str) -> Outcome:
        """Close without sending anything."""
        count = len(self.items)
        self.stack.pop(self)
        return Outcome(
            speak=self.replies.cancelled or None,
            reason=f"{why}; {count} item(s) discarded, nothing sent",
        )

    def read_back(self) -> Outcome:
        """Say what was gathered."""
        if not self.items:
            return Outcome(
                speak=self.replies.nothing_yet or None, reason="nothing gathered"
            )
        if self.as_list:
            count = f"{len(self.items)} item" + ("s" if len(self.items) != 1 else "")
            speech = self.replies.read_list.format(
                count=count, items=", ".join(self.items)
            )
        else:
            speech = self.gathered()
        return Outcome(speak=speech, reason=f"read back {len(self.items)} item(s)")

    def undo(self) -> Outcome:
        """Drop the last item."""
        if not self.items:
            return Outcome(
                speak=self.replies.list_empty or None, reason="nothing to remove"
            )
        item = self.items.pop()
        self.restart_timer()
        return Outcome(
            speak=self.replies.removed.format(item=item), reason=f"removed {item!r}"
        )

    async def on_timeout(self) -> Outcome:
        """Silence: submit (an empty frame just closes)."""
        return await self.submit(f"silence for {self.timeout_s:g} s")

    # -- rule actions (plans are shared, so they take the frame from the hit) ----------

    def on_append(self, hit: Hit[GatheringFrame]) -> Outcome:
        """Catch-all: the utterance is content."""
        return self.append(hit.payload)

    async def on_submit(self, hit: Hit[GatheringFrame]) -> Outcome:
        """A submit/exit/save phrase."""
        return await self.submit(f"said {hit.heard.text!r}")

    async def on_submit_after(
        self, hit: Hit[GatheringFrame], wake: PhraseRule | None = None
    ) -> Outcome:
        """An exit phrase ending an utterance: what precedes it is content.

        Except a ``wake`` phrase in front ("Okay Nabu, end dictation." in
        always-listening mode): it called the assistant, it is no note.
        """
        split: Split = hit.payload
        before = split.before
        if wake is not None and (lead := wake.match(hear(before))) is not None:
            before = lead.after
        if hear(before).real:
            self.items.append(before)
        return await self.submit(f"said {split.phrase!r} at the end")

    def on_discard(self, hit: Hit[GatheringFrame]) -> Outcome:
        """Cancel / abort."""
        return self.discard(f"said {hit.heard.text!r}")

    def on_read_back(self, hit: Hit[GatheringFrame]) -> Outcome:
        """Read back."""
        return self.read_back()

    def on_undo(self, hit: Hit[GatheringFrame]) -> Outcome:
        """Undo / scratch that."""
        return self.undo()


_append = frame_action(GatheringFrame.on_append)
_submit = frame_action(GatheringFrame.on_submit)
_discard = frame_action(GatheringFrame.on_discard)
_read_back = frame_action(GatheringFrame.on_read_back)


class QueryFrame(GatheringFrame):
    """A request gathered over several utterances, for the agent by default."""

    kind = "query"

    @staticmethod
    def build_plan(vocabulary: Vocabulary) -> Plan:
        """cancel, submit, read back, CHECK_PARENT, catch-all."""
        return Plan(
            [
                *phrase_rules("cancel", vocabulary["common.cancel"], _discard),
                *phrase_rules("submit", vocabulary["query.submit"], _submit),
                *phrase_rules("read_back", vocabulary["common.read_back"], _read_back),
                CHECK_PARENT,
                CatchAllRule("append", _append),
            ]
        )


class DictationFrame(GatheringFrame):
    """Raw dictation: everything is content until the exit phrase."""

    kind = "dictation"

    @staticmethod
    def build_plan(vocabulary: Vocabulary) -> Plan:
        """exit, abort, exit ending an utterance, catch-all; exclusive."""
        exits = vocabulary["dictation.exit"]
        # Only matched, never run: finds a wake phrase in front of an exit.
        wake = PhraseRule("wake", vocabulary["base.wake"], _discard)

        def exit_after(
            frame: GatheringFrame, hit: Hit[GatheringFrame]
        ) -> Awaitable[Outcome]:
            return frame.on_submit_after(hit, wake)

        return Plan(
            [
                *phrase_rules("exit", exits, _submit),
                *phrase_rules("abort", vocabulary["dictation.abort"], _discard),
                PhraseRule("exit", exits, frame_action(exit_after), at="end"),
                # Only on top: a query opened over it gets the speech.
                CatchAllRule("append", _append, top_only=True),
            ]
        )


class InventoryFrame(GatheringFrame):
    """A spoken list: one item per utterance, saved on the save word."""

    kind = "inventory"
    as_list = True

    @staticmethod
    def build_plan(vocabulary: Vocabulary) -> Plan:
        """save, abort, undo, read back, catch-all; exclusive."""
        return Plan(
            [
                *phrase_rules("save", vocabulary["inventory.save"], _submit),
                *phrase_rules("abort", vocabulary["inventory.abort"], _discard),
                *phrase_rules(
                    "undo",
                    vocabulary["inventory.undo"],
                    frame_action(GatheringFrame.on_undo),
                ),
                *phrase_rules("read_back", vocabulary["common.read_back"], _read_back),
                CatchAllRule("append", _append, top_only=True),
            ]
        )
