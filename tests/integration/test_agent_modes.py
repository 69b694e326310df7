"""Every mode of docs/modes.md through the VoiceStack agent, over both entry points.

Each test runs twice (``person``, see ``entry_points.py``): typed into HA's
websocket ``conversation/process`` (the companion app), and spoken to a stock
Wyoming satellite under HA's own ``wyoming`` integration, the wake word before
every request, its answer heard (the satellite's played audio, transcribed).
Home Assistant's own agent is the wrapped one; real whisper and Piper on the
spoken path. Each step checks what Home Assistant answered (exactly) and what
the person read or heard, then the side effect where Home Assistant keeps it.

The spoken runs are on the newest Home Assistant only (``newest_ha``): they take
about 20 s each; the oldest runs the typed ones and one spoken request
(test_agent_stock_wyoming.py).
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.components.lock import LockState
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import Event, HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.typing import WebSocketGenerator

from custom_components.voicestack.core.router import Replies
from devstack.waiting import wait_for
from tests.integration.assist import FRONT_DOOR, LIGHT, record_unlocks, words
from tests.integration.entry_points import (
    QUESTION,
    SAVED,
    Person,
    answer,
    notes,
    runtime_of,
    stock_entry,
    text_entry,
)
from tests.integration.test_agent import set_options

REPLIES = Replies()
SCRIPT_RAN = "lights_out_ran"


@pytest.fixture(
    params=[
        pytest.param("text"),
        pytest.param("stock", marks=[pytest.mark.e2e, pytest.mark.newest_ha]),
    ]
)
async def person(
    request: pytest.FixtureRequest,
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    hass_ws_client: WebSocketGenerator,
) -> Person:
    """Someone reaching the agent by text, or by voice through a stock satellite."""
    if request.param == "text":
        request.getfixturevalue("config_dir")
        return await text_entry(hass, hass_ws_client)
    return await stock_entry(
        hass,
        stack,
        tmp_path,
        request.getfixturevalue("piper"),
        request.getfixturevalue("whisper"),
    )


async def test_a_command_goes_to_the_wrapped_agent(
    hass: HomeAssistant, person: Person
) -> None:
    await answer(person, "Switch on the kitchen light.", "Turned on the light")

    assert hass.states.get(LIGHT).state == STATE_ON


async def test_a_query_gathers_until_sent(hass: HomeAssistant, person: Person) -> None:
    await set_options(hass, query_silence_s=0)  # sent by word, not on a pause
    await answer(person, "Switch off the kitchen light.", "Turned off the light")
    runtime = runtime_of(hass)
    prefix = f"{runtime.entry.entry_id}-{person.key}-"
    (select,) = [
        e.entity_id
        for e in er.async_entries_for_config_entry(
            er.async_get(hass), runtime.entry.entry_id
        )
        if e.unique_id == f"{prefix}mode"
    ]
    await hass.services.async_call(
        "select", "select_option", {"entity_id": select, "option": "query"}, True
    )

    await answer(person, "Switch on the kitchen light.", "")
    gathered = hass.states.get(LIGHT).state
    await answer(person, "Send it.", "Turned on the light")

    assert gathered == STATE_OFF
    assert hass.states.get(LIGHT).state == STATE_ON


async def test_dictation_writes_the_note(hass: HomeAssistant, person: Person) -> None:
    await answer(person, "Start dictation.", REPLIES.dictation_started)
    await answer(person, "Remember to feed the cat.", "")
    # tiny.en hears Piper's "Saved to your notes." as "Safety your notes." too.
    await answer(person, "Stop dictation.", SAVED, min_ratio=0.5)

    assert words(notes(hass)[-1])[-5:] == ["remember", "to", "feed", "the", "cat"]
    assert hass.states.get(LIGHT).state == STATE_OFF  # nothing went to the agent


async def test_an_inventory_keeps_a_list(hass: HomeAssistant, person: Person) -> None:
    await answer(person, "Start inventory.", REPLIES.inventory_started)
    # tiny.en hears Piper's "eggs" as "thanks" or "x" after the wake word.
    await answer(person, "Two bottles of milk.", "")
    await answer(person, "A loaf of bread.", "")
    await answer(person, "Save inventory.", SAVED, min_ratio=0.5)

    assert [words(line)[-1] for line in notes(hass)[-2:]] == ["milk", "bread"]


async def test_the_voice_picker_has_no_voices_to_offer(
    hass: HomeAssistant, person: Person
) -> None:
    """An agent's device has no voice of VoiceStack's to switch."""
    await answer(person, "Change your voice.", REPLIES.no_voices)

    assert runtime_of(hass).devices[person.key].modes.router.mode == "wake_word"


async def test_unlocking_asks_and_yes_unlocks(
    hass: HomeAssistant, person: Person
) -> None:
    unlocks = record_unlocks(hass)

    await answer(person, "Please unlock the front door.", QUESTION)
    asked = hass.states.get(FRONT_DOOR).state
    # tiny.en hears Piper's lone "Unlocking" as "I'm walking": heard, not checked.
    await answer(person, "Yes please.", "Unlocking", min_ratio=0)
    await hass.async_block_till_done()

    assert asked == LockState.LOCKED
    assert len(unlocks) == 1


async def test_a_late_yes_unlocks_nothing(hass: HomeAssistant, person: Person) -> None:
    await set_options(hass, confirm_timeout_s=1)
    unlocks = record_unlocks(hass)

    await answer(person, "Please unlock the front door.", QUESTION)
    device = runtime_of(hass).devices[person.key]
    await wait_for(lambda: bool(device.pending), 10, "the question expired")
    late = await person.say("Yes please.")
    await hass.async_block_till_done()

    # What expired is said first; the yes is no answer, the base frame sends it
    # on (Home Assistant 2026.3's agent says nothing to "yes please", 2026.11's
    # that it did not understand).
    assert person.said.startswith(REPLIES.confirm_expired), person.said
    assert person.heard_as(late, person.said), late
    assert unlocks == []
    assert device.modes.router.mode == "wake_word"


async def test_a_shortcut_runs_its_script(hass: HomeAssistant, person: Person) -> None:
    ran: list[Event] = []
    hass.bus.async_listen(SCRIPT_RAN, ran.append)
    fire = {"event": SCRIPT_RAN}
    assert await async_setup_component(
        hass, "script", {"script": {"lights_out": {"sequence": [fire]}}}
    )
    await set_options(hass, shortcuts="lights out = script.lights_out")

    await answer(person, "Lights out.", "Done.")
    await hass.async_block_till_done()

    assert len(ran) == 1
    assert hass.states.get(LIGHT).state == STATE_OFF  # the agent was not asked
