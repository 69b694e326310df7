"""Voice modes in Home Assistant: the router glue against a real satellite.

A real satellite subprocess (hearing silence) keeps the entry loaded; the router
is driven with text (``router.dispatch``), the mode select and the actions, and
what it delivers is checked where Home Assistant keeps it: the notes file under
the config directory, a real to-do list, the bus, the deferred queue's ``Store``,
a real script, a real lock the default agent recognizes. Without a TTS engine
the satellite cannot say the replies (a warning); the voice picker test sets up
real Piper to list its voices.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime
import json
import logging
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.components.assist_pipeline import (
    async_get_pipeline,
)
from homeassistant.components.homeassistant.exposed_entities import (
    async_expose_entity,
)
from homeassistant.components.tts.helper import get_engine_instance
from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import Event, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import device_registry as dr
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.voicestack.const import DOMAIN, EVENT_DICTATION
from custom_components.voicestack.core.router import Decision, Replies, Touched
from custom_components.voicestack.core.router.route import Utterance
from custom_components.voicestack.diagnostics import (
    async_get_config_entry_diagnostics,
)
from custom_components.voicestack.hub import SatelliteHub
from custom_components.voicestack.modes.recognize import EntityResolver
from custom_components.voicestack.modes.voice_modes import SHORTCUT_DONE, VoiceModes
from custom_components.voicestack.runtime import SatelliteRuntime
from devstack import servers, speech
from devstack.satellite import RunningSatellite, satellite
from devstack.servers import VOICE
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.agents import use_agent
from tests.integration.assist import (
    FRONT_DOOR,
    LIGHT,
    add_voicestack,
    set_up_assist,
    set_up_home,
)

SATELLITE = "assist_satellite.test_satellite"
CONNECTED = "binary_sensor.test_satellite_connectivity"
MODE = "select.test_satellite_voice_mode"
GATHERED = "sensor.test_satellite_gathered_text"
QUEUE = "sensor.test_satellite_deferred_queue"
SHOPPING_LIST = "todo.shopping_list"
SCRIPT_RAN = "input_boolean.lights_out_ran"
# Queries are submitted by "go" or the action, never by a silence timer mid-test.
NO_SILENCE = {"query_silence_s": 0}
REPLIES = Replies()


@dataclass(slots=True)
class Loaded:
    """A loaded VoiceStack entry and the satellite process behind it."""

    hass: HomeAssistant
    entry: MockConfigEntry
    process: RunningSatellite

    @property
    def runtime(self) -> SatelliteRuntime:
        """The entry's runtime data (new after a reload)."""
        return runtime_of(self.entry)

    @property
    def hub(self) -> SatelliteHub:
        """The entry's hub."""
        return self.runtime.hub

    @property
    def modes(self) -> VoiceModes:
        """The entry's voice modes."""
        return self.runtime.modes

    async def say(self, *texts: str) -> Decision:
        """Dispatch each transcript in turn; the last decision."""
        decision = None
        for text in texts:
            decision = await self.modes.router.dispatch(text)
        assert decision is not None
        return decision

    def state(self, entity_id: str) -> str:
        """An entity's state."""
        state = self.hass.states.get(entity_id)
        assert state is not None, entity_id
        return state.state

    def attribute(self, entity_id: str, name: str) -> Any:
        """An attribute of an entity's state."""
        state = self.hass.states.get(entity_id)
        assert state is not None, entity_id
        return state.attributes.get(name)


type Start = Callable[..., Awaitable[Loaded]]


@pytest.fixture
async def stack(hass: HomeAssistant) -> AsyncIterator[AsyncExitStack]:
    """Unloads entries and stops processes at the end of the test (before hass)."""
    async with AsyncExitStack() as exit_stack:
        yield exit_stack


