"""``voicestack.announce`` on another integration's assist satellite.

Two kinds of device. ``devstack.recording_satellite.RecordingSatellite`` is a
real ``AssistSatelliteEntity`` that Home Assistant's own
``assist_satellite.announce`` reaches, as it reaches a Voice PE under ESPHome
(its pipeline synthesizes the message with Piper; the entity plays it for its
real length). A stock Wyoming satellite is our satellite in stock mode under
Home Assistant's own ``wyoming`` integration, as in test_stock_wyoming.py: its
announce has ffmpeg fetch the message from Home Assistant's TTS proxy URL, so
Home Assistant serves HTTP on a loopback port here (``serve_http``), and the
satellite writes what it played to a WAV. What is checked is what each device
played, transcribed, and when: one announcement per burst, never two at once,
busy exactly while it plays, a mixed burst heard once on each kind of speaker,
a device that waits while it is busy or unavailable.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path

from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.core import Event, HomeAssistant
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.voicestack.announce.service import DATA_ENTITY_SPEAKERS
from custom_components.voicestack.const import DOMAIN, EVENT_ANNOUNCEMENT
from devstack import servers
from devstack.assist_pipeline import entity_of
from devstack.recording_player import RecordingPlayer, add_players
from devstack.recording_satellite import RecordingSatellite, add_satellites
from devstack.stock_satellite import StockSatellite, hearing_silence
from devstack.waiting import wait_for
from tests.integration.assist import (
    add_wyoming,
    record_states,
    set_up_assist,
    words,
)
from tests.integration.test_announce import (
    SATELLITE,
    announce,
    loaded_satellite,
    statuses,
)
from tests.integration.test_announce_media_player import door_burst, transcript

pytestmark = pytest.mark.e2e

BURST = "3 warnings: Front door opened, Back door opened, Garage door opened."


async def devices(
    hass: HomeAssistant, stack: AsyncExitStack, *satellites: RecordingSatellite
) -> list[Event]:
    """The satellites added (the component set up); announcement events from now."""
    assert await async_setup_component(hass, "assist_satellite", {})
    assert await async_setup_component(hass, DOMAIN, {})
    platform = await add_satellites(hass, satellites)
    stack.push_async_callback(platform.async_reset)
    events: list[Event] = []
    stack.callback(hass.bus.async_listen(EVENT_ANNOUNCEMENT, events.append))
    return events


type Hall = tuple[RecordingSatellite, list[Event]]

# How long a stock satellite's entity may stay busy after the satellite played
# the audio's last sample: its ``played`` event, HA's loop, a loaded machine.
IDLE_AFTER_PLAYED_S = 0.5


async def stock_satellite(
    hass: HomeAssistant, stack: AsyncExitStack, tmp_path: Path
) -> StockSatellite:
    """Our satellite in stock mode, hearing silence, added to HA's ``wyoming``."""
    process = await stack.enter_async_context(
        hearing_silence(tmp_path / "stock", "stock-satellite")
    )
    states = record_states(hass, stack)
    entry = await add_wyoming(hass, stack, servers.LOOPBACK, process.port)
    entity_id = entity_of(hass, entry, "assist_satellite")
    await wait_for(
        lambda: hass.states.get(entity_id).state == AssistSatelliteState.IDLE,
        10,
        "the stock satellite connected",
    )
    return StockSatellite(entity_id, process, states)


async def serve_http(
    hass: HomeAssistant, aiohttp_client: ClientSessionGenerator
) -> None:
    """Home Assistant's HTTP app on a loopback port, and its internal URL.

    The test plugin starts no HTTP server; HA's wyoming announce hands ffmpeg
    the TTS proxy URL made from the internal URL. Call it once every component
    is set up: a running app takes no new views.
    """
    client = await aiohttp_client(hass.http.app)
    hass.config.internal_url = f"http://{servers.LOOPBACK}:{client.port}"


