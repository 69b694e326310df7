"""How long a text may be where it comes in: longer is cut before any work.

A caller may hand an action a megabyte; nothing should look at more than it
will use (splitting a megabyte into sentences alone took minutes).

- A message to be spoken (``voicestack.announce``, a local announce request,
  ``assist_satellite.announce``/``start_conversation``/``ask_question``) is
  said up to the speaker's *Longest message* (an announcer option, 1,000
  characters by default, at most ``MAX_MESSAGE_LENGTH``). The action's schema
  keeps at most one character more than that maximum, so the announcer, which
  cuts to each speaker's own limit, still sees the message was too long and
  logs it (once per call). An assist satellite action knows its speaker, and
  cuts to its limit at once (with the same warning).
- ``start_conversation``'s ``extra_system_prompt`` goes to the agent (often an
  LLM paid per token) and is cut to ``MAX_PROMPT_LENGTH``, with a warning.
- Every other text field of ``voicestack.announce`` (source, dedup key, and
  priority, category and engine, which must name one of a few values anyway)
  is cut to ``MAX_FIELD_LENGTH``.

Cut rather than refused: a message is still worth saying in part, as the
announcer always did; a bad priority or category is still refused with its
translated error, only the value it shows is short.
"""

from __future__ import annotations

from collections.abc import Callable
import logging
from typing import Any, Final

from homeassistant.helpers import config_validation as cv

from .core.announce import MAX_MESSAGE_LENGTH, warn_cut

_LOGGER = logging.getLogger(__name__)

MAX_FIELD_LENGTH: Final = 255  # as Home Assistant's entity ids and states
MAX_PROMPT_LENGTH: Final = 10_000  # as the longest message: a page of context


def cut_to(limit: int) -> Callable[[Any], str]:
    """A schema validator: text (``cv.string``), cut to ``limit`` characters."""

    def cut(value: Any) -> str:
        return cv.string(value[:limit] if isinstance(value, str) else value)[:limit]

    return cut


# ``voicestack.announce``'s message: see the module docstring for the extra one.
cut_message = cut_to(MAX_MESSAGE_LENGTH + 1)


def cut_spoken(message: str, limit: int, source: str) -> str:
    """``message`` cut to ``limit`` (its speaker's *Longest message*), logged."""
    if len(message) <= limit:
        return message
    warn_cut(source, limit)  # the announcer's own words: it sees no cut after this
    return message[:limit]


def cut_prompt(prompt: str, source: str) -> str:
    """An agent's extra system prompt cut to ``MAX_PROMPT_LENGTH``, logged."""
    if len(prompt) <= MAX_PROMPT_LENGTH:
        return prompt
    _LOGGER.warning(
        "Prompt from %s is longer than %d characters; it was cut",
        source,
        MAX_PROMPT_LENGTH,
    )
    return prompt[:MAX_PROMPT_LENGTH]
