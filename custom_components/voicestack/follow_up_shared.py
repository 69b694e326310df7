"""What a satellite's and an agent's follow-up sessions share, Home Assistant's side.

The policy an entry's options hold (with its post-action buffer's), and the
event a session's end fires. Options stored by hand or by an older version that
do not validate fall back to the defaults, with an error in the log, so the
device keeps working. Outside the ``conversation`` package, which is also the
agent's platform: the agent's sessions (``agent/follow_up.py``) import this.
"""

from __future__ import annotations

from collections.abc import Mapping
import logging
from typing import Any

from homeassistant.core import HomeAssistant, callback

from .const import EVENT_SESSION_ENDED
from .core.conversation.debounce import (
    OPTION_FIELDS as DEBOUNCE_FIELDS,
    DebouncePolicy,
    debounce_from_options,
)
from .core.conversation.follow_up import EndReason, Session
from .core.conversation.policy import (
    OPTION_FIELDS,
    FollowUpConfigError,
    FollowUpPolicy,
    policy_from_options,
)

_LOGGER = logging.getLogger(__name__)


def follow_up_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The entry options that configure the follow-up loop and its buffer."""
    keys = (*OPTION_FIELDS, *DEBOUNCE_FIELDS)
    return {key: options[key] for key in keys if key in options}


def policies(
    options: Mapping[str, Any], language: str, title: str
) -> tuple[FollowUpPolicy, DebouncePolicy]:
    """Both policies of ``options``; the defaults (logged) if either is bad."""
    try:
        return (
            policy_from_options(options, language),
            debounce_from_options(options, language),
        )
    except FollowUpConfigError as err:
        _LOGGER.error("%s: follow-up options ignored: %s", title, err)
        return policy_from_options({}, language), debounce_from_options({}, language)


def follow_up_policy(
    options: Mapping[str, Any], language: str, title: str
) -> FollowUpPolicy:
    """The follow-up policy ``options`` hold; the defaults (logged) if they are bad."""
    return policies(follow_up_options(options), language, title)[0]


@callback
def fire_session_ended(
    hass: HomeAssistant,
    entity_id: str | None,
    device_id: str | None,
    session: Session,
    reason: EndReason,
) -> None:
    """``voicestack_session_ended`` for ``session`` of the device asking."""
    hass.bus.async_fire(
        EVENT_SESSION_ENDED,
        {
            "entity_id": entity_id,
            "device_id": device_id,
            "session_id": session.id,
            "turns": session.turn,
            "reason": str(reason),
        },
    )
