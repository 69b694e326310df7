"""The satellite's announce socket end to end (issue 16): a line on the Pi is spoken.

A real satellite process with ``--announce-socket``, real Home Assistant with
VoiceStack, real Piper: a JSON line written to the socket becomes a
``voicestack_announcement`` on that satellite and is heard in what it played;
bad lines, lines over the rate and lines while Home Assistant is away get their
error lines; a value Home Assistant refuses is logged and counted there. Bad
``voicestack-announce`` data, which a real satellite never sends, comes from the
misbehaving peer of ``devstack.fake_satellite``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
import json
import logging
from pathlib import Path
from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import Event, HomeAssistant
import pytest
from wyoming.event import Event as WyomingEvent, async_write_event

from custom_components.voicestack.const import EVENT_ANNOUNCEMENT
from custom_components.voicestack.diagnostics import async_get_config_entry_diagnostics
from custom_components.voicestack.runtime import SatelliteRuntime
from devstack import servers, speech
from devstack.fake_satellite import FakeSatellite
from devstack.satellite import RunningSatellite, satellite
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack, set_up_assist, words
from voicestack_protocol import ANNOUNCE

pytestmark = pytest.mark.e2e

SATELLITE = "assist_satellite.test_satellite"
ASKED = "accepts ('voicestack-announce',)"  # the satellite's log of our hello
OWNER_GONE = "disconnected; waiting for the next"
NOT_RUN = (
    "no Home Assistant is connected (nothing is queued on the satellite; "
    "send the line again once it is)"
)
LOGGER = "custom_components.voicestack.announce.socket_requests"
EXAMPLE = '{"message": "Someone is at the door"}'


@dataclass(slots=True)
class Local:
    """The satellite, its announce socket, and what Home Assistant made of it."""

    sat: RunningSatellite
    socket: Path
    entry: ConfigEntry
    runtime: SatelliteRuntime
    events: list[Event]


@asynccontextmanager
async def local_announcements(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
) -> AsyncIterator[Local]:
    """Assist, a satellite with an announce socket, its entry, once it asked."""
    async with AsyncExitStack() as stack:
        await set_up_assist(hass, stack, tmp_path, piper, whisper)
        mic = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
        path = tmp_path / "a.sock"
        args = ("--mic-file", str(mic), "--announce-socket", str(path))
        sat = await stack.enter_async_context(satellite(tmp_path, *args))
        entry = await add_voicestack(hass, stack, sat)
        await wait_for(lambda: hass.states.get(SATELLITE).state == "idle", 10, "up")
        await wait_for(lambda: ASKED in sat.log_text(), 10, "the hello read")
        events: list[Event] = []
        stack.callback(hass.bus.async_listen(EVENT_ANNOUNCEMENT, events.append))
        yield Local(sat, path, entry, runtime_of(entry), events)


async def ask(path: Path, *lines: bytes | dict[str, Any]) -> list[dict[str, Any]]:
    """Write ``lines`` on one connection at once; their answers, one per line."""
    raw = [
        json.dumps(line).encode() if isinstance(line, dict) else line for line in lines
    ]
    reader, writer = await asyncio.open_unix_connection(str(path))
    try:
        writer.write(b"".join(line + b"\n" for line in raw))
        async with asyncio.timeout(10):
            return [json.loads(await reader.readline()) for _ in raw]
    finally:
        writer.close()
        await writer.wait_closed()


async def test_a_line_on_the_socket_is_spoken_on_that_satellite(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    message = "Someone is at the front door."
    caplog.set_level(logging.INFO, LOGGER)
    async with local_announcements(hass, tmp_path, piper, whisper) as local:
        (answer,) = await ask(
            local.socket, {"message": message, "priority": "high", "source": "bell"}
        )
        await wait_for(
            lambda: any(e.data["status"] == "finished" for e in local.events),
            60,
            "said",
        )
        requests = local.runtime.announce_requests
        counts = (requests.accepted, requests.rejected)
        hub = local.runtime.hub
        (finished,) = [e.data for e in local.events if e.data["status"] == "finished"]
        # Home Assistant goes away: nothing is queued on the satellite.
        assert await hass.config_entries.async_unload(hub.entry.entry_id)
        await wait_for(lambda: OWNER_GONE in local.sat.log_text(), 10, "owner gone")
        (away,) = await ask(local.socket, {"message": "Anyone?"})

    assert answer["ok"] is True
    assert finished["entity_id"] == SATELLITE
    assert finished["satellite"] == hub.satellite_id
    assert finished["text"] == message
    assert finished["priority"] == "high"
    (announcement_id,) = finished["ids"]
    assert (
        f"test-satellite: local announcement {answer['id']} from "
        f"satellite:test-satellite/bell: {announcement_id} queued"
    ) in caplog.text
    assert counts == (1, 0)
    (played,) = tmp_path.glob("played.*.wav")
    assert words(speech.transcribe(speech.read_wav_pcm(played))) == words(message)
    assert away == {"ok": False, "error": NOT_RUN}


async def test_bad_lines_the_rate_and_a_refused_category_get_their_answers(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with local_announcements(hass, tmp_path, piper, whisper) as local:
        gossip, bad_json, unknown = await ask(
            local.socket,
            {"message": "Psst.", "category": "gossip"},  # Home Assistant's to refuse
            b"Someone is at the door",
            {"message": "x", "volume": 11},
        )
        requests = local.runtime.announce_requests
        await wait_for(lambda: requests.rejected == 1, 10, "the refusal")
        diagnostics = await async_get_config_entry_diagnostics(hass, local.entry)
        # 27 more lines at once: 7 use up the 10 tokens, the rest are over the
        # rate (one token comes back per second; these take milliseconds).
        flood = await ask(local.socket, *[b"{}"] * 27)
        (too_long,) = await ask(local.socket, b'{"message": "' + b"a" * 5000 + b'"}')
        log = local.sat.log_text()

    assert gossip["ok"] is True  # sent: the satellite does not know categories
    assert f"refused local announcement {gossip['id']}: " in caplog.text
    assert "(announce_unknown_category)" in caplog.text
    assert requests.accepted == 0
    assert diagnostics["local_announce_requests"] == {"accepted": 0, "rejected": 1}
    assert bad_json == {
        "ok": False,
        "error": "not valid JSON: Expecting value at column 1",
    }
    assert unknown["error"].startswith("unknown field(s) 'volume'; allowed: message")
    required = {"ok": False, "error": f"message is required, e.g. {EXAMPLE}"}
    over = [a for a in flood if a != required]
    assert flood[:7] == [required] * 7
    assert len(over) >= 10
    assert all(
        a["error"].startswith("over the rate limit of 10 lines per 10 s; try again in ")
        for a in over
    )
    assert too_long == {
        "ok": False,
        "error": "line longer than 4096 bytes; closing the connection",
    }
    assert "Announce socket: refused a line from pid" in log
    assert local.events == []  # nothing was said


async def test_bad_announce_data_from_a_peer_is_logged_and_counted(
    hass: HomeAssistant,
    tmp_path: Path,
    piper: servers.Server,
    whisper: servers.Server,
    caplog: pytest.LogCaptureFixture,
) -> None:
    async with AsyncExitStack() as stack:
        await set_up_assist(hass, stack, tmp_path, piper, whisper)
        peer = await stack.enter_async_context(FakeSatellite())
        entry = await add_voicestack(hass, stack, peer)  # type: ignore[arg-type]
        await wait_for(lambda: peer.running, 10, "run-satellite")
        requests = runtime_of(entry).announce_requests
        assert peer.owner is not None
        bad = WyomingEvent(ANNOUNCE, {"id": "x-1", "message": "Hi", "ttl": "soon"})
        await async_write_event(bad, peer.owner)
        await wait_for(lambda: requests.rejected == 1, 10, "the refusal")

    assert requests.accepted == 0
    assert (
        "test-satellite: refused local announcement 'x-1': "
        "voicestack-announce: ttl 'soon' is not seconds"
    ) in caplog.text
