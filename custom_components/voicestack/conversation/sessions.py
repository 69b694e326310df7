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

The policy comes from the entry's options (the *Conversations* step), read in
``follow_up_shared.py``, which the agent's sessions use too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
import logging
from typing import Any

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback

from ..core.clock import LoopClock
from ..core.conversation.debounce import FragmentBuffer, is_bypass
from ..core.conversation.follow_up import EndReason, FollowUpLoop, Session
from ..follow_up_shared import fire_session_ended, follow_up_options, policies
from ..hub import SatelliteHub
from ..subscriptions import Subscribers

_LOGGER = logging.getLogger(__name__)


class Conversations:
    """The follow-up loop of one satellite and what its sessions came to."""

    def __init__(self, hass: HomeAssistant, hub: SatelliteHub) -> None:
        """A loop with the entry's policy; no session yet."""
        self._hass = hass
        self._hub = hub
        self._options = follow_up_options(hub.entry.options)
        # Stop words and emergency phrases default to Home Assistant's language.
        policy, self.debounce = policies(
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
        fire_session_ended(
            self._hass,
            self._hub.satellite_entity_id(),
            self._hub.device_id(),
            session,
            reason,
        )
        self._hub.notify()
