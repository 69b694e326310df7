"""The bounded follow-up loop of one satellite (Home Assistant-free; issue 14).

After an answer the mic may open again without a wake word, so a conversation
can go on. A *session* is the run of turns one wake word started; this module
decides when it goes on and when it ends, and says why (``EndReason``), exactly
once per session, within the limits of a ``FollowUpPolicy`` (follow_up_policy,
with the defaults and their sources). The design note it started from
(seeds/interaction-loop.md) had the right aim, a loop that always ends, and
two flaws avoided here:

- it looked for stop words in the *response*, so an answer that happened to say
  "stop" ended the loop and a user saying "stop" did not; ``is_stop`` looks only
  at what the user said, and at the whole utterance: a stop phrase, then at most
  politeness ("that's all, thanks"), so "stop the music" stays a command;
- it waited for a wake word before every turn, so nothing ended a session that
  nobody answered; here a silence timer ends it after the listen window plus
  ``LISTEN_GRACE_S`` (1 s), on the injected clock.

A request that came while the previous turn was never reported ``answered``
still counts as a turn, so the limit holds whatever the glue misses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
import logging
from typing import Final
import uuid

from ..clock import Cancellable, Clock
from .phrases import POLITENESS
from .policy import FollowUpMode, FollowUpPolicy, Memory, spoken

_LOGGER = logging.getLogger(__name__)

# The satellite may start a request at the very end of its window; the session
# waits this much longer so such a request is still its next turn.
LISTEN_GRACE_S: Final = 1.0
# What may close a question after its mark (quotes, a bracket), and the marks
# that end one: ASCII, fullwidth (CJK) and Arabic.
_CLOSING_MARKS: Final = " \t\n\"')\u00bb\u201d\u2019"
_QUESTION_MARKS: Final = ("?", "\uff1f", "\u061f")


class EndReason(StrEnum):
    """Why a session ended."""

    ANSWERED = "answered"  # single shot, or the agent did not ask back
    MAX_TURNS = "max_turns"
    SILENCE = "silence"  # the listen window passed with no speech
    STOP_WORD = "stop_word"
    WAKE_WORD = "wake_word"  # a new wake word started a new session
    CANCELLED = "cancelled"  # link lost, unload, request dropped


def _only_polite(
    words: tuple[str, ...], polite_words: tuple[tuple[str, ...], ...]
) -> bool:
    while words:
        polite = next((p for p in polite_words if words[: len(p)] == p), None)
        if polite is None:
            return False
        words = words[len(polite) :]
    return True


def asks(answer: str) -> bool:
    """Whether ``answer`` ends in a question ("Shall I check another room?")."""
    return answer.rstrip(_CLOSING_MARKS).endswith(_QUESTION_MARKS)


def _new_session_id() -> str:
    return uuid.uuid4().hex


@dataclass
class Session:
    """One run of turns a wake word (or a window without one) started."""

    id: str
    turn: int  # turns so far, 1-based
    started_at: float  # clock time
    conversation_id: str | None = None


@dataclass(frozen=True, slots=True)
class LoopStatus:
    """What a sensor shows: the open session's turn of its limit, or idle."""

    open: bool
    turn: int
    max_turns: int  # 1 when the mode is off
    mode: FollowUpMode
    session_id: str | None

    @property
    def text(self) -> str:
        """``turn 2 of 3`` or ``idle``."""
        return f"turn {self.turn} of {self.max_turns}" if self.open else "idle"


