"""``voicestack.announce`` with real HA, a real satellite subprocess and Piper.

Bursts merge into few utterances, a critical interrupts, nothing overlaps, a lost
satellite says its high-priority messages once after it is back, bad service data
gets translated errors, a megabyte message is cut before Home Assistant's loop
notices it, media-only announcements wait their turn, the metrics view balances
and is for admins, and diagnostics keep the satellite's address out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from datetime import datetime
from pathlib import Path
import time
from typing import Any

from homeassistant.components.assist_satellite.const import PREANNOUNCE_URL
from homeassistant.components.diagnostics import REDACTED
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import area_registry as ar
from homeassistant.helpers.event import async_call_later
import pytest

from custom_components.voicestack.announce.media_audio import async_decode_media
from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.diagnostics import async_get_config_entry_diagnostics
from custom_components.voicestack.hub import SatelliteHub
from custom_components.voicestack.request.speech_output import synthesize_sentences
from custom_components.voicestack.runtime import SatelliteRuntime
from devstack import servers, speech
from devstack.satellite import satellite
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import (
    add_voicestack,
    set_up_assist,
    words,
)

pytestmark = pytest.mark.e2e

SATELLITE = "assist_satellite.test_satellite"


class WireLog:
    """Passes every event to the satellite and keeps the audio framing seen."""

    def __init__(self, hub: SatelliteHub) -> None:
        """Wrap ``hub.link.send`` (the real link keeps sending)."""
        self.framing: list[str] = []
        send = hub.link.send

        async def logged(event: Any) -> bool:
            if event.type in ("audio-start", "audio-stop"):
                self.framing.append(event.type)
            return await send(event)

        hub.link.send = logged  # type: ignore[method-assign]
        hub.speaker._send = logged

    def never_overlapped(self) -> bool:
        """Every audio-start was closed by an audio-stop before the next."""
        return self.framing == ["audio-start", "audio-stop"] * (len(self.framing) // 2)


async def announce(hass: HomeAssistant, **data: Any) -> dict[str, Any]:
    """Call the action and return its response."""
    response = await hass.services.async_call(
        DOMAIN, "announce", data, blocking=True, return_response=True
    )
    assert response is not None
    return response


async def loaded_satellite(
    hass: HomeAssistant,
    stack: AsyncExitStack,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> tuple[SatelliteRuntime, list[Event]]:
    """Assist, a satellite hearing silence, its entry; events recorded."""
    await set_up_assist(hass, stack, tmp_path, piper, whisper)
    mic = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    sat = await stack.enter_async_context(satellite(tmp_path, "--mic-file", str(mic)))
    entry = await add_voicestack(hass, stack, sat)
    await wait_for(lambda: hass.states.get(SATELLITE).state == "idle", 10, "up")
    events: list[Event] = []
    stack.callback(hass.bus.async_listen("voicestack_announcement", events.append))
    return runtime_of(entry), events


def statuses(events: list[Event], status: str) -> list[dict[str, Any]]:
    """The data of the events with ``status``."""
    return [e.data for e in events if e.data["status"] == status]


async def test_a_burst_is_merged_and_never_overlaps(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    async with AsyncExitStack() as stack:
        runtime, events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        wire = WireLog(runtime.hub)
        receipts = []
        started = time.monotonic()
        for n in range(20):
            response = await announce(
                hass,
                message=f"Door {n} opened",
                source=f"sensor_{n % 5}",
                category="warning",
            )
            receipts += response["announcements"]
        assert time.monotonic() - started < 1.0
        await wait_for(
            lambda: runtime.announcements.announcer.snapshot().queued == 0,
            60,
            "all said",
        )
        await wait_for(lambda: not runtime.hub.speaker.busy, 10, "speaker free")
        snapshot = runtime.announcements.announcer.snapshot()

    said = statuses(events, "started")
    assert 1 <= len(said) <= 3
    assert wire.never_overlapped()
    assert {r["status"] for r in receipts} <= {"queued", "dropped"}
    assert snapshot.received == 20
    assert snapshot.balanced
    assert "warnings" in said[0]["text"]


async def test_a_critical_interrupts_and_starts_quickly(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    critical = "Smoke in the kitchen."
    async with AsyncExitStack() as stack:
        runtime, events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        # What text-to-speech alone costs for the critical message.
        tts_started = time.monotonic()
        async for _sentence, _pcm in synthesize_sentences(
            hass, runtime.hub.pipeline(), [critical]
        ):
            pass
        tts_s = time.monotonic() - tts_started
        await announce(
            hass,
            message="The weekly report: it was a quiet week with nothing much to "
            "say, and this sentence is long on purpose so it is still playing.",
            category="general",
        )
        await wait_for(lambda: statuses(events, "started"), 20, "normal started")
        called = time.monotonic()
        await announce(hass, message=critical, priority="critical", category="error")
        await wait_for(
            lambda: len(statuses(events, "finished")) >= 1, 30, "critical said"
        )
        first_audio = runtime.hub.speaker.last.first_audio_at

    interrupted = statuses(events, "interrupted")
    assert len(interrupted) == 1
    assert interrupted[0]["reason"] == "critical"
    assert interrupted[0]["outcome"] == "stopped"  # as docs/announcements.md says
    finished = statuses(events, "finished")
    assert finished[-1]["text"] == critical
    assert first_audio is not None
    assert first_audio - called < 0.25 + tts_s


def timer_lateness(hass: HomeAssistant) -> asyncio.Future[float]:
    """How late a 10 ms timer (``async_call_later``) fires, once it has.

    Real time, no manual clock: the point is what a blocked event loop does to
    everything else Home Assistant runs.
    """
    lateness: asyncio.Future[float] = hass.loop.create_future()
    due = time.monotonic() + 0.01

    @callback
    def fired(_now: datetime) -> None:
        lateness.set_result(time.monotonic() - due)

    async_call_later(hass, 0.01, fired)
    return lateness


@pytest.mark.parametrize("action", ["voicestack", "assist_satellite"])
async def test_a_megabyte_message_is_cut_before_any_work(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
    action: str,
) -> None:
    """A 1 MB message: the loop stays responsive, the first 1,000 characters are said.

    It used to freeze Home Assistant for about five minutes: the action split
    the whole text into sentences (quadratically) to synthesize it early.
    """
    message = "Hello there. " * 76923  # 1 MB
    async with AsyncExitStack() as stack:
        runtime, events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        lateness = timer_lateness(hass)
        if action == "voicestack":
            call = announce(hass, message=message)
        else:
            call = hass.services.async_call(
                "assist_satellite",
                "announce",
                {"entity_id": SATELLITE, "message": message, "preannounce": False},
                blocking=True,
            )
        task = hass.async_create_task(call)
        late_s = await lateness
        await wait_for(lambda: statuses(events, "started"), 30, "started")
        await runtime.hub.speaker.stop()  # 1,000 characters take a minute to say
        await task

    assert late_s < 0.1
    (started,) = statuses(events, "started")
    assert started["text"] == message[:1000].rstrip()
    cut = [r for r in caplog.records if "it was cut" in r.getMessage()]
    assert len(cut) == 1, cut


async def test_media_only_announcements_wait_their_turn(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    """Media while another announcement plays is played after it, never "busy".

    Home Assistant's base class refused the second with SatelliteBusyError.
    """
    async with AsyncExitStack() as stack:
        runtime, events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        await announce(hass, message="The dryer is done. The mail has arrived.")
        await wait_for(lambda: statuses(events, "started"), 30, "text started")
        calls = [
            hass.services.async_call(
                "assist_satellite",
                "announce",
                {"entity_id": SATELLITE, "media_id": PREANNOUNCE_URL, **extra},
                blocking=True,
            )
            for extra in ({"preannounce": False}, {"message": "A chime"})
        ]
        await asyncio.gather(*calls)
        await wait_for(lambda: statuses(events, "finished"), 30, "text finished")
        await wait_for(lambda: not runtime.hub.speaker.busy, 10, "speaker free")

    chime = await async_decode_media(hass, PREANNOUNCE_URL)
    text, *media = [
        speech.read_wav_pcm(tmp_path / f"played.{n}.wav") for n in (1, 2, 3)
    ]
    assert not (tmp_path / "played.4.wav").exists()
    assert words(speech.transcribe(text)) == words(
        "The dryer is done. The mail has arrived."
    )
    # After the text: the chime, and the chime after its own chime (one stream).
    assert sorted(speech.seconds(pcm) for pcm in media) == pytest.approx(
        [chime.seconds, 2 * chime.seconds], abs=0.05
    )


async def test_a_lost_satellite_says_high_priority_once_after_reconnect(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    message = "The garage door has been open for ten minutes."
    mic = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    async with AsyncExitStack() as stack:
        await set_up_assist(hass, stack, tmp_path, piper, whisper)
        first = satellite(tmp_path, "--mic-file", str(mic))
        sat = await first.__aenter__()
        entry = await add_voicestack(hass, stack, sat)
        runtime = runtime_of(entry)
        await wait_for(lambda: hass.states.get(SATELLITE).state == "idle", 10, "up")
        events: list[Event] = []
        stack.callback(hass.bus.async_listen("voicestack_announcement", events.append))
        await announce(hass, message=message, priority="high", category="warning")
        await wait_for(lambda: statuses(events, "started"), 20, "started")
        await first.__aexit__(None, None, None)  # gone mid-announcement
        await wait_for(lambda: not runtime.hub.connected, 10, "disconnected")
        await stack.enter_async_context(
            satellite(tmp_path, "--mic-file", str(mic), port=sat.port)
        )
        await wait_for(lambda: statuses(events, "finished"), 60, "said after reconnect")
        snapshot = runtime.announcements.announcer.snapshot()

    (finished,) = statuses(events, "finished")
    assert finished["text"] == message
    assert [e["reason"] for e in statuses(events, "interrupted")] == ["lost"]
    assert snapshot.spoken == 1
    assert snapshot.balanced
    played = sorted(tmp_path.glob("played.*.wav"))
    assert len(played) == 1  # the second satellite's only stream


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"message": ""}, "announce_empty_message"),
        ({"message": "x", "category": "gossip"}, "announce_unknown_category"),
        ({"message": "x", "target": "light.kitchen"}, "announce_not_a_speaker"),
        ({"message": "x", "priority": "urgent"}, "announce_invalid_priority"),
        ({"message": "x", "ttl": -5}, "announce_invalid_ttl"),
        ({"message": "x", "ttl": "soon"}, "announce_invalid_ttl"),
        ({"message": "x", "ttl": 90000}, "announce_invalid_ttl"),
    ],
)
async def test_bad_service_data_gets_a_translated_error(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    data: dict[str, Any],
    key: str,
) -> None:
    async with AsyncExitStack() as stack:
        await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        with pytest.raises(ServiceValidationError) as err:
            await announce(hass, **data)

    assert err.value.translation_key == key
    assert err.value.translation_domain == DOMAIN


async def test_a_critical_said_while_tts_is_down_is_said_once_it_is_back(
    hass: HomeAssistant, tmp_path: Path, whisper: servers.Server
) -> None:
    """Piper down when a critical comes: it is tried again and heard later."""
    message = "Smoke in the kitchen. Leave the house."
    async with AsyncExitStack() as stack:
        piper = stack.enter_context(servers.piper_server())
        runtime, events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        piper.process.terminate()  # the engine goes down
        await asyncio.to_thread(piper.process.wait)
        await announce(hass, message=message, priority="critical")
        await wait_for(
            lambda: runtime.announcements.announcer.snapshot().retries >= 1,
            20,
            "a retry",
        )
        stack.enter_context(servers.piper_server(piper.port))  # and comes back
        await wait_for(lambda: statuses(events, "finished"), 60, "said at last")
        snapshot = runtime.announcements.announcer.snapshot()

    (finished,) = statuses(events, "finished")
    assert finished["text"] == message
    assert snapshot.spoken == 1
    assert snapshot.retries >= 1
    assert snapshot.dropped_total == 0
    assert snapshot.balanced
    (played,) = tmp_path.glob("played.*.wav")
    assert words(speech.transcribe(speech.read_wav_pcm(played))) == words(message)


async def test_a_reload_says_what_was_queued_first(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    async with AsyncExitStack() as stack:
        runtime, events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        for text in ("The dryer is done.", "The mail has arrived."):
            await announce(hass, message=text, source=text)  # in the merge window
        assert await hass.config_entries.async_reload(runtime.hub.entry.entry_id)
        await hass.async_block_till_done()

    assert statuses(events, "dropped") == []
    (finished,) = statuses(events, "finished")
    assert len(finished["ids"]) == 2  # merged, said before the entities went
    assert len(list(tmp_path.glob("played.*.wav"))) == 1


async def test_targets_as_home_assistant_names_them(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    async with AsyncExitStack() as stack:
        runtime, _events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        device_id = runtime.hub.device_id()
        empty_area = ar.async_get(hass).async_get_or_create("Garage")
        targets = {
            "the target field, all": {"target": "all"},
            "the target field, ALL": {"target": "ALL"},
            "the target field, one": {"target": [SATELLITE]},
            "entity_id": {"entity_id": SATELLITE},
            "entity_id all": {"entity_id": "all"},
            "device_id": {"device_id": device_id},
            "a device and the entity": {"device_id": device_id, "entity_id": SATELLITE},
        }
        said = {}
        for n, (name, target) in enumerate(targets.items()):
            response = await announce(hass, message=f"Message {n}.", **target)
            said[name] = [r["satellite"] for r in response["announcements"]]
        with pytest.raises(ServiceValidationError) as empty:
            await announce(hass, message="Nobody hears this.", area_id=empty_area.id)
        with pytest.raises(ServiceValidationError) as light:
            await announce(hass, message="x", entity_id="light.kitchen")

    assert said == {name: [runtime.hub.satellite_id] for name in targets}
    assert empty.value.translation_key == "announce_no_satellite"
    assert light.value.translation_key == "announce_not_a_speaker"


async def test_metrics_view_balances_and_is_503_when_unloaded(
    hass: HomeAssistant,
    hass_client: Callable[..., Awaitable[Any]],
    hass_read_only_access_token: str,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> None:
    async with AsyncExitStack() as stack:
        runtime, _events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        await announce(hass, message="Hello there.", priority="low")
        await wait_for(
            lambda: runtime.announcements.announcer.snapshot().spoken == 1, 30, "said"
        )
        client = await hass_client()
        loaded = await client.get("/api/voicestack/metrics")
        body = await loaded.json()
        # The metrics name every satellite (its MAC address): admins only.
        reader = await hass_client(hass_read_only_access_token)
        not_admin = await reader.get("/api/voicestack/metrics")
        anonymous = await (await hass_client(None)).get("/api/voicestack/metrics")
    unloaded = await client.get("/api/voicestack/metrics")

    assert (not_admin.status, anonymous.status) == (403, 401)
    assert loaded.status == 200
    total = body["total"]
    assert total["received"] == 1
    assert total["spoken"] == 1
    assert unloaded.status == 503


async def test_diagnostics_keep_the_satellites_address_out(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    async with AsyncExitStack() as stack:
        runtime, _events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        entry = runtime.hub.entry
        diagnostics = await async_get_config_entry_diagnostics(hass, entry)

    assert diagnostics["entry"][CONF_HOST] == REDACTED
    assert diagnostics["entry"][CONF_PORT] == REDACTED


async def test_options_are_validated_per_field_and_applied_at_once(
    hass: HomeAssistant, tmp_path: Path, piper: servers.Server, whisper: servers.Server
) -> None:
    async with AsyncExitStack() as stack:
        runtime, _events = await loaded_satellite(hass, stack, tmp_path, piper, whisper)
        entry = runtime.hub.entry
        menu = await hass.config_entries.options.async_init(entry.entry_id)
        form = await hass.config_entries.options.async_configure(
            menu["flow_id"], {"next_step_id": "announcements"}
        )
        bad = await hass.config_entries.options.async_configure(
            form["flow_id"], {"coalesce_window_s": 1.0, "template_warning": "{oops"}
        )
        good = await hass.config_entries.options.async_configure(
            bad["flow_id"], {"coalesce_window_s": 1.0, "template_warning": "{count} x"}
        )
        await hass.async_block_till_done()
        applied = runtime.announcements.announcer.options

    assert bad["errors"] == {"template_warning": "invalid_template"}
    assert good["type"] == "create_entry"
    assert entry.options["coalesce_window_s"] == 1.0
    assert applied.coalesce_window_s == 1.0
    assert applied.template("warning") == "{count} x"