@pytest.fixture
def start(
    hass: HomeAssistant, tmp_path: Path, config_dir: Path, stack: AsyncExitStack
) -> Start:
    """Start a satellite hearing silence and load its entry with ``options``."""

    async def start(**options: Any) -> Loaded:
        mic = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
        sat = await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic))
        )
        entry = await add_voicestack(hass, stack, sat, options=options)
        assert entry.state is ConfigEntryState.LOADED
        loaded = Loaded(hass, entry, sat)
        await wait_for(lambda: loaded.state(CONNECTED) == STATE_ON, 10, "connected")
        return loaded

    return start


async def action(hass: HomeAssistant, name: str, **data: Any) -> dict[str, Any]:
    """Call ``voicestack.<name>`` on the test satellite; its response."""
    response = await hass.services.async_call(
        DOMAIN,
        name,
        {"entity_id": SATELLITE, **data},
        blocking=True,
        return_response=True,
    )
    assert response is not None
    return dict(response)


async def select_mode(hass: HomeAssistant, option: str) -> None:
    """Choose ``option`` on the voice mode select."""
    await hass.services.async_call(
        "select",
        "select_option",
        {"entity_id": MODE, "option": option},
        blocking=True,
    )


def record(hass: HomeAssistant, event_type: str) -> list[Event]:
    """Events of ``event_type`` from now on."""
    events: list[Event] = []
    hass.bus.async_listen(event_type, events.append)
    return events


# -- the mode select and the gathered-text sensor -------------------------------------


