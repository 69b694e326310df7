"""The recordings' websocket commands, HTTP view and panel, in a real Home Assistant.

Admins list, get, delete and subscribe; everyone else is refused (``unauthorized``
on the websocket, 403 over HTTP, 401 without a token). The panel is in the
sidebar while a satellite is set up, and a removed satellite's recordings go.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from homeassistant.components.frontend import DATA_PANELS
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.typing import (
    ClientSessionGenerator,
    WebSocketGenerator,
)

from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.core.wav import read_wav
from custom_components.voicestack.recording.library import (
    RecordingLibrary,
    recording_library,
)
from custom_components.voicestack.recording.panel import FRONTEND_DIR, PANEL_URL_PATH
from devstack import speech
from devstack.satellite import satellite
from tests.integration.assist import add_voicestack

KITCHEN = "01JDKITCHEN0000000000000000"
HALLWAY = "01JDHALLWAY0000000000000000"
UNKNOWN = "20261123T221500123456-0000abcd"
URL = "/api/voicestack/recordings/{}"
NOT_FOUND = (
    f"There is no recording {UNKNOWN} (it may have been deleted to stay within"
    " the limits)"  # Home Assistant drops the final full stop
)


@pytest.fixture
async def library(hass: HomeAssistant, config_dir: Path) -> RecordingLibrary:
    """VoiceStack set up without satellites, and its recordings."""
    assert await async_setup_component(hass, DOMAIN, {})
    return recording_library(hass)


def _meta(entry_id: str = KITCHEN, text: str = "turn on the light") -> dict[str, Any]:
    return {
        "version": 1,
        "entry_id": entry_id,
        "satellite": "Kitchen",
        "started": "2026-11-23T22:15:00.123456+00:00",
        "rate": 16000,
        "samples": 8000,
        "duration_s": 0.5,
        "stt": {"engine": "stt.faster_whisper", "raw": text, "tokens": text.split()},
        "text": text,
        "outcome": "routed",
        "result": "success",
        "decision": {"frame": "base", "rule": "agent"},
    }


async def _save(
    library: RecordingLibrary, entry_id: str = KITCHEN, keep: int = 20
) -> dict[str, Any]:
    meta = _meta(entry_id)
    await library.async_save(meta, speech.silence(0.5), keep=keep, max_bytes=10**6)
    return meta


async def test_admin_lists_gets_and_deletes(
    hass_ws_client: WebSocketGenerator, library: RecordingLibrary
) -> None:
    first = await _save(library, KITCHEN)
    second = await _save(library, HALLWAY)
    client = await hass_ws_client()

    await client.send_json_auto_id({"type": "voicestack/recordings/list"})
    listed = await client.receive_json()
    await client.send_json_auto_id(
        {"type": "voicestack/recordings/list", "entry_id": KITCHEN}
    )
    kitchen = await client.receive_json()
    await client.send_json_auto_id(
        {"type": "voicestack/recordings/get", "recording_id": first["id"]}
    )
    got = await client.receive_json()
    await client.send_json_auto_id(
        {"type": "voicestack/recordings/delete", "recording_id": first["id"]}
    )
    deleted = await client.receive_json()
    await client.send_json_auto_id(
        {"type": "voicestack/recordings/delete", "recording_id": first["id"]}
    )
    again = await client.receive_json()
    await client.send_json_auto_id({"type": "voicestack/recordings/list"})
    after = await client.receive_json()

    assert [r["id"] for r in listed["result"]["recordings"]] == [
        second["id"],
        first["id"],
    ]
    (summary,) = kitchen["result"]["recordings"]
    assert summary == {
        "id": first["id"],
        "entry_id": KITCHEN,
        "satellite": "Kitchen",
        "started": "2026-11-23T22:15:00.123456+00:00",
        "duration_s": 0.5,
        "text": "turn on the light",
        "outcome": "routed",
        "result": "success",
        "stt_raw": "turn on the light",
        "frame": "base",
        "rule": "agent",
        "bytes": 44 + 16000,
    }
    assert got["result"] == {"recording": first}
    assert deleted["result"] == {"deleted": True}
    assert again["success"] is False
    assert again["error"]["code"] == "not_found"
    assert again["error"]["translation_key"] == "recording_not_found"
    assert [r["id"] for r in after["result"]["recordings"]] == [second["id"]]


async def test_unknown_and_malformed_ids_are_clear_errors(
    hass_ws_client: WebSocketGenerator, library: RecordingLibrary, config_dir: Path
) -> None:
    secret = config_dir / "secrets.yaml"
    secret.write_text("password: x\n")
    client = await hass_ws_client()

    await client.send_json_auto_id(
        {"type": "voicestack/recordings/get", "recording_id": UNKNOWN}
    )
    unknown = await client.receive_json()
    answers = []
    for command, field, value in [
        ("get", "recording_id", "../../secrets"),
        ("delete", "recording_id", "../secrets.yaml"),
        ("delete", "recording_id", f"{UNKNOWN}/.."),
        ("list", "entry_id", ".."),
    ]:
        await client.send_json_auto_id(
            {"type": f"voicestack/recordings/{command}", field: value}
        )
        answers.append(await client.receive_json())

    assert unknown["error"] == {
        "code": "not_found",
        "message": NOT_FOUND,
        "translation_key": "recording_not_found",
        "translation_domain": DOMAIN,
        "translation_placeholders": {"recording_id": UNKNOWN},
    }
    for answer in answers:
        assert answer["error"]["code"] == "invalid_format"
        assert "not a recording id" in answer["error"]["message"] or (
            "not a config entry id" in answer["error"]["message"]
        )
    assert secret.read_text() == "password: x\n"


async def test_subscribers_see_recordings_come_and_go(
    hass_ws_client: WebSocketGenerator, library: RecordingLibrary
) -> None:
    oldest = await _save(library)
    client = await hass_ws_client()
    await client.send_json_auto_id({"type": "voicestack/recordings/subscribe"})
    subscribed = await client.receive_json()
    subscription = subscribed["id"]

    added = await _save(library, keep=1)  # the bound pushes the oldest out
    pushed_out = await client.receive_json()
    arrived = await client.receive_json()
    await client.send_json_auto_id(
        {"type": "voicestack/recordings/delete", "recording_id": added["id"]}
    )
    removed = await client.receive_json()
    deleted = await client.receive_json()
    await client.send_json_auto_id(
        {"type": "unsubscribe_events", "subscription": subscription}
    )
    unsubscribed = await client.receive_json()
    await _save(library)
    await client.send_json_auto_id({"type": "voicestack/recordings/list"})
    listed = await client.receive_json()  # the next message: no event came first

    assert subscribed["success"] is True
    assert subscribed["result"] is None
    assert pushed_out == {
        "id": subscription,
        "type": "event",
        "event": {"type": "removed", "recording_id": oldest["id"]},
    }
    assert arrived["event"]["type"] == "added"
    assert arrived["event"]["recording"]["id"] == added["id"]
    assert arrived["event"]["recording"]["text"] == "turn on the light"
    assert removed["event"] == {"type": "removed", "recording_id": added["id"]}
    assert deleted["result"] == {"deleted": True}
    assert unsubscribed["success"] is True
    assert listed["type"] == "result"
    assert len(listed["result"]["recordings"]) == 1


@pytest.mark.parametrize(
    "message",
    [
        {"type": "voicestack/recordings/list"},
        {"type": "voicestack/recordings/get", "recording_id": UNKNOWN},
        {"type": "voicestack/recordings/subscribe"},
        {"type": "voicestack/recordings/delete", "recording_id": UNKNOWN},
    ],
)
async def test_a_non_admin_is_refused_every_command(
    hass_ws_client: WebSocketGenerator,
    hass_read_only_access_token: str,
    library: RecordingLibrary,
    message: dict[str, Any],
) -> None:
    meta = await _save(library)
    if "recording_id" in message:
        message = {**message, "recording_id": meta["id"]}
    client = await hass_ws_client(access_token=hass_read_only_access_token)

    await client.send_json_auto_id(message)
    answer = await client.receive_json()

    assert answer["success"] is False
    assert answer["error"]["code"] == "unauthorized"
    assert [r["id"] for r in await library.async_list()] == [meta["id"]]


async def test_admins_download_the_wav_and_the_json(
    hass_client: ClientSessionGenerator, library: RecordingLibrary
) -> None:
    meta = await _save(library)
    client = await hass_client()

    wav = await client.get(URL.format(f"{meta['id']}.wav"))
    audio = await wav.read()
    json_file = await client.get(URL.format(f"{meta['id']}.json"))
    body = await json_file.json()

    assert wav.status == 200
    assert wav.headers["Content-Type"] == "audio/wav"
    pcm = read_wav(audio)
    assert (pcm.rate, pcm.width, pcm.channels, pcm.samples) == (16000, 2, 1, 8000)
    assert len(audio) == meta["bytes"]
    assert json_file.status == 200
    assert json_file.headers["Content-Disposition"] == (
        f'attachment; filename="{meta["id"]}.json"'
    )
    assert body == meta


async def test_the_files_are_refused_to_others(
    hass_client: ClientSessionGenerator,
    hass_client_no_auth: ClientSessionGenerator,
    hass_read_only_access_token: str,
    library: RecordingLibrary,
) -> None:
    meta = await _save(library)
    reader = await hass_client(hass_read_only_access_token)
    anonymous = await hass_client_no_auth()
    statuses = {}

    for kind in ("wav", "json"):
        path = URL.format(f"{meta['id']}.{kind}")
        statuses[kind] = (
            (await reader.get(path)).status,
            (await anonymous.get(path)).status,
        )

    assert statuses == {"wav": (403, 401), "json": (403, 401)}


@pytest.mark.parametrize(
    ("name", "status"),
    [
        (f"{UNKNOWN}.wav", 404),
        (f"{UNKNOWN}.json", 404),
        ("{id}.mp3", 404),
        ("{id}", 400),
        ("..%2F..%2Fsecrets.yaml", 400),
        ("..%2F..%2Fsecrets.json", 400),
        ("%2E%2E%2F%2E%2E%2Fsecrets.json", 400),
        ("{id}%00.wav", 400),
        ("{id}.wav%2F..%2F..%2F..%2Fsecrets.yaml", 400),
        ("..%2F" + KITCHEN + "%2F{id}.wav", 400),
    ],
)
async def test_unknown_and_traversing_names_touch_nothing_outside(
    hass_client: ClientSessionGenerator,
    library: RecordingLibrary,
    config_dir: Path,
    name: str,
    status: int,
) -> None:
    secret = config_dir / "secrets.yaml"
    secret.write_text("password: x\n")
    (config_dir / "secrets.json").write_text('{"password": "x"}')
    meta = await _save(library)
    client = await hass_client()

    response = await client.get(
        URL.format(name.format(id=meta["id"])), allow_redirects=False
    )
    text = await response.text()

    assert response.status == status
    assert "password" not in text
    assert secret.read_text() == "password: x\n"
    assert [r["id"] for r in await library.async_list()] == [meta["id"]]


async def test_the_panel_follows_the_satellites_and_a_removed_one_loses_its_recordings(
    hass: HomeAssistant,
    config_dir: Path,
    tmp_path: Path,
    hass_client: Callable[[], Awaitable[Any]],
) -> None:
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    changes: list[dict[str, Any]] = []
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
    async with AsyncExitStack() as stack:
        first = await stack.enter_async_context(
            satellite(tmp_path / "one", "--mic-file", str(wav))
        )
        second = await stack.enter_async_context(
            satellite(tmp_path / "two", "--mic-file", str(wav))
        )
        one = await add_voicestack(hass, AsyncExitStack(), first)
        panel = hass.data[DATA_PANELS][PANEL_URL_PATH]
        two = await add_voicestack(hass, AsyncExitStack(), second)
        library = recording_library(hass)
        stack.callback(library.async_subscribe(changes.append))
        kept = await _save(library, two.entry_id)
        gone = await _save(library, one.entry_id)
        client = await hass_client()
        module = await client.get("/voicestack_static/voicestack-debug-panel.js")
        script = await module.read()

        assert await hass.config_entries.async_unload(one.entry_id)
        after_first = PANEL_URL_PATH in hass.data[DATA_PANELS]
        await hass.config_entries.async_remove(one.entry_id)
        assert await hass.config_entries.async_unload(two.entry_id)
        after_last = PANEL_URL_PATH in hass.data[DATA_PANELS]
        assert await hass.config_entries.async_setup(two.entry_id)
        again = PANEL_URL_PATH in hass.data[DATA_PANELS]
        assert await hass.config_entries.async_unload(two.entry_id)

    assert panel.to_response()["require_admin"] is True
    assert panel.sidebar_title == "Voice debug"
    assert panel.sidebar_icon == "mdi:waveform"
    assert panel.config["_panel_custom"]["name"] == "voicestack-debug-panel"
    assert panel.config["_panel_custom"]["module_url"] == (
        "/voicestack_static/voicestack-debug-panel.js"
    )
    assert (after_first, after_last, again) == (True, False, True)
    assert PANEL_URL_PATH not in hass.data[DATA_PANELS]
    assert changes[-1] == {"type": "removed", "recording_id": gone["id"]}
    assert [r["id"] for r in await library.async_list()] == [kept["id"]]
    recordings = config_dir / "voicestack" / "recordings"
    assert sorted(p.name for p in recordings.iterdir()) == [two.entry_id]
    # The panel itself, served from the integration's folder.
    assert module.status == 200
    assert script == (FRONTEND_DIR / "voicestack-debug-panel.js").read_bytes()
