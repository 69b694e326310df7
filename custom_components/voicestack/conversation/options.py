"""The *Conversations* step of the options: the follow-up loop's policy as a form.

The form shows the stored policy (the defaults for what is not stored) and
saves only valid values: ``FollowUpPolicy.parse`` checks them, and a bad one is
shown on its field with a translated error (``follow_up_<option>``). Stop words
are one phrase per line in the form and a list in the options; the closing is
one line, and an empty field (the form leaves it out) means no closing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from homeassistant.helpers import selector
import voluptuous as vol

from ..core.conversation.debounce import (
    MAX_S_LIMIT,
    OPTION_FIELDS as DEBOUNCE_FIELDS,
    QUIET_S_RANGE,
    DebouncePolicy,
    debounce_from_options,
)
from ..core.conversation.policy import (
    LISTEN_S_RANGE,
    MAX_TURNS_RANGE,
    OPTION_FIELDS,
    FollowUpMode,
    FollowUpPolicy,
    Memory,
    policy_from_options,
)

STOP_WORDS: Final = "follow_up_stop_words"
EMERGENCY: Final = "follow_up_emergency_phrases"
CLOSING: Final = "follow_up_closing"
_PHRASE_FIELDS: Final = (STOP_WORDS, EMERGENCY)
_FIELD_OF_CODE: Final = {
    field: key for key, field in (*OPTION_FIELDS.items(), *DEBOUNCE_FIELDS.items())
}


def _select(
    options: type[FollowUpMode] | type[Memory], key: str
) -> selector.SelectSelector:
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
        vol.Optional(CLOSING): selector.TextSelector(),
        vol.Required("follow_up_quiet_s"): selector.NumberSelector(
            {**_number(QUIET_S_RANGE, 0.1), "unit_of_measurement": "s"}
        ),
        vol.Required("follow_up_max_s"): selector.NumberSelector(
            {
                **_number((QUIET_S_RANGE[0], MAX_S_LIMIT), 0.5),
                "unit_of_measurement": "s",
            }
        ),
        vol.Optional(EMERGENCY): selector.TextSelector(
            selector.TextSelectorConfig(multiline=True)
        ),
    }
)


def form_values(options: Mapping[str, Any], language: str) -> dict[str, Any]:
    """What the form shows: the stored policy.

    Where none is stored, or it is not valid: ``language``'s defaults.
    """
    try:
        policy = policy_from_options(options, language)
        debounce = debounce_from_options(options, language)
    except ValueError:
        policy = policy_from_options({}, language)
        debounce = debounce_from_options({}, language)
    stored = _stored(policy, debounce)
    return {**stored, **{key: "\n".join(stored[key]) for key in _PHRASE_FIELDS}}


def _stored(policy: FollowUpPolicy, debounce: DebouncePolicy) -> dict[str, Any]:
    return {
        "follow_up_mode": policy.mode.value,
        "follow_up_max_turns": policy.max_turns,
        "follow_up_memory": policy.memory.value,
        "follow_up_listen_s": policy.listen_s,
        STOP_WORDS: list(policy.stop_words),
        CLOSING: policy.closing,
        "follow_up_quiet_s": debounce.quiet_s,
        "follow_up_max_s": debounce.max_s,
        EMERGENCY: list(debounce.emergency_phrases),
    }


def to_options(user_input: Mapping[str, Any], language: str) -> dict[str, Any]:
    """The options to store for the form's values.

    Raises ``FollowUpConfigError`` (``code``: the policy field at fault).
    """
    new = {
        **{k: user_input[k] for k in CONVERSATIONS_SCHEMA.schema if k in user_input},
        **{key: _lines(user_input.get(key, "")) for key in _PHRASE_FIELDS},
        CLOSING: user_input.get(CLOSING, ""),
    }
    return _stored(
        policy_from_options(new, language), debounce_from_options(new, language)
    )


def _lines(text: object) -> list[str]:
    return [line.strip() for line in str(text).splitlines() if line.strip()]


def error_field(code: str) -> str:
    """The form field a ``FollowUpConfigError`` code belongs to."""
    return _FIELD_OF_CODE.get(code, "base")
