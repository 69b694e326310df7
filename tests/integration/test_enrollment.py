"""Enrolling a voice: the action and the options' Voices step, in a real Home Assistant.

Real Piper says the prompts to a peer that plays them at once and answers each
``voicestack-enroll`` as the test scripts it (``devstack.fake_satellite``): a
voiceprint, or a reason it has none. What is asserted is what Home Assistant
does with that: the prompts said in order, the voice kept and sent to the
satellite, nothing kept when a phrase fails, and a translated error. (The
satellite's own recording and embedding of a real voice: test_barge_in.py and
tests/satellite.)
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
import math
from pathlib import Path

from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import HomeAssistant, ServiceResponse
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.voiceprints.library import voiceprint_library
from devstack import servers
from devstack.fake_satellite import FakeSatellite
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack
import voicestack_protocol as protocol

ALICE = "person.alice"
SATELLITE = "assist_satellite.fake"
PRINT = {"embedding": [0.0, 1.0] + [0.0] * 254, "seconds": 2.5}


async def connected(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    *,
    voiceprint: bool = True,
    alice: bool = True,
) -> tuple[FakeSatellite, str]:
    """A peer that plays at once, VoiceStack on it, and Alice; the entry id.

    ``alice=False``: the test made a real person of her.
    """
    if alice:
        hass.states.async_set(ALICE, "home")
    peer = await stack.enter_async_context(
        FakeSatellite(
            extensions=tuple(protocol.PEER_EVENTS),
            voiceprint=voiceprint,
            auto_played=True,
        )
    )
    entry = await add_voicestack(hass, stack, peer)  # type: ignore[arg-type]
    await wait_for(lambda: peer.running, 10, "run-satellite")
    return peer, entry.entry_id


async def enroll_alice(hass: HomeAssistant) -> ServiceResponse:
    """Call voicestack.enroll_voice for Alice on the peer, as an automation would."""
    return await hass.services.async_call(
        DOMAIN,
        "enroll_voice",
        {"entity_id": SATELLITE, "person": ALICE},
        blocking=True,
        return_response=True,
    )


async def enroll_in_options(hass: HomeAssistant, entry_id: str) -> ConfigFlowResult:
    """Open the options' Voices step and enroll Alice; the flow, in progress."""
    options = hass.config_entries.options
    menu = await options.async_init(entry_id)
    form = await options.async_configure(menu["flow_id"], {"next_step_id": "voices"})
    progress = await options.async_configure(
        form["flow_id"], {"person": ALICE, "action": "enroll"}
    )
    await hass.async_block_till_done(wait_background_tasks=True)
    return progress


async def test_three_phrases_enroll_a_voice_every_satellite_gets(
    hass: HomeAssistant, pipeline: Pipeline, stack: AsyncExitStack
) -> None:
    peer, _entry_id = await connected(hass, stack)
    peer.enroll_answers = [PRINT, PRINT, PRINT]

    response = await enroll_alice(hass)

    assert response == {
        "person": ALICE,
        "phrases": 3,
        "seconds": [2.5, 2.5, 2.5],
        # A peer that says nothing of how it heard the phrases: no margin.
        "quality": {"rating": "unknown", "margin": None, "warnings": {}},
    }
    enrolls = peer.sent(protocol.ENROLL)
    assert [e.data["max_s"] for e in enrolls] == [10.0, 10.0, 10.0]
    # Each prompt was said (and played) before its phrase was asked for.
    kinds = [e.type for e in peer.events if e.type in ("audio-stop", protocol.ENROLL)]
    assert kinds == ["audio-stop", protocol.ENROLL] * 3 + ["audio-stop"]
    (voice,) = voiceprint_library(hass).voiceprints()
    assert voice.embedding[1] == pytest.approx(1.0)
    await wait_for(
        lambda: peer.sent(protocol.BARGE_IN_CONFIG)[-1].data["voiceprints"],
        5,
        "the voiceprint at the satellite",
    )


def heard_print(index: int, **heard: float) -> dict[str, object]:
    """A phrase's answer with how the satellite heard it; ``index``: its direction."""
    embedding = [0.0] * 256
    embedding[0], embedding[index] = 0.98, math.sqrt(1 - 0.98**2)  # a unit vector
    return {
        "embedding": embedding,
        "seconds": 2.5,
        "level_dbfs": -26.0,
        "snr_db": 35.0,
        "cohort_mean": 0.6,
        "cohort_std": 0.03,
    } | heard


async def test_the_action_says_how_good_the_enrollment_is(
    hass: HomeAssistant, pipeline: Pipeline, stack: AsyncExitStack
) -> None:
    peer, _entry_id = await connected(hass, stack)
    peer.enroll_answers = [heard_print(1), heard_print(2), heard_print(3)]

    response = await enroll_alice(hass)

    # Each phrase scores 0.987 against the voiceprint, its closest cohort voices
    # 0.6 +- 0.03: 12.9 deviations over them, nothing to warn about.
    assert response is not None
    assert response["quality"] == {"rating": "good", "margin": 12.9, "warnings": {}}