@pytest.fixture
async def hall(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> Hall:
    """Assist with Piper, and one ESPHome-style satellite; events from then on."""
    device = RecordingSatellite("Hall")
    await set_up_assist(hass, stack, tmp_path, piper, whisper)
    return device, await devices(hass, stack, device)


async def test_a_message_is_said_through_the_devices_own_announce(
    hass: HomeAssistant, hall: Hall, tmp_path: Path
) -> None:
    message = "The washing machine is done."
    device, events = hall
    response = await announce(hass, message=message, entity_id=device.entity_id)
    await wait_for(lambda: statuses(events, "finished"), 30, "said")

    (receipt,) = response["announcements"]
    assert (receipt["satellite"], receipt["status"]) == (device.entity_id, "queued")
    (said,) = device.announced
    assert said.message == message
    assert said.preannounce  # Home Assistant's chime first, as for its own calls
    assert transcript(tmp_path, said.audio) == words(message)
    (finished,) = statuses(events, "finished")
    assert finished["entity_id"] == device.entity_id
    assert (finished["speaker_kind"], finished["outcome"]) == (
        "assist_satellite",
        "played",
    )
    assert hass.states.get(device.entity_id).state == AssistSatelliteState.IDLE


async def test_a_burst_is_one_announcement_and_the_next_waits_for_its_end(
    hass: HomeAssistant, hall: Hall, tmp_path: Path
) -> None:
    device, events = hall
    await door_burst(hass, device.entity_id)
    await wait_for(lambda: statuses(events, "started"), 30, "the burst plays")
    await announce(hass, message="The mail is here.", entity_id=device.entity_id)
    await wait_for(lambda: len(statuses(events, "finished")) == 2, 60, "both said")

    first, second = device.announced
    assert (first.message, second.message) == (BURST, "The mail is here.")
    assert second.started >= first.ended  # never two at once on one device
    assert transcript(tmp_path, second.audio) == words("The mail is here.")


async def test_home_assistants_own_announcement_waits_behind_ours(
    hass: HomeAssistant, hall: Hall, tmp_path: Path
) -> None:
    """An automation's announce while ours plays is queued, not refused."""
    device, events = hall
    await announce(hass, message="The mail is here.", entity_id=device.entity_id)
    await wait_for(
        lambda: (
            hass.states.get(device.entity_id).state == AssistSatelliteState.RESPONDING
        ),
        30,
        "ours playing",
    )
    await hass.services.async_call(  # refused (SatelliteBusyError) without the queue
        "assist_satellite",
        "announce",
        {"entity_id": device.entity_id, "message": "Dinner is ready."},
        blocking=True,
    )

    assert statuses(events, "finished")  # ours had finished when it returned
    first, second = device.announced
    assert (first.message, second.message) == ("The mail is here.", "Dinner is ready.")
    assert second.started >= first.ended
    assert transcript(tmp_path, second.audio) == words("Dinner is ready.")
    assert hass.states.get(device.entity_id).state == AssistSatelliteState.IDLE
    # Leaving the announcer gives the entity its own methods back.
    assert "async_internal_announce" in vars(device)
    await hass.data[DATA_ENTITY_SPEAKERS].remove(device.entity_id)
    assert "async_internal_announce" not in vars(device)


async def test_a_busy_or_unavailable_device_gets_the_message_once_free(
    hass: HomeAssistant, hall: Hall, tmp_path: Path
) -> None:
    """A person talking to it is not cut off; an unavailable one is waited for."""
    device, events = hall
    device._set_state(AssistSatelliteState.LISTENING)
    device.async_write_ha_state()
    await announce(hass, message="The mail is here.", entity_id=device.entity_id)
    await wait_for(lambda: statuses(events, "started"), 30, "taken up")
    assert device.announced == []  # waits for the request to end
    device._set_state(AssistSatelliteState.IDLE)
    device.async_write_ha_state()
    await wait_for(lambda: statuses(events, "finished"), 30, "said")
    assert [a.message for a in device.announced] == ["The mail is here."]

    device.set_available(False)
    await announce(hass, message="The dryer is done.", entity_id=device.entity_id)
    device.set_available(True)
    await wait_for(lambda: len(statuses(events, "finished")) == 2, 60, "said again")
    assert [a.message for a in device.announced][-1] == "The dryer is done."


type Lobby = tuple[StockSatellite, list[Event]]


@pytest.fixture
async def lobby(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    aiohttp_client: ClientSessionGenerator,
) -> Lobby:
    """Assist with Piper, one stock Wyoming satellite, HTTP served; events."""
    await set_up_assist(hass, stack, tmp_path, piper, whisper)
    events = await devices(hass, stack)
    device = await stock_satellite(hass, stack, tmp_path)
    await serve_http(hass, aiohttp_client)
    return device, events


async def test_a_stock_wyoming_satellite_hears_the_message(
    hass: HomeAssistant, lobby: Lobby
) -> None:
    message = "The washing machine is done."
    device, events = lobby
    response = await announce(hass, message=message, entity_id=device.entity_id)
    await wait_for(lambda: statuses(events, "finished"), 30, "said")
    await wait_for(lambda: bool(device.played()), 30, "played")

    (receipt,) = response["announcements"]
    assert (receipt["satellite"], receipt["status"]) == (device.entity_id, "queued")
    assert [words(heard) for heard in device.heard()] == [words(message)]
    (finished,) = statuses(events, "finished")
    assert (finished["speaker_kind"], finished["outcome"]) == (
        "assist_satellite",
        "played",
    )
    assert hass.states.get(device.entity_id).state == AssistSatelliteState.IDLE
    assert device.busy_after_played_s() < IDLE_AFTER_PLAYED_S


async def test_a_burst_is_heard_once_on_a_stock_wyoming_satellite(
    hass: HomeAssistant, lobby: Lobby
) -> None:
    device, events = lobby
    await door_burst(hass, device.entity_id)
    await wait_for(lambda: statuses(events, "started"), 30, "the burst plays")
    await announce(hass, message="The mail is here.", entity_id=device.entity_id)
    await wait_for(lambda: len(statuses(events, "finished")) == 2, 60, "both said")
    await wait_for(lambda: len(device.played()) == 2, 30, "both played")

    assert [e["text"] for e in statuses(events, "finished")] == [
        BURST,
        "The mail is here.",
    ]
    burst, mail = device.heard()  # the burst once, then the next message
    assert doors_heard(words(burst))
    assert words(mail) == words("The mail is here.")
    assert [e["outcome"] for e in statuses(events, "finished")] == ["played"] * 2
    assert device.busy_after_played_s() < IDLE_AFTER_PLAYED_S


async def test_a_mixed_burst_is_heard_once_on_every_kind_of_speaker(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    aiohttp_client: ClientSessionGenerator,
) -> None:
    """The issue's goal: four kinds of speaker in one burst, each hears it once.

    A VoiceStack satellite, a stock Wyoming satellite, a media player and an
    ESPHome-style satellite. A Voice PE has a media player and an assist satellite on one device: named
    by its device, it hears the burst once, through the satellite.
    """
    runtime, events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
    device, player, voice_pe_player = (
        RecordingSatellite("Hall"),
        RecordingPlayer("Den"),
        RecordingPlayer("Hall speaker"),
    )
    assert await async_setup_component(hass, "media_player", {})
    players = await add_players(hass, [player, voice_pe_player])
    stack.push_async_callback(players.async_reset)
    await devices(hass, stack, device)
    voice_pe = on_one_device(hass, device.entity_id, voice_pe_player.entity_id)
    stock = await stock_satellite(hass, stack, tmp_path)
    await serve_http(hass, aiohttp_client)

    await door_burst(hass, SATELLITE, stock.entity_id, player.entity_id)
    for door in ("Front", "Back", "Garage"):
        await announce(
            hass,
            message=f"{door} door opened",
            category="warning",
            source=door,
            device_id=voice_pe,
        )
    await wait_for(lambda: len(statuses(events, "finished")) == 4, 60, "all said")
    await wait_for(lambda: bool(stock.played()), 30, "played on the stock satellite")

    assert sorted(e["entity_id"] for e in statuses(events, "finished")) == sorted(
        [SATELLITE, stock.entity_id, player.entity_id, device.entity_id]
    )
    assert {e["text"] for e in statuses(events, "finished")} == {BURST}
    assert {e["outcome"] for e in statuses(events, "finished")} == {"played"}
    assert [a.message for a in device.announced] == [BURST]
    assert len(player.calls) == 1
    for audio in (player.calls[0].audio, device.announced[0].audio):
        assert doors_heard(transcript(tmp_path, audio))
    (stock_heard,) = stock.heard()
    assert doors_heard(words(stock_heard))
    assert voice_pe_player.calls == []
    played = runtime.hub.speaker.last
    assert played is not None
    assert played.outcome == "played"
    assert " ".join(s.text for s in played.sentences) == BURST
    for entity_id in (SATELLITE, stock.entity_id, device.entity_id):
        assert hass.states.get(entity_id).state == AssistSatelliteState.IDLE
    assert not runtime.hub.speaker.busy
    assert stock.busy_after_played_s() < IDLE_AFTER_PLAYED_S


def on_one_device(hass: HomeAssistant, *entity_ids: str) -> str:
    """Put ``entity_ids`` on one new device (as ESPHome does a Voice PE's)."""
    entry = MockConfigEntry(domain="devstack")
    entry.add_to_hass(hass)
    device = dr.async_get(hass).async_get_or_create(
        config_entry_id=entry.entry_id, identifiers={("devstack", "voice-pe")}
    )
    for entity_id in entity_ids:
        er.async_get(hass).async_update_entity(entity_id, device_id=device.id)
    return device.id


def doors_heard(heard: list[str]) -> bool:
    """The burst's words in order (tiny.en says "three" and may hear "open")."""
    keys = [word for word in heard if word in ("warnings", "front", "back", "garage")]
    return keys == ["warnings", "front", "back", "garage"]
