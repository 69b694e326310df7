"""The *Conversations* step of the options: the follow-up loop's policy as a form.

The form shows the stored policy (the defaults for what is not stored) and
saves only valid values: ``FollowUpPolicy.parse`` checks them, and a bad one is
shown on its field with a translated error (``follow_up_<option>``). Stop words
are one phrase per line in the form and a list in the options.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homeassistant.helpers import selector
import voluptuous as vol

from .core.follow_up_policy import (
    LISTEN_S_RANGE,
    MAX_TURNS_RANGE,
    OPTION_FIELDS,
    FollowUpMode,
    FollowUpPolicy,
    Memory,
    policy_from_options,
)

STOP_WORDS: Final = "follow_up_stop_words"
_FIELD_OF_CODE: Final = {field: key for key, field in OPTION_FIELDS.items()}


def _select(options: type[FollowUpMode] | type[Memory], key: str) -> selector.Selector:
    return selector.SelectSelector(
        selector.SelectSelectorConfig(
            options=[option.value for option in options],
            translation_key=key,
            mode=selector.SelectSelectorMode.DROPDOWN,
        )
    )


def _number(bounds: tuple[float, float], step: float) -> selector.NumberSelectorConfig:
    return selector.NumberSelectorConfig(
        min=bounds[0], max=bounds[1], step=step, mode=selector.NumberSelectorMode.BOX
    )


CONVERSATIONS_SCHEMA: Final = vol.Schema(
    {
        vol.Required("follow_up_mode"): _select(FollowUpMode, "follow_up_mode"),
        vol.Required("follow_up_max_turns"): selector.NumberSelector(
            _number(MAX_TURNS_RANGE, 1)
        ),
        vol.Required("follow_up_memory"): _select(Memory, "follow_up_memory"),
        vol.Required("follow_up_listen_s"): selector.NumberSelector(
            {**_number(LISTEN_S_RANGE, 0.5), "unit_of_measurement": "s"}
        ),
        vol.Optional(STOP_WORDS): selector.TextSelector(
            selector.TextSelectorConfig(multiline=True)
        ),
    }
)


def form_values(options: Mapping[str, Any]) -> dict[str, Any]:
    """What the form shows: the stored policy, the defaults where none is valid."""
    try:
        policy = policy_from_options(options)
    except ValueError:
        policy = FollowUpPolicy()
    return {
        "follow_up_mode": policy.mode.value,
        "follow_up_max_turns": policy.max_turns,
        "follow_up_memory": policy.memory.value,
        "follow_up_listen_s": policy.listen_s,
        STOP_WORDS: "\n".join(policy.stop_words),
    }


def to_options(user_input: Mapping[str, Any]) -> dict[str, Any]:
    """The options to store for the form's values.

    Raises ``FollowUpConfigError`` (``code``: the policy field at fault).
    """
    lines = str(user_input.get(STOP_WORDS, "")).splitlines()
    new = {
        **{
            key: user_input[key]
            for key in CONVERSATIONS_SCHEMA.schema
            if key != STOP_WORDS
        },
        STOP_WORDS: [line.strip() for line in lines if line.strip()],
    }
    policy = policy_from_options(new)
    return {
        "follow_up_mode": policy.mode.value,
        "follow_up_max_turns": policy.max_turns,
        "follow_up_memory": policy.memory.value,
        "follow_up_listen_s": policy.listen_s,
        STOP_WORDS: list(policy.stop_words),
    }


def error_field(code: str) -> str:
    """The form field a ``FollowUpConfigError`` code belongs to."""
    return _FIELD_OF_CODE.get(code, "base")
