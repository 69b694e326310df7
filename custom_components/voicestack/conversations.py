"""One satellite's follow-up sessions, as Home Assistant sees them.

The loop itself (``core/follow_up.py``) decides when a session goes on and why it
ends; this keeps it for the entry (the voice loop drives it, a sensor shows it),
counts each end by its reason, fires ``voicestack_session_ended`` and tells its
subscribers (the satellite entity drops the session's conversation).

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

from .const import EVENT_SESSION_ENDED
from .core.clock import LoopClock
from .core.follow_up import EndReason, FollowUpLoop, Session
from .core.follow_up_policy import (
    OPTION_FIELDS,
    FollowUpConfigError,
    FollowUpPolicy,
    policy_from_options,
)
from .hub import SatelliteHub
from .subscriptions import Subscribers

_LOGGER = logging.getLogger(__name__)


def follow_up_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The entry options that configure the follow-up loop."""
    return {key: options[key] for key in OPTION_FIELDS if key in options}


def _policy(options: Mapping[str, Any], title: str) -> FollowUpPolicy:
    try:
        return policy_from_options(options)
    except FollowUpConfigError as err:
        _LOGGER.error("%s: follow-up options ignored: %s", title, err)
        return FollowUpPolicy()


class Conversations:
    """The follow-up loop of one satellite and what its sessions came to."""

    def __init__(self, hass: HomeAssistant, hub: SatelliteHub) -> None:
        """A loop with the entry's policy; no session yet."""
        self._hass = hass
        self._hub = hub
        self._options = follow_up_options(hub.entry.options)
        self.loop = FollowUpLoop(
            _policy(self._options, hub.entry.title),
            LoopClock(hass.loop),
            self._ended,
        )
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

    def close(self) -> None:
        """Unload: an open session ends as cancelled."""
        self.loop.cancel()

    def _ended(self, session: Session, reason: EndReason) -> None:
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