class FollowUpLoop:
    """The sessions of one satellite, one at a time; see the module."""

    def __init__(
        self,
        policy: FollowUpPolicy,
        clock: Clock,
        on_end: Callable[[Session, EndReason], None],
        new_id: Callable[[], str] = _new_session_id,
    ) -> None:
        """No session until ``begin_turn``; ``on_end`` hears each one end, once."""
        self.policy = policy
        self._stop_words = tuple(map(spoken, policy.stop_words))
        # What may follow a stop phrase and still be one: "stop please", "bye, thanks".
        self._polite = tuple(map(spoken, POLITENESS[policy.language]))
        self._clock = clock
        self._on_end = on_end
        self._new_id = new_id
        self._session: Session | None = None
        self._silence: Cancellable | None = None

    @property
    def status(self) -> LoopStatus:
        """The loop's state for a sensor."""
        session, policy = self._session, self.policy
        limit = 1 if policy.mode is FollowUpMode.OFF else policy.max_turns
        return LoopStatus(
            open=session is not None,
            turn=session.turn if session else 0,
            max_turns=limit,
            mode=policy.mode,
            session_id=session.id if session else None,
        )

    def begin_turn(self, woken: bool) -> Session:
        """A request starts: the open session's next turn, or a new session.

        A wake word always starts a new session (an open one ends with
        WAKE_WORD first). A request without one (a listen window) is the open
        session's next turn, or a new session if none is open. A request that
        came while a turn was never reported ``answered`` still counts as a
        turn, so the limit holds.
        """
        if woken:
            self._end(EndReason.WAKE_WORD)
        session = self._session
        if session is None:
            session = Session(self._new_id(), 1, self._clock.now())
            self._session = session
        else:
            self._cancel_silence()
            session.turn += 1
        _LOGGER.debug("Follow-up session %s: turn %d", session.id, session.turn)
        return session

    def hold(self) -> None:
        """Speech in the window that is no turn yet (a buffered fragment).

        The silence timer stops: the session waits for the turn the fragments
        will make, which ``begin_turn`` then counts once.
        """
        self._cancel_silence()

    def is_stop(self, text: str) -> bool:
        """Whether the user's whole utterance ``text`` is a stop phrase.

        A stop phrase alone, or followed only by politeness ("please",
        "thanks", "thank you"): "Stop!", "That's all, thanks". Anything else
        after it makes a command ("stop the music"), and so does anything before
        it ("please stop" is not one; filler aside).
        """
        words = spoken(text)
        return any(
            words[: len(stop)] == stop
            and _only_polite(words[len(stop) :], self._polite)
            for stop in self._stop_words
        )

    def stop(self) -> None:
        """The user said a stop phrase: the session ends with STOP_WORD."""
        self._end(EndReason.STOP_WORD)

    def conversation_id(self) -> str | None:
        """The conversation id for this turn's agent call (None: a new one)."""
        if self.policy.memory is Memory.INDEPENDENT or self._session is None:
            return None
        return self._session.conversation_id

    def remember(self, conversation_id: str | None) -> None:
        """The agent answered in ``conversation_id``: shared memory keeps it."""
        if self.policy.memory is Memory.SHARED and self._session is not None:
            self._session.conversation_id = conversation_id

    def closing(self, answer: str, agent_asked_back: bool) -> str:
        """What to say after ``answer``: the policy's closing, or "" for nothing.

        The closing ("Say the wake word to go on.") is said when the answer
        wants a reply (the agent asked back, or it ends in a question) and
        ``answered`` will end the session at the turn limit: nobody listens
        any more, and without it the question would hang in the room.
        """
        wants_reply = agent_asked_back or asks(answer)
        if not wants_reply or self._ending(agent_asked_back) is not EndReason.MAX_TURNS:
            return ""
        return self.policy.closing

    def answered(self, agent_asked_back: bool) -> float | None:
        """The turn's answer was said: the listen window to open, or None.

        None ends the session: ANSWERED when the mode is off or the agent did
        not ask back in agent mode, MAX_TURNS at the limit. Otherwise the
        session waits ``listen_s`` + ``LISTEN_GRACE_S`` for its next turn and
        then ends with SILENCE.
        """
        if self._session is None:
            return None
        if (reason := self._ending(agent_asked_back)) is not None:
            self._end(reason)
            return None
        self._cancel_silence()
        self._silence = self._clock.call_later(
            self.policy.listen_s + LISTEN_GRACE_S, lambda: self._end(EndReason.SILENCE)
        )
        return self.policy.listen_s

    def _ending(self, agent_asked_back: bool) -> EndReason | None:
        """Why the open session ends once this turn is answered (None: it goes on)."""
        session, policy = self._session, self.policy
        if policy.mode is FollowUpMode.OFF or (
            policy.mode is FollowUpMode.AGENT and not agent_asked_back
        ):
            return EndReason.ANSWERED
        if session is not None and session.turn >= policy.max_turns:
            return EndReason.MAX_TURNS
        return None

    def nothing_heard(self) -> None:
        """A request in the window held no words (a noise): SILENCE ends it.

        The satellite's window was used up by that request, so no next turn
        can come without a wake word.
        """
        self._end(EndReason.SILENCE)

    def cancel(self) -> None:
        """The link was lost, the entry unloads or the request was dropped."""
        self._end(EndReason.CANCELLED)

    def _cancel_silence(self) -> None:
        if self._silence is not None:
            self._silence.cancel()
            self._silence = None

    def _end(self, reason: EndReason) -> None:
        """End the open session (if any) and tell ``on_end``, once."""
        session = self._session
        if session is None:
            return
        self._session = None
        self._cancel_silence()
        _LOGGER.debug(
            "Follow-up session %s ended after %d turn(s): %s",
            session.id,
            session.turn,
            reason,
        )
        self._on_end(session, reason)
