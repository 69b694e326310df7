"""Options: the announcer's windows, limits and templates, per satellite.

The form is built from ``AnnounceOptions`` (one field per option, current values
as defaults) and checked by its ``validate()``: a bad value is reported on its
own field, with a translated message.
"""

from __future__ import annotations

from typing import Any

from homeassistant.config_entries import ConfigFlowResult, OptionsFlow
from homeassistant.helpers import selector
import voluptuous as vol

from .core.announce import AnnounceError, AnnounceOptions

_INTEGERS = frozenset(
    {"max_message_length", "queue_max", "names_max", "names_max_chars"}
)


def _field_selector(name: str, value: Any) -> selector.Selector:
    if isinstance(value, str):
        return selector.TextSelector(selector.TextSelectorConfig(multiline=False))
    return selector.NumberSelector(
        selector.NumberSelectorConfig(
            min=0,
            step=1 if name in _INTEGERS else 0.05,
            mode=selector.NumberSelectorMode.BOX,
        )
    )


def options_schema(current: dict[str, Any]) -> vol.Schema:
    """Every option, with ``current`` values as defaults."""
    return vol.Schema(
        {
            vol.Required(name, default=value): _field_selector(name, value)
            for name, value in current.items()
        }
    )


def _typed(user_input: dict[str, Any]) -> dict[str, Any]:
    """Number selectors give floats; whole-number options want ints."""
    return {
        k: int(v) if k in _INTEGERS and isinstance(v, float) and v.is_integer() else v
        for k, v in user_input.items()
    }


class VoiceStackOptionsFlow(OptionsFlow):
    """Edit the announcer options of one satellite."""

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """One form; errors stay on the offending field."""
        errors: dict[str, str] = {}
        current = {**AnnounceOptions().to_dict(), **self.config_entry.options}
        if user_input is not None:
            data = _typed(user_input)
            try:
                AnnounceOptions.from_dict(data)
            except AnnounceError as err:
                errors[err.field or "base"] = err.code
                current = {**current, **data}
            else:
                return self.async_create_entry(data=data)
        return self.async_show_form(
            step_id="init", data_schema=options_schema(current), errors=errors
        )
