"""``voicestack.enroll_voice`` and ``voicestack.forget_voice``.

Enrolling records a person's voice on one satellite (``enrollment.py``), so
that every satellite's voice gate can tell them from the TV when they talk
over an answer. Forgetting removes it everywhere. Both take a ``person``
entity: the voice belongs to a person of this home, not to a satellite. Both
are for administrators only (like the options' Voices step).
"""

from __future__ import annotations

from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import (
    HomeAssistant,
    ServiceCall,
    ServiceResponse,
    SupportsResponse,
)
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.service import async_register_admin_service
import voluptuous as vol

from ..const import DOMAIN
from ..runtime import runtimes_for_entities
from .enrollment import DEFAULT_PHRASES, async_enroll
from .library import voiceprint_library

ATTR_PERSON = "person"
ATTR_PHRASES = "phrases"
MAX_PHRASES = 10

ENROLL_SCHEMA = vol.Schema(
    {
        vol.Required(ATTR_ENTITY_ID): cv.entity_id,
        vol.Required(ATTR_PERSON): cv.entity_domain("person"),
        vol.Optional(ATTR_PHRASES): vol.All(
            cv.ensure_list,
            vol.Length(min=1, max=MAX_PHRASES),
            [vol.All(cv.string, vol.Strip, vol.Length(min=3, max=200))],
        ),
    }
)
FORGET_SCHEMA = vol.Schema({vol.Required(ATTR_PERSON): cv.entity_domain("person")})


def async_setup_voiceprint_actions(hass: HomeAssistant) -> None:
    """Register ``enroll_voice`` and ``forget_voice``."""

    async def enroll(call: ServiceCall) -> ServiceResponse:
        person = _known_person(hass, call.data[ATTR_PERSON])
        (runtime,) = runtimes_for_entities(hass, [call.data[ATTR_ENTITY_ID]])
        phrases = call.data.get(ATTR_PHRASES) or list(DEFAULT_PHRASES)
        done = await async_enroll(runtime, voiceprint_library(hass), person, phrases)
        return {
            "person": done.voice.person,
            "phrases": len(done.voice.embeddings),
            "seconds": [round(s, 2) for s in done.seconds],
            "quality": done.quality.as_dict(),
        }

    async def forget(call: ServiceCall) -> None:
        person = call.data[ATTR_PERSON]
        if not await voiceprint_library(hass).async_forget(person):
            raise ServiceValidationError(
                translation_domain=DOMAIN,
                translation_key="voice_not_enrolled",
                translation_placeholders={"person": person},
            )

    # A voice is biometric data: only an administrator records or removes one.
    async_register_admin_service(
        hass,
        DOMAIN,
        "enroll_voice",
        enroll,
        schema=ENROLL_SCHEMA,
        supports_response=SupportsResponse.OPTIONAL,
    )
    async_register_admin_service(
        hass, DOMAIN, "forget_voice", forget, schema=FORGET_SCHEMA
    )


def _known_person(hass: HomeAssistant, person: str) -> str:
    """``person`` if it is a person of this Home Assistant."""
    if hass.states.get(person) is None:
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="unknown_person",
            translation_placeholders={"person": person},
        )
    return person
