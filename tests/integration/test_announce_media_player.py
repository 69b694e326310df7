"""``voicestack.announce`` on any media player, with real HA and real Piper.

The player is ``devstack.recording_player.RecordingPlayer``: a real
``MediaPlayerEntity`` reached through Home Assistant's own ``play_media``, which
reads the TTS media it is given and plays it for its real length. What is
checked is what the player was asked to play and when: the tts media source and
``announce``, bursts merged into one play, one announcement never starting
before the last one's audio has played, a critical that stops the player, an
unavailable player that gets its message once it is back, and the errors.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
import wave

from homeassistant.components.assist_pipeline import Pipeline, async_update_pipeline
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import area_registry as ar, entity_registry as er
from homeassistant.setup import async_setup_component
import pytest

from custom_components.voicestack.announce.media_player_speaker import (
    MediaPlayerSpeaker,
)
from custom_components.voicestack.announce.service import (
    DATA_ANNOUNCER,
    DATA_ENTITY_SPEAKERS,
)
from custom_components.voicestack.const import DOMAIN, EVENT_ANNOUNCEMENT
from custom_components.voicestack.core.speaker import PlaybackOutcome
from custom_components.voicestack.core.wav import Pcm
from devstack import servers, speech
from devstack.entity_platform import PLATFORM
from devstack.manual_clock import ManualClock
from devstack.recording_player import RecordingPlayer, add_players
from devstack.waiting import wait_for
from tests.integration.assist import set_up_assist, words
from tests.integration.test_announce import (
    SATELLITE,
    announce,
    loaded_satellite,
    statuses,
)

pytestmark = pytest.mark.e2e

LONG = (
    "The weekly report: it was a quiet week with nothing much to say, "
    "and this sentence is long on purpose so it is still playing."
)


type Home = Callable[..., Awaitable[tuple[Pipeline, list[Event]]]]


@pytest.fixture
def home(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> Home:
    """Starts Assist with Piper, VoiceStack's actions (no satellite) and players.

    Returns the pipeline and the ``voicestack_announcement`` events from then on.
    """

    async def start(*players: RecordingPlayer) -> tuple[Pipeline, list[Event]]:
        pipeline = await set_up_assist(hass, stack, tmp_path, piper, whisper)
        assert await async_setup_component(hass, "media_player", {})
        assert await async_setup_component(hass, DOMAIN, {})
        platform = await add_players(hass, players)
        stack.push_async_callback(platform.async_reset)
        events: list[Event] = []
        stack.callback(hass.bus.async_listen(EVENT_ANNOUNCEMENT, events.append))
        return pipeline, events

    return start


async def door_burst(hass: HomeAssistant, *entity_ids: str) -> None:
    """Three doors open at once (three sources, one category): a burst."""
    for door in ("Front", "Back", "Garage"):
        await announce(
            hass,
            message=f"{door} door opened",
            category="warning",
            source=door,
            entity_id=list(entity_ids),
        )


def transcript(tmp_path: Path, audio: Pcm) -> list[str]:
    """The words Whisper hears in a play call's audio (at the engine's own rate)."""
    path = tmp_path / "heard.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(audio.channels)
        out.setsampwidth(audio.width)
        out.setframerate(audio.rate)
        out.writeframes(audio.audio)
    return words(speech.transcribe(speech.read_wav_pcm(path)))


async def test_a_player_plays_the_tts_media_source_as_an_announcement(
    hass: HomeAssistant, home: Home, tmp_path: Path
) -> None:
    message = "The washing machine is done."
    player = RecordingPlayer("Den")
    _pipeline, events = await home(player)
    response = await announce(hass, message=message, entity_id=player.entity_id)
    await wait_for(lambda: statuses(events, "finished"), 30, "said")
    metrics = hass.data[DATA_ANNOUNCER].metrics().as_dict()

    (receipt,) = response["announcements"]
    assert (receipt["satellite"], receipt["status"]) == (player.entity_id, "queued")
    (call,) = player.calls
    assert call.media_id.startswith("media-source://tts/")
    assert call.announce is True
    assert call.seconds > 1.0
    assert transcript(tmp_path, call.audio) == words(message)
    (finished,) = statuses(events, "finished")
    assert finished["speaker"] == finished["entity_id"] == player.entity_id
    assert finished["speaker_kind"] == "media_player"
    assert finished["outcome"] == "played"
    assert metrics["satellites"] == {}
    den = metrics["speakers"][player.entity_id]
    assert (den["kind"], den["received"], den["spoken"]) == ("media_player", 1, 1)


async def test_a_burst_is_one_play_and_the_next_waits_for_its_end(
    hass: HomeAssistant, home: Home
) -> None:
    player = RecordingPlayer("Den")
    _pipeline, events = await home(player)
    await door_burst(hass, player.entity_id)
    await wait_for(lambda: player.calls, 30, "the burst plays")
    await announce(hass, message="The mail is here.", entity_id=player.entity_id)
    await wait_for(lambda: len(statuses(events, "finished")) == 2, 60, "both said")

    first, second = player.calls
    burst, mail = statuses(events, "finished")
    assert len(burst["ids"]) == 3
    assert burst["text"].startswith("3 warnings: Front door opened")
    assert mail["text"] == "The mail is here."
    # The player's clock is the loop's, as the announcer's; the speaker waits for
    # the audio's length from its call and for the player to leave ``playing``
    # (which the player does its length after it was called), so no margin.
    assert second.at >= first.at + first.seconds


async def test_a_player_is_busy_for_the_audios_length_on_the_clock(
    hass: HomeAssistant, home: Home, stack: AsyncExitStack
) -> None:
    """The speaker itself, on a manual clock shared with the player: exact."""
    clock = ManualClock()
    player = RecordingPlayer("Den", clock=clock)
    await home(player)
    players = hass.data[DATA_ENTITY_SPEAKERS]
    speaker = MediaPlayerSpeaker(
        hass,
        player.entity_id,
        lambda: players.voice(player.entity_id),
        clock,
        grace_s=5.0,
    )

    @callback
    def state_changed(event: Event) -> None:
        speaker.state_changed(event.data["old_state"], event.data["new_state"])

    stack.callback(hass.bus.async_listen("state_changed", state_changed))
    start = clock.now()
    saying = asyncio.ensure_future(speaker.say("The oven is hot.", ("x",)))
    await wait_for(lambda: player.calls, 30, "played")
    (call,) = player.calls
    length = call.seconds
    clock.advance(length - 0.001)
    await asyncio.sleep(0)
    before_end = saying.done()
    clock.advance(0.001)
    result = await asyncio.wait_for(saying, 5)

    assert not before_end
    assert result.outcome == PlaybackOutcome.PLAYED
    assert result.first_audio_at == start == call.at
    assert result.seconds == length


async def test_a_player_that_never_takes_play_media_fails_in_bounded_time(
    hass: HomeAssistant, home: Home, caplog: pytest.LogCaptureFixture
) -> None:
    """Its integration waits for a device that does not answer."""
    player = RecordingPlayer("Den", hangs=True)
    await home(player)
    players = hass.data[DATA_ENTITY_SPEAKERS]
    speaker = MediaPlayerSpeaker(
        hass,
        player.entity_id,
        lambda: players.voice(player.entity_id),
        ManualClock(),
        play_timeout_s=0.5,
    )

    result = await asyncio.wait_for(speaker.say("The oven is hot.", ("x",)), 30)

    assert len(player.calls) == 1  # it was asked, and never answered
    assert result.outcome == "failed"
    assert f"{player.entity_id} did not take ('x',) within 0.5 s" in caplog.text


@pytest.mark.parametrize("stop", [True, False], ids=["media_stop", "replaced"])
async def test_a_critical_interrupts_what_the_player_announces(
    hass: HomeAssistant, home: Home, stop: bool
) -> None:
    critical = "Smoke in the kitchen."
    player = RecordingPlayer("Den", stop=stop, announce=False)
    _pipeline, events = await home(player)
    await announce(hass, message=LONG, entity_id=player.entity_id)
    await wait_for(lambda: player.calls, 30, "the long one plays")
    cut = hass.data[DATA_ENTITY_SPEAKERS].speaker(player.entity_id).last
    await announce(
        hass,
        message=critical,
        priority="critical",
        category="error",
        entity_id=player.entity_id,
    )
    await wait_for(lambda: statuses(events, "finished"), 30, "critical said")

    (interrupted,) = statuses(events, "interrupted")
    assert interrupted["reason"] == "critical"
    assert cut is not None
    assert cut.outcome == PlaybackOutcome.STOPPED
    assert len(player.stops) == (1 if stop else 0)
    first, second = player.calls
    assert second.at < first.at + first.seconds  # it did not wait
    assert [c.announce for c in player.calls] == [None, None]  # no MEDIA_ANNOUNCE
    (finished,) = statuses(events, "finished")
    assert finished["text"] == critical


async def test_an_unavailable_player_waits_and_says_it_when_back(
    hass: HomeAssistant, home: Home
) -> None:
    message = "The garage door is open."
    player = RecordingPlayer("Den")
    _pipeline, events = await home(player)
    player.set_available(False)
    (receipt,) = (
        await announce(
            hass, message=message, priority="high", entity_id=player.entity_id
        )
    )["announcements"]
    announcer = hass.data[DATA_ANNOUNCER].speakers[player.entity_id]
    offline = (announcer.online, announcer.queue_depth)
    player.set_available(True)
    await wait_for(lambda: statuses(events, "finished"), 30, "said when back")

    assert receipt["status"] == "queued"
    assert offline == (False, 1)
    (call,) = player.calls
    assert statuses(events, "started")[0]["ids"] == [receipt["id"]]
    assert call.seconds > 0


async def test_a_player_not_loaded_yet_gets_its_message_once_it_is(
    hass: HomeAssistant, home: Home, stack: AsyncExitStack
) -> None:
    """Registered, no state yet (HA starting, its integration retrying)."""
    message = "Good morning."
    player = RecordingPlayer("Den")
    _pipeline, events = await home()
    registered = er.async_get(hass).async_get_or_create(
        "media_player", PLATFORM, f"recording-{player.name}", suggested_object_id="den"
    )
    (receipt,) = (
        await announce(
            hass, message=message, priority="high", entity_id=registered.entity_id
        )
    )["announcements"]
    announcer = hass.data[DATA_ANNOUNCER].speakers[registered.entity_id]
    waiting = (announcer.online, announcer.queue_depth, len(player.calls))
    platform = await add_players(hass, [player])
    stack.push_async_callback(platform.async_reset)
    await wait_for(lambda: statuses(events, "finished"), 30, "said once loaded")

    assert player.entity_id == registered.entity_id
    assert receipt["status"] == "queued"
    assert waiting == (False, 1, 0)
    (call,) = player.calls
    assert statuses(events, "finished")[0]["text"] == message
    assert call.seconds > 0


async def test_the_engine_of_the_latest_call_that_named_one(
    hass: HomeAssistant, home: Home
) -> None:
    """Without a pipeline engine a player needs one named, and keeps it."""
    player = RecordingPlayer("Den")
    pipeline, events = await home(player)
    engine = pipeline.tts_engine
    await async_update_pipeline(hass, pipeline, tts_engine=None)
    with pytest.raises(HomeAssistantError) as none:
        await announce(hass, message="x", entity_id=player.entity_id)
    await announce(hass, message="One.", entity_id=player.entity_id, tts_engine=engine)
    await wait_for(lambda: statuses(events, "finished"), 30, "first said")
    await announce(hass, message="Two.", entity_id=player.entity_id)
    await wait_for(lambda: len(statuses(events, "finished")) == 2, 30, "second")

    assert none.value.translation_key == "no_tts_engine"
    assert all(f"tts/{engine}?" in call.media_id for call in player.calls)
    assert len(player.calls) == 2


async def test_targets_and_errors(hass: HomeAssistant, home: Home) -> None:
    player = RecordingPlayer("Den")
    await home(player)
    den = ar.async_get(hass).async_get_or_create("Den")
    er.async_get(hass).async_update_entity(player.entity_id, area_id=den.id)
    empty = ar.async_get(hass).async_get_or_create("Garage")
    by_area = await announce(hass, message="By area.", area_id=den.id)
    no_target = await announce(hass, message="Satellites only.")
    errors = {}
    for name, data in {
        "a light": {"entity_id": "light.kitchen"},
        "an empty area": {"area_id": empty.id},
        "an unknown engine": {
            "entity_id": player.entity_id,
            "tts_engine": "tts.nope",
        },
        "not a tts entity": {
            "entity_id": player.entity_id,
            "tts_engine": "light.kitchen",
        },
    }.items():
        with pytest.raises(ServiceValidationError) as err:
            await announce(hass, message="x", **data)
        assert err.value.translation_domain == DOMAIN
        errors[name] = err.value.translation_key
    er.async_get(hass).async_remove(player.entity_id)  # the user deletes it
    await wait_for(
        lambda: player.entity_id not in hass.data[DATA_ANNOUNCER].speakers,
        10,
        "removed player leaves the announcer",
    )

    assert [r["satellite"] for r in by_area["announcements"]] == [player.entity_id]
    assert no_target["announcements"] == []
    assert errors == {
        "a light": "announce_not_a_speaker",
        "an empty area": "announce_no_satellite",
        "an unknown engine": "announce_unknown_tts_engine",
        "not a tts entity": "announce_unknown_tts_engine",
    }


async def test_a_burst_across_a_satellite_and_a_player(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    player = RecordingPlayer("Den")
    async with AsyncExitStack() as stack:
        runtime, events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        assert await async_setup_component(hass, "media_player", {})
        platform = await add_players(hass, [player])
        stack.push_async_callback(platform.async_reset)
        await door_burst(hass, SATELLITE, player.entity_id)
        await wait_for(lambda: len(statuses(events, "finished")) == 2, 60, "both")
        metrics = hass.data[DATA_ANNOUNCER].metrics().as_dict()
        satellite_id = runtime.hub.satellite_id
    # The last entry unloaded: the players left the announcer with it.
    left = dict(hass.data[DATA_ANNOUNCER].speakers)

    finished = {e["speaker_kind"]: e for e in statuses(events, "finished")}
    assert set(finished) == {"satellite", "media_player"}
    assert finished["satellite"]["entity_id"] == SATELLITE
    assert finished["media_player"]["entity_id"] == player.entity_id
    assert all(len(e["ids"]) == 3 for e in finished.values())
    assert finished["satellite"]["text"] == finished["media_player"]["text"]
    assert len(player.calls) == 1
    assert len(list(tmp_path.glob("played.*.wav"))) == 1
    assert list(metrics["satellites"]) == [satellite_id]
    assert {k: v["kind"] for k, v in metrics["speakers"].items()} == {
        satellite_id: "satellite",
        player.entity_id: "media_player",
    }
    assert metrics["total"]["received"] == 6
    assert left == {}


async def test_an_engine_without_audio_plays_nothing_and_says_why(
    hass: HomeAssistant, home: Home
) -> None:
    """wyoming-piper returns no audio for "…": nothing reaches the player."""
    player = RecordingPlayer("Den")
    _pipeline, events = await home(player)
    await announce(hass, message="…", entity_id=player.entity_id)
    await wait_for(lambda: statuses(events, "dropped"), 30, "its fate")
    await announce(hass, message="The mail is here.", entity_id=player.entity_id)
    await wait_for(lambda: statuses(events, "finished"), 30, "the next one said")

    (dropped,) = statuses(events, "dropped")
    assert dropped["text"] == "…"
    assert dropped["reason"] == "failed"
    (call,) = player.calls  # only the next one played
    assert statuses(events, "finished")[0]["text"] == "The mail is here."
    assert call.seconds > 0


async def test_a_player_lost_while_announcing_says_it_again_when_back(
    hass: HomeAssistant, home: Home
) -> None:
    player = RecordingPlayer("Den")
    _pipeline, events = await home(player)
    await announce(hass, message=LONG, priority="high", entity_id=player.entity_id)
    await wait_for(lambda: player.calls, 30, "it plays")
    player.set_available(False)
    await wait_for(lambda: statuses(events, "interrupted"), 10, "the loss")
    announcer = hass.data[DATA_ANNOUNCER].speakers[player.entity_id]
    waiting = (announcer.online, announcer.queue_depth)
    player.set_available(True)
    await wait_for(lambda: statuses(events, "finished"), 60, "said again")

    (interrupted,) = statuses(events, "interrupted")
    assert interrupted["reason"] == "lost"
    assert waiting == (False, 1)
    first, again = player.calls
    assert first.media_id == again.media_id  # the same message, once more
    (finished,) = statuses(events, "finished")
    assert finished["text"] == LONG