async def test_a_failed_phrase_keeps_nothing_and_says_why(
    hass: HomeAssistant, pipeline: Pipeline, stack: AsyncExitStack
) -> None:
    peer, _entry_id = await connected(hass, stack)
    peer.enroll_answers = [PRINT, {"error": "too_short"}]

    with pytest.raises(HomeAssistantError) as failed:
        await enroll_alice(hass)

    assert failed.value.translation_key == "enroll_phrase_failed"
    assert str(failed.value) == (
        "Phrase 2 was not enrolled: it was too short: say the whole phrase."
        " Nothing was saved; try again"
    )
    assert voiceprint_library(hass).people == {}


async def test_a_satellite_without_a_gate_cannot_enroll(
    hass: HomeAssistant, pipeline: Pipeline, stack: AsyncExitStack
) -> None:
    await connected(hass, stack, voiceprint=False)
    with pytest.raises(ServiceValidationError) as refused:
        await enroll_alice(hass)
    assert refused.value.translation_key == "voice_gate_unavailable"


async def test_the_options_voices_step_enrolls_and_forgets(
    hass: HomeAssistant, pipeline: Pipeline, stack: AsyncExitStack
) -> None:
    peer, entry_id = await connected(hass, stack)
    peer.enroll_answers = [PRINT, PRINT, PRINT]
    options = hass.config_entries.options

    menu = await options.async_init(entry_id)
    assert "voices" in menu["menu_options"]
    form = await options.async_configure(menu["flow_id"], {"next_step_id": "voices"})
    assert form["type"] is FlowResultType.FORM
    progress = await options.async_configure(
        form["flow_id"], {"person": ALICE, "action": "enroll"}
    )
    assert progress["type"] is FlowResultType.SHOW_PROGRESS
    await hass.async_block_till_done(wait_background_tasks=True)
    await wait_for(lambda: voiceprint_library(hass).people, 30, "the enrollment")
    done = await options.async_configure(progress["flow_id"])
    assert done["type"] is FlowResultType.ABORT
    assert done["reason"] == "voice_enrolled"
    assert done["description_placeholders"] == {"person": ALICE, "margin": "-"}

    menu = await options.async_init(entry_id)
    form = await options.async_configure(menu["flow_id"], {"next_step_id": "voices"})
    forgot = await options.async_configure(
        form["flow_id"], {"person": ALICE, "action": "forget"}
    )
    assert forgot["reason"] == "voice_forgotten"
    assert voiceprint_library(hass).people == {}
    again = await options.async_init(entry_id)
    form = await options.async_configure(again["flow_id"], {"next_step_id": "voices"})
    never = await options.async_configure(
        form["flow_id"], {"person": ALICE, "action": "forget"}
    )
    assert never["reason"] == "voice_not_enrolled"


async def test_the_options_voices_step_warns_of_a_poor_recording(
    hass: HomeAssistant, pipeline: Pipeline, stack: AsyncExitStack
) -> None:
    peer, entry_id = await connected(hass, stack)
    peer.enroll_answers = [
        heard_print(1, seconds=1.1),  # cut short
        heard_print(2, level_dbfs=-47.0, snr_db=9.0),  # soft, over a fan
        heard_print(3, cohort_mean=0.9, cohort_std=0.05),  # like many other voices
    ]
    options = hass.config_entries.options

    progress = await enroll_in_options(hass, entry_id)
    await wait_for(lambda: voiceprint_library(hass).people, 30, "the enrollment")
    done = await options.async_configure(progress["flow_id"])

    assert done["type"] is FlowResultType.ABORT
    assert done["reason"] == "voice_enrolled_warnings"
    assert done["description_placeholders"] == {
        "person": ALICE,
        "short": "1",
        "quiet": "2",
        "noisy": "2",
        "unlike": "-",
        "margin": "9.2",  # (12.9 + 12.9 + 1.7) / 3
    }
    # The voice is kept all the same: the user decides whether to enroll again.
    assert ALICE in voiceprint_library(hass).people


async def test_the_options_voices_step_says_why_enrolling_failed(
    hass: HomeAssistant, pipeline: Pipeline, stack: AsyncExitStack
) -> None:
    peer, entry_id = await connected(hass, stack)
    peer.enroll_answers = [{"error": "no_speech"}]
    options = hass.config_entries.options

    progress = await enroll_in_options(hass, entry_id)
    failed = await options.async_configure(progress["flow_id"])
    while failed["type"] is FlowResultType.SHOW_PROGRESS:
        await asyncio.sleep(0.1)
        failed = await options.async_configure(progress["flow_id"])

    # Whatever ended the enrollment is in the message (CI once saw the phrase
    # never asked for under load: this shows why instead of a bare timeout).
    assert (
        failed.get("description_placeholders", {})
        .get("error", "")
        .startswith("Phrase 1 was not enrolled: nothing was said")
    ), failed
    assert not peer.enroll_answers
    assert failed["type"] is FlowResultType.ABORT
    assert failed["reason"] == "enroll_failed"
    assert voiceprint_library(hass).people == {}


async def test_the_voices_step_needs_a_loaded_satellite(
    hass: HomeAssistant, config_dir: Path
) -> None:
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="away",
        data={CONF_HOST: "127.0.0.1", CONF_PORT: servers.free_port()},
        unique_id="away",
    )
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    assert entry.state is ConfigEntryState.SETUP_RETRY
    options = hass.config_entries.options

    menu = await options.async_init(entry.entry_id)
    aborted = await options.async_configure(menu["flow_id"], {"next_step_id": "voices"})

    assert aborted["type"] is FlowResultType.ABORT
    assert aborted["reason"] == "not_loaded"