async def test_mode_select_opens_frames_and_shows_the_stack(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()
    initial = sat.state(MODE), sat.attribute(MODE, "stack")

    await select_mode(hass, "dictation")

    assert initial == ("wake_word", ["base"])
    assert sat.state(MODE) == "dictation"
    assert sat.attribute(MODE, "stack") == ["base", "dictation"]
    assert sat.attribute(MODE, "listen_mode") == "wake_word"


async def test_selecting_always_listening_closes_frames_and_tells_the_satellite(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()
    await select_mode(hass, "dictation")

    await select_mode(hass, "always_listening")
    await wait_for(
        lambda: "Always listening: True" in sat.process.log_text(), 10, "satellite told"
    )

    assert sat.state(MODE) == "always_listening"
    assert sat.attribute(MODE, "stack") == ["base"]
    assert sat.attribute(MODE, "listen_mode") == "always_listening"
    assert sat.modes.always_listening
    await select_mode(hass, "wake_word")
    await wait_for(
        lambda: "Always listening: False" in sat.process.log_text(),
        10,
        "satellite told",
    )
    assert sat.state(MODE) == "wake_word"
    assert not sat.modes.always_listening


async def test_always_listening_from_the_options_is_sent_on_connect(
    start: Start,
) -> None:
    sat = await start(listen_mode="always_listening")

    await wait_for(
        lambda: "Always listening: True" in sat.process.log_text(), 10, "satellite told"
    )

    assert sat.state(MODE) == "always_listening"


async def test_a_reply_without_a_tts_engine_is_a_warning_not_an_error(
    hass: HomeAssistant, start: Start, caplog: pytest.LogCaptureFixture
) -> None:
    sat = await start()

    await select_mode(hass, "dictation")
    await wait_for(lambda: "could not say" in caplog.text, 10, "the reply given up on")
    await hass.async_block_till_done()

    assert sat.state(MODE) == "dictation"
    assert sat.state(SATELLITE) == "idle"
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == []
    (warning,) = [r for r in caplog.records if "could not say" in r.getMessage()]
    assert "text-to-speech" in warning.getMessage()


async def test_confirm_cannot_be_selected(hass: HomeAssistant, start: Start) -> None:
    sat = await start()

    with pytest.raises(ServiceValidationError) as err:
        await select_mode(hass, "confirm")

    assert err.value.translation_domain == DOMAIN
    assert err.value.translation_key == "confirm_not_selectable"
    assert sat.state(MODE) == "wake_word"


async def test_gathered_text_counts_the_open_dictation_until_aborted(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()
    await sat.say("start dictation")
    empty = sat.state(GATHERED)

    await sat.say("buy milk")
    gathered = sat.state(GATHERED), sat.attribute(GATHERED, "mode")
    await action(hass, "abort_mode")

    assert empty == "0"
    assert gathered == (str(len("buy milk")), "dictation")
    assert sat.state(GATHERED) == "0"
    assert sat.state(MODE) == "wake_word"


# -- where gathered text goes -----------------------------------------------------------


async def test_dictation_goes_to_the_notes_file_in_the_config_dir(
    start: Start, config_dir: Path
) -> None:
    sat = await start()

    decision = await sat.say(
        "start dictation", "first line cancel", "zero zero zero", "end dictation"
    )

    (line,) = (config_dir / "voicestack" / "notes.txt").read_text().splitlines()
    stamp, frame, text = line.split("\t")
    assert datetime.fromisoformat(stamp).tzinfo is not None
    assert (frame, text) == ("dictation", "first line cancel zero zero zero")
    assert decision.speak == "Saved to your notes."
    assert decision.stack == ("base",)


async def test_notes_are_not_written_through_a_link_planted_later(
    start: Start, config_dir: Path
) -> None:
    """The options were fine when saved; a link made afterwards is refused."""
    secrets = config_dir / "secrets.yaml"
    secrets.write_text("pin: 4711\n", encoding="utf-8")
    sat = await start()
    await sat.say("start dictation", "the first note", "end dictation")
    notes = config_dir / "voicestack" / "notes.txt"
    notes.unlink()
    notes.symlink_to("../secrets.yaml")

    failed = await sat.say("start dictation", "the second note", "end dictation")

    assert failed.speak == REPLIES.delivery_failed.format(target="notes")
    assert failed.stack == ("base", "dictation")  # the frame keeps the note
    assert secrets.read_text(encoding="utf-8") == "pin: 4711\n"


async def test_start_dictation_to_an_event_answers_and_fires_on_submit(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()
    events = record(hass, EVENT_DICTATION)

    started = await action(hass, "start_dictation", destination="event")
    await sat.say("call the plumber", "about the sink")
    submitted = await action(hass, "submit_mode")
    await hass.async_block_till_done()

    assert started == {
        "satellites": {
            SATELLITE: {
                "mode": "dictation",
                "stack": ["base", "dictation"],
                "reason": started["satellites"][SATELLITE]["reason"],
                "speak": "Dictation started.",
            }
        }
    }
    assert "opened dictation" in started["satellites"][SATELLITE]["reason"]
    assert submitted["satellites"][SATELLITE]["speak"] == "Sent."
    assert submitted["satellites"][SATELLITE]["stack"] == ["base"]
    (event,) = events
    (device,) = dr.async_entries_for_config_entry(
        dr.async_get(hass), sat.hub.entry.entry_id
    )
    assert (DOMAIN, sat.hub.satellite_id) in device.identifiers
    assert event.data["text"] == "call the plumber about the sink"
    assert event.data["items"] == ["call the plumber", "about the sink"]
    assert event.data["frame"] == "dictation"
    assert event.data["entity_id"] == SATELLITE
    assert event.data["device_id"] == device.id


async def test_abort_mode_delivers_nothing(
    hass: HomeAssistant, start: Start, config_dir: Path
) -> None:
    sat = await start()
    events = record(hass, EVENT_DICTATION)
    await action(hass, "start_dictation", destination="event")
    await sat.say("this stays secret")

    aborted = await action(hass, "abort_mode")
    await hass.async_block_till_done()

    assert events == []
    assert not (config_dir / "voicestack" / "notes.txt").exists()
    assert aborted["satellites"][SATELLITE]["stack"] == ["base"]
    assert "nothing sent" in aborted["satellites"][SATELLITE]["reason"]
    assert sat.state(GATHERED) == "0"


@pytest.fixture
async def shopping_list(hass: HomeAssistant, config_dir: Path) -> None:
    """Home Assistant's shopping list (``todo.shopping_list``), empty."""
    entry = MockConfigEntry(domain="shopping_list")
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)


async def list_items(hass: HomeAssistant, entity_id: str) -> list[str]:
    """The summaries on a to-do list, in order."""
    items = await hass.services.async_call(
        "todo",
        "get_items",
        {"entity_id": entity_id},
        blocking=True,
        return_response=True,
    )
    assert items is not None
    return [item["summary"] for item in items[entity_id]["items"]]


@pytest.mark.usefixtures("shopping_list")
async def test_start_inventory_to_a_todo_list_adds_one_item_each(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()

    await action(hass, "start_inventory", destination="todo", todo_entity=SHOPPING_LIST)
    decision = await sat.say("eggs", "flour", "save")

    assert await list_items(hass, SHOPPING_LIST) == ["eggs", "flour"]
    assert decision.speak == "Added 2 items to the list."
    assert decision.stack == ("base",)
    assert sat.state(SHOPPING_LIST) == "2"


@pytest.mark.usefixtures("shopping_list")
async def test_a_spoken_inventory_goes_to_the_configured_todo_list(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start(inventory_destination="todo", todo_entity=SHOPPING_LIST)

    await sat.say("start inventory", "two lemons", "save")

    assert await list_items(hass, SHOPPING_LIST) == ["two lemons"]


async def test_switch_voice_without_a_tts_engine_offers_nothing(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()

    response = await action(hass, "switch_voice")

    answer = response["satellites"][SATELLITE]
    assert answer["speak"] == REPLIES.no_voices
    assert answer["stack"] == ["base"]
    assert sat.state(MODE) == "wake_word"


async def test_todo_without_a_list_is_a_translated_error(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()

    with pytest.raises(ServiceValidationError) as err:
        await action(hass, "start_inventory", destination="todo")

    assert err.value.translation_domain == DOMAIN
    assert err.value.translation_key == "todo_entity_required"
    assert sat.state(MODE) == "wake_word"


@pytest.mark.parametrize("entity_id", [MODE, "assist_satellite.nobody"])
async def test_actions_refuse_what_is_not_a_voicestack_satellite(
    hass: HomeAssistant, start: Start, entity_id: str
) -> None:
    sat = await start()

    with pytest.raises(ServiceValidationError) as err:
        await action(hass, "start_dictation", entity_id=entity_id)

    assert err.value.translation_domain == DOMAIN
    assert err.value.translation_key == "not_a_satellite_entity"
    assert err.value.translation_placeholders == {"entity_id": entity_id}
    assert sat.state(MODE) == "wake_word"


# -- the deferred queue -------------------------------------------------------------------


async def test_queued_queries_survive_a_reload_and_are_drained(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start(**NO_SILENCE)
    await action(hass, "start_query", destination="queue")
    await sat.say("what is the weather tomorrow")
    submitted = await action(hass, "submit_mode")
    queued = sat.state(QUEUE)

    assert await hass.config_entries.async_reload(sat.entry.entry_id)
    await hass.async_block_till_done()
    reloaded = sat.state(QUEUE)
    drained = await action(hass, "drain_queue")

    assert submitted["satellites"][SATELLITE]["speak"] == "Saved for later; 1 waiting."
    assert (queued, reloaded) == ("1", "1")
    (entry,) = drained["queues"][SATELLITE]
    assert entry["text"] == "what is the weather tomorrow"
    assert entry["frame"] == "query"
    assert datetime.fromisoformat(entry["at"]).tzinfo is not None
    assert sat.state(QUEUE) == "0"
    assert (await action(hass, "drain_queue"))["queues"][SATELLITE] == []


# -- shortcuts ----------------------------------------------------------------------------


async def test_a_shortcut_runs_its_script_without_the_agent(
    hass: HomeAssistant, start: Start
) -> None:
    assert await async_setup_component(
        hass, "input_boolean", {"input_boolean": {"lights_out_ran": {}}}
    )
    turn_on = {"action": "input_boolean.turn_on", "target": {"entity_id": SCRIPT_RAN}}
    assert await async_setup_component(
        hass, "script", {"script": {"lights_out": {"sequence": [turn_on]}}}
    )
    sat = await start(shortcuts="lights out = script.lights_out")

    decision = await sat.say("Lights out.")
    await wait_for(lambda: sat.state(SCRIPT_RAN) == STATE_ON, 5, "script ran")

    assert (decision.frame, decision.rule) == ("base", "shortcut")
    assert decision.agent_text is None
    assert decision.speak == SHORTCUT_DONE


# -- asking before sensitive actions -----------------------------------------------------


@pytest.fixture
async def home(hass: HomeAssistant, config_dir: Path) -> None:
    """The front door lock and the kitchen light."""
    await set_up_home(hass, front_door=True)


@pytest.mark.usefixtures("home")
async def test_unlocking_asks_first_and_only_yes_sends_it(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()

    asked = await sat.say("unlock the front door")
    reprompted = await sat.say("maybe")
    declined = await sat.say("no")
    await sat.say("Unlock the front door.")
    confirmed = await sat.say("yes")

    assert asked.speak == "Should I unlock the front door? Say yes or no."
    assert asked.stack == ("base", "confirm")
    assert asked.agent_text is None
    assert asked.listen
    assert reprompted.speak == REPLIES.say_yes_or_no
    assert reprompted.stack == ("base", "confirm")
    assert reprompted.agent_text is None
    assert declined.agent_text is None
    assert declined.stack == ("base",)
    assert confirmed.agent_text == "Unlock the front door."
    assert confirmed.stack == ("base",)
    # Nothing here runs the agent: the voice loop does, with agent_text.
    assert hass.states.get(FRONT_DOOR).state == "locked"


def read_yes_or_no(user_input: conversation.ConversationInput) -> tuple[str, bool]:
    """An LLM's reading of an answer: "sure, go ahead" is yes, the rest unclear."""
    return ("Yes." if "sure, go ahead" in user_input.text else "unclear"), False


@pytest.mark.usefixtures("home")
async def test_an_llm_agent_reads_answers_that_are_not_word_for_word(
    hass: HomeAssistant, start: Start, stack: AsyncExitStack
) -> None:
    assert await async_setup_component(hass, "assist_pipeline", {})
    agent = await use_agent(hass, stack, async_get_pipeline(hass), read_yes_or_no)
    sat = await start()

    await sat.say("unlock the front door")
    unclear = await sat.say("let me think")
    confirmed = await sat.say("sure, go ahead")

    assert (unclear.rule, unclear.stack) == ("reprompt", ("base", "confirm"))
    assert (confirmed.frame, confirmed.rule) == ("confirm", "understood")
    assert confirmed.agent_text == "unlock the front door"
    assert agent.texts[1].startswith(
        "Someone was asked a yes-or-no question and answered: sure, go ahead"
    )


@pytest.mark.usefixtures("home")
async def test_a_light_is_not_asked_about(hass: HomeAssistant, start: Start) -> None:
    sat = await start()

    route = await sat.modes.router(
        Utterance(
            text="turn on the kitchen light",
            satellite_id=sat.hub.satellite_id,
            wake_word="hey_jarvis",
        )
    )

    assert route.agent_text == "turn on the kitchen light"
    assert (route.frame, route.rule) == ("base", "agent")
    assert sat.state(MODE) == "wake_word"
    assert hass.states.get(LIGHT).state == STATE_OFF


@pytest.mark.usefixtures("home")
async def test_the_resolver_finds_what_a_request_would_touch(
    hass: HomeAssistant,
) -> None:
    resolver = EntityResolver(hass, lambda: "en", lambda: None, lambda: None)

    door = await resolver("unlock the front door")
    light = await resolver("turn on the kitchen light")
    unknown = await resolver("recite a poem about the sea")

    assert door == (Touched(FRONT_DOOR, None),)
    assert [touched.entity_id for touched in light] == [LIGHT]
    assert unknown == ()
    assert hass.states.get(FRONT_DOOR).state == "locked"


async def test_the_resolver_skips_locks_not_exposed_to_assist(
    hass: HomeAssistant, config_dir: Path
) -> None:
    await set_up_home(hass, front_door=True)
    async_expose_entity(hass, "conversation", FRONT_DOOR, False)
    resolver = EntityResolver(hass, lambda: "en", lambda: None, lambda: None)

    assert await resolver("unlock the front door") == ()


# -- the voice picker ---------------------------------------------------------------------


@pytest.mark.e2e
async def test_the_voice_picker_offers_the_engines_other_voices(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    stack: AsyncExitStack,
    start: Start,
) -> None:
    pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
    sat = await start()
    engine = get_engine_instance(hass, pipeline.tts_engine)
    assert engine is not None
    offered = engine.async_get_supported_voices(pipeline.tts_language) or []

    router = sat.modes.router

    lister = router.kit.hooks.list_voices  # the picker's hook
    assert lister is not None
    voices = await lister()
    offer = await sat.say("switch voice")
    picked = await sat.say(voices[0].name)
    await hass.async_block_till_done()

    assert VOICE in {voice.voice_id for voice in offered}
    assert voices
    assert VOICE not in {voice.voice_id for voice in voices}
    assert all(voice.voice_id and voice.name for voice in voices)
    assert [voice.voice_id for voice in voices] == [
        voice.voice_id for voice in offered if voice.voice_id != VOICE
    ]
    assert offer.stack == ("base", "voice_picker")
    assert offer.speak is not None
    assert voices[0].name in offer.speak
    assert picked.speak == REPLIES.voice_set.format(name=voices[0].name)
    assert picked.stack == ("base",)
    assert sat.entry.options["voice"] == voices[0].voice_id
    assert sat.hub.tts_voice == voices[0].voice_id
    assert sat.entry.state is ConfigEntryState.LOADED
    assert sat.modes.router is router  # a voice is no reason to reload


async def test_a_picked_voice_is_kept_without_a_reload(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()
    hub, router = sat.hub, sat.modes.router

    hub.set_tts_voice("en_GB-alan-low")
    await hass.async_block_till_done()

    assert sat.entry.options["voice"] == "en_GB-alan-low"
    assert sat.entry.state is ConfigEntryState.LOADED
    assert sat.hub is hub
    assert sat.modes.router is router
    assert hub.tts_voice == "en_GB-alan-low"


# -- options ------------------------------------------------------------------------------


async def test_router_options_reload_the_entry(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()
    router = sat.modes.router

    hass.config_entries.async_update_entry(
        sat.entry, options={**sat.entry.options, "dictation_destination": "event"}
    )
    await hass.async_block_till_done()
    await wait_for(lambda: sat.state(CONNECTED) == STATE_ON, 10, "reconnected")

    assert sat.entry.state is ConfigEntryState.LOADED
    assert sat.modes.router is not router
    assert sat.modes.config.destinations["dictation"] == "event"


async def test_announcer_options_apply_without_a_reload(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start(shortcuts="lights out = script.lights_out")
    hub, router = sat.hub, sat.modes.router

    hass.config_entries.async_update_entry(
        sat.entry, options={**sat.entry.options, "dedup_s": 4.0}
    )
    await hass.async_block_till_done()

    assert sat.entry.state is ConfigEntryState.LOADED
    assert sat.hub is hub
    assert sat.modes.router is router
    assert sat.runtime.announcements.announcer.options.dedup_s == 4.0


# -- diagnostics --------------------------------------------------------------------------


async def test_diagnostics_show_the_open_dictation_but_not_its_words(
    hass: HomeAssistant, start: Start
) -> None:
    sat = await start()
    await sat.say("start dictation", "buy milk")

    diagnostics = await async_get_config_entry_diagnostics(hass, sat.entry)

    modes = diagnostics["modes"]
    assert modes["mode"] == "dictation"
    assert modes["listen_mode"] == "wake_word"
    assert modes["stack"] == ["base", "dictation"]
    assert modes["gathered_chars"] == len("buy milk")
    assert modes["deferred_queue"] == 0
    assert modes["voice"] is None
    assert modes["last_decision"]["frame"] == "dictation"
    assert modes["last_decision"]["stack"] == ["base", "dictation"]
    assert "milk" not in json.dumps(diagnostics, default=str)
