"""Enrolled voices in Home Assistant's storage, and the actions' bad input.

The library keeps one enrollment per person and gives each person's voiceprint
(the normalized mean of their phrases) to the satellites; what it cannot read
back is dropped with a log line. ``enroll_voice`` and ``forget_voice`` answer a
person who does not exist, a target that is no satellite, and a voice that was
never enrolled with translated errors. (Enrolling on a real satellite, and its
voiceprints pausing and stopping real answers: test_barge_in.py.)
"""

from __future__ import annotations

import math
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.storage import Store
from homeassistant.setup import async_setup_component
import pytest
import voluptuous as vol

from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.voiceprints.library import (
    STORAGE_KEY,
    STORAGE_VERSION,
    VoiceprintLibrary,
    voiceprint_library,
)

ALICE = "person.alice"


def unit(index: int, size: int = 256) -> list[float]:
    """A unit vector along axis ``index``."""
    return [1.0 if i == index else 0.0 for i in range(size)]


@pytest.fixture
async def library(hass: HomeAssistant) -> VoiceprintLibrary:
    """VoiceStack set up (no satellites) with a person, and its voice library."""
    hass.states.async_set(ALICE, "home", {"friendly_name": "Alice"})
    assert await async_setup_component(hass, DOMAIN, {})
    return voiceprint_library(hass)


async def test_a_voiceprint_is_the_normalized_mean_and_is_kept(
    hass: HomeAssistant, library: VoiceprintLibrary
) -> None:
    heard: list[int] = []
    library.async_subscribe(lambda: heard.append(len(library.people)))

    voice = await library.async_enroll(ALICE, [unit(0), unit(1)], "Kitchen")

    (print_,) = library.voiceprints()
    assert print_.person == ALICE
    assert print_.embedding[0] == pytest.approx(1 / math.sqrt(2))
    assert print_.embedding[1] == pytest.approx(1 / math.sqrt(2))
    assert sum(v * v for v in print_.embedding) == pytest.approx(1.0)
    assert voice.satellite == "Kitchen"
    assert heard == [1]
    reloaded = VoiceprintLibrary(hass)
    await reloaded.async_load()
    assert reloaded.people[ALICE].embeddings == voice.embeddings

    assert await library.async_forget(ALICE) is True
    assert await library.async_forget(ALICE) is False
    assert library.voiceprints() == []
    assert heard == [1, 0]


@pytest.mark.parametrize(
    ("embeddings", "message"),
    [
        ([], "no embeddings"),
        ([[0.0] * 255], "phrase 1: not a list of 256 numbers"),
        ([[math.nan, *[0.0] * 255]], "phrase 1: holds something"),
        ([["x"] * 256], "phrase 1: holds something"),
    ],
    ids=["none", "short", "nan", "strings"],
)
async def test_a_bad_embedding_is_refused(
    library: VoiceprintLibrary, embeddings: list[Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        await library.async_enroll(ALICE, embeddings, "Kitchen")
    assert library.people == {}


async def test_a_stored_voice_that_does_not_read_is_dropped_with_a_log_line(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    await Store(hass, STORAGE_VERSION, STORAGE_KEY).async_save(
        {
            "voices": {
                ALICE: {"embeddings": [unit(3)], "enrolled_at": "x", "satellite": "K"},
                "person.bob": {"embeddings": [[1.0, 2.0]]},
                "person.carol": {"nothing": True},
            }
        }
    )
    library = VoiceprintLibrary(hass)
    await library.async_load()

    assert list(library.people) == [ALICE]
    assert "Stored voiceprint of person.bob is unusable" in caplog.text
    assert "Stored voiceprint of person.carol is unusable" in caplog.text


async def test_the_actions_refuse_what_they_cannot_do(
    hass: HomeAssistant, library: VoiceprintLibrary
) -> None:
    with pytest.raises(ServiceValidationError) as unknown:
        await hass.services.async_call(
            DOMAIN,
            "enroll_voice",
            {"entity_id": "assist_satellite.nowhere", "person": "person.nobody"},
            blocking=True,
            return_response=True,
        )
    assert unknown.value.translation_key == "unknown_person"
    assert str(unknown.value) == "person.nobody is not a person in Home Assistant"

    with pytest.raises(ServiceValidationError) as no_satellite:
        await hass.services.async_call(
            DOMAIN,
            "enroll_voice",
            {"entity_id": "assist_satellite.nowhere", "person": ALICE},
            blocking=True,
            return_response=True,
        )
    assert no_satellite.value.translation_key == "not_a_satellite_entity"

    with pytest.raises(vol.Invalid):
        await hass.services.async_call(
            DOMAIN,
            "enroll_voice",
            {"entity_id": "assist_satellite.x", "person": ALICE, "phrases": ["hi"]},
            blocking=True,
            return_response=True,
        )
    with pytest.raises(vol.Invalid):
        await hass.services.async_call(
            DOMAIN, "forget_voice", {"person": "light.kitchen"}, blocking=True
        )

    with pytest.raises(ServiceValidationError) as never:
        await hass.services.async_call(
            DOMAIN, "forget_voice", {"person": ALICE}, blocking=True
        )
    assert never.value.translation_key == "voice_not_enrolled"
    assert str(never.value) == "person.alice has no enrolled voice"
