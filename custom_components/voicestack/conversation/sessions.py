"""One satellite's follow-up sessions, as Home Assistant sees them.

The loop itself (``core/follow_up.py``) decides when a session goes on and why it
ends; this keeps it for the entry (the voice loop drives it, a sensor shows it),
counts each end by its reason, fires ``voicestack_session_ended`` and tells its
subscribers (the satellite entity drops the session's conversation).

It also keeps the session's post-action buffer (``core/debounce.py``): after a
turn that changed something, the next fragments wait in it and are handed to
the flush subscribers (the voice loop) as one text. Fragments still buffered when
their session ends are dropped, counted and logged: acting on them later, next
to the request that ended the session, would be acting on a stale thought.

The policy comes from the entry's options (the *Conversations* step). Options
stored by hand or by an older version that do not validate fall back to the
defaults, with an error in the log, so the satellite keeps working.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
import logging
from typing import Any

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback

from ..const import EVENT_SESSION_ENDED
from ..core.clock import LoopClock
from ..core.conversation.debounce import (
    OPTION_FIELDS as DEBOUNCE_FIELDS,
    DebouncePolicy,
    FragmentBuffer,
    debounce_from_options,
    is_bypass,
)
from ..core.conversation.follow_up import EndReason, FollowUpLoop, Session
from ..core.conversation.policy import (
    OPTION_FIELDS,
    FollowUpConfigError,
    FollowUpPolicy,
    policy_from_options,
)
from ..hub import SatelliteHub
from ..subscriptions import Subscribers

_LOGGER = logging.getLogger(__name__)


def follow_up_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The entry options that configure the follow-up loop and its buffer."""
    keys = (*OPTION_FIELDS, *DEBOUNCE_FIELDS)
    return {key: options[key] for key in keys if key in options}


def _policies(
    options: Mapping[str, Any], language: str, title: str
) -> tuple[FollowUpPolicy, DebouncePolicy]:
    try:
        return (
            policy_from_options(options, language),
            debounce_from_options(options, language),
        )
    except FollowUpConfigError as err:
        _LOGGER.error("%s: follow-up options ignored: %s", title, err)
        return policy_from_options({}, language), debounce_from_options({}, language)


class Conversations:
    """The follow-up loop of one satellite and what its sessions came to."""

    def __init__(self, hass: HomeAssistant, hub: SatelliteHub) -> None:
        """A loop with the entry's policy; no session yet."""
        self._hass = hass
        self._hub = hub
        self._options = follow_up_options(hub.entry.options)
        # Stop words and emergency phrases default to Home Assistant's language.
        policy, self.debounce = _policies(
            self._options, hass.config.language, hub.entry.title
        )
        clock = LoopClock(hass.loop)
        self.loop = FollowUpLoop(policy, clock, self._ended)
        self.buffer = FragmentBuffer(
            clock, self._flushed, self.debounce.quiet_s, self.debounce.max_s
        )
        self.fragments_dropped = 0
        self._flush_handlers = Subscribers[Callable[[str], None]]()
        self.ends: Counter[EndReason] = Counter()
        # The last session that ended, and why (for the turn that ended it).
        self.last_end: tuple[str, EndReason] | None = None
        self._subscribers = Subscribers[Callable[[Session, EndReason], None]]()

    def options_changed(self, options: Mapping[str, Any]) -> bool:
        """Whether ``options`` configure the loop differently (needs a reload)."""
        return follow_up_options(options) != self._options

    @callback
    def async_subscribe_ended(
        self, listener: Callable[[Session, EndReason], None]
    ) -> CALLBACK_TYPE:
        """Hear every session end; the remover."""
        return self._subscribers.add(listener)

    @callback
    def async_subscribe_flush(self, handler: Callable[[str], None]) -> CALLBACK_TYPE:
        """Hand ``handler`` each flushed buffer (the fragments as one text)."""
        return self._flush_handlers.add(handler)

    def bypasses(self, text: str) -> bool:
        """An emergency phrase: the buffer is flushed and acted on at once."""
        return is_bypass(text, self.debounce.emergency_phrases)

    def close(self) -> None:
        """Unload: an open session ends as cancelled."""
        self.loop.cancel()

    def _flushed(self, text: str) -> None:
        for handler in self._flush_handlers:
            handler(text)
        self._hub.notify()

    def _drop_fragments(self, reason: EndReason) -> None:
        """The session ended: buffered fragments are dropped (counted, logged)."""
        dropped = self.buffer.drop()
        if dropped:
            self.fragments_dropped += len(dropped)
            _LOGGER.info(
                "%s: %d buffered fragment(s) dropped, the session ended (%s): %s",
                self._hub.entry.title,
                len(dropped),
                reason,
                dropped,
            )

    def _ended(self, session: Session, reason: EndReason) -> None:
        self._drop_fragments(reason)
        self.ends[reason] += 1
        self.last_end = (session.id, reason)
        for listener in self._subscribers:
            listener(session, reason)
        self._hass.bus.async_fire(
            EVENT_SESSION_ENDED,
            {
                "entity_id": self._hub.satellite_entity_id(),
                "device_id": self._hub.device_id(),
                "session_id": session.id,
                "turns": session.turn,
                "reason": str(reason),
            },
        )
        self._hub.notify()
