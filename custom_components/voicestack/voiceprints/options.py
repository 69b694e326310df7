"""The options' "Voices" step: enroll or forget a person's voice on this satellite.

The same as ``voicestack.enroll_voice`` and ``forget_voice``, from the
satellite's options: pick a person, then the satellite asks them to read a few
phrases while the form shows progress; the result (or why it failed) ends the
flow, with how good the recording was: the phrases that were too short, too
quiet, too noisy or unlike the others, and how far the voice stands from the
gate's cohort of other voices (``core/enrollment_quality.py``). Nothing here is an option of the entry: voices are kept per person in
``library.py``, for every satellite.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult, OptionsFlow
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import selector
import voluptuous as vol

from ..core.enrollment_quality import EnrollmentQuality
from .enrollment import Enrollment, async_enroll
from .library import voiceprint_library

PERSON: Final = "person"
ACTION: Final = "action"
ENROLL: Final = "enroll"
FORGET: Final = "forget"
VOICES_SCHEMA: Final = vol.Schema(
    {
        vol.Required(PERSON): selector.EntitySelector(
            selector.EntitySelectorConfig(domain="person")
        ),
        vol.Required(ACTION, default=ENROLL): selector.SelectSelector(
            selector.SelectSelectorConfig(
                options=[ENROLL, FORGET], translation_key="voice_action"
            )
        ),
    }
)


class VoiceSteps(OptionsFlow):
    """The steps ``voices`` (the form), ``enroll`` (progress) and their endings."""

    _person: str = ""
    _enrolling: asyncio.Task[Enrollment] | None = None
    _failure: str = ""
    _quality: EnrollmentQuality | None = None

    async def async_step_voices(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Whose voice, and whether to enroll or forget it."""
        if self.config_entry.state is not ConfigEntryState.LOADED:
            return self.async_abort(reason="not_loaded")
        if user_input is None:
            people = len(voiceprint_library(self.hass).people)
            return self.async_show_form(
                step_id="voices",
                data_schema=VOICES_SCHEMA,
                description_placeholders={"enrolled": str(people)},
            )
        self._person = user_input[PERSON]
        if user_input[ACTION] == FORGET:
            forgotten = await voiceprint_library(self.hass).async_forget(self._person)
            return self.async_abort(
                reason="voice_forgotten" if forgotten else "voice_not_enrolled",
                description_placeholders={PERSON: self._person},
            )
        return await self.async_step_enroll()

    async def async_step_enroll(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The satellite asks for the phrases; the form shows progress meanwhile."""
        if self._enrolling is None:
            self._enrolling = self.hass.async_create_task(
                async_enroll(
                    self.config_entry.runtime_data,
                    voiceprint_library(self.hass),
                    self._person,
                )
            )
        if not self._enrolling.done():
            return self.async_show_progress(
                step_id="enroll",
                progress_action="enrolling",
                progress_task=self._enrolling,
                description_placeholders={PERSON: self._person},
            )
        try:
            self._quality = self._enrolling.result().quality
        except HomeAssistantError as err:
            self._failure = str(err)
            return self.async_show_progress_done(next_step_id="enroll_failed")
        return self.async_show_progress_done(next_step_id="enrolled")

    async def async_step_enrolled(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Done: every satellite knows the voice now; how good the recording was."""
        quality = self._quality
        assert quality is not None
        margin = "-" if quality.margin is None else f"{quality.margin:.1f}"
        placeholders = {PERSON: self._person, "margin": margin}
        if not quality.warnings:
            return self.async_abort(
                reason="voice_enrolled", description_placeholders=placeholders
            )
        for kind in ("short", "quiet", "noisy", "unlike"):
            numbers = getattr(quality, kind)
            placeholders[kind] = ", ".join(map(str, numbers)) if numbers else "-"
        return self.async_abort(
            reason="voice_enrolled_warnings", description_placeholders=placeholders
        )

    async def async_step_enroll_failed(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Why it failed; nothing was kept."""
        return self.async_abort(
            reason="enroll_failed", description_placeholders={"error": self._failure}
        )
