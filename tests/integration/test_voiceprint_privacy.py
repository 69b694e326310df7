"""Voiceprints are biometric data: who may touch them, where they are, when they go.

Here Home Assistant's storage is real (the test harness keeps it in memory
otherwise): the file's mode and its removal are what is tested. Only an
administrator enrolls or forgets a voice; the file is 0600 (also one an
earlier VoiceStack left readable by all); a deleted person's voice is gone from
the file and from the satellite, a renamed one's follows them; the last
satellite entry removed takes every voice; diagnostics count the voices and
name no one. (The enrollment itself: test_enrollment.py.)
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
import json
from pathlib import Path
import stat
from typing import Any

from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.config_entries import SOURCE_IGNORE
from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError, Unauthorized
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.storage import Store
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, MockUser

from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.diagnostics import (
    async_get_config_entry_diagnostics,
)
from custom_components.voicestack.voiceprints.library import (
    STORAGE_KEY,
    STORAGE_VERSION,
    voiceprint_library,
)
from devstack import servers
from devstack.fake_satellite import FakeSatellite
from devstack.waiting import wait_for
from tests.integration.test_enrollment import ALICE, PRINT, SATELLITE, connected
import voicestack_protocol as protocol

PHRASE = [1.0] + [0.0] * 255


@pytest.fixture
def hass_config_dir(tmp_path: Path) -> str:
    """A config directory of this test's own: its storage is written for real."""
    path = tmp_path / "ha"
    path.mkdir()
    return str(path)


@pytest.fixture
def hass_storage() -> dict[str, Any]:
    """Real storage instead of the harness's in-memory one."""
    return {}


def voiceprints_file(hass: HomeAssistant) -> Path:
    """Where Home Assistant keeps the voiceprints."""
    return Path(hass.config.path(".storage", STORAGE_KEY))


def mode(path: Path) -> int:
    """The file's permission bits."""
    return stat.S_IMODE(path.stat().st_mode)


def satellite_voices(peer: FakeSatellite) -> list[str]:
    """The people whose voiceprints the satellite was last sent."""
    (*_, last) = peer.sent(protocol.BARGE_IN_CONFIG)
    return [v["person"] for v in last.data["voiceprints"]]


async def enroll(hass: HomeAssistant, person: str, user: MockUser) -> Any:
    """voicestack.enroll_voice for ``person`` on the peer, called by ``user``."""
    return await hass.services.async_call(
        DOMAIN,
        "enroll_voice",
        {"entity_id": SATELLITE, "person": person},
        blocking=True,
        return_response=True,
        context=Context(user_id=user.id),
    )


async def test_only_an_administrator_enrolls_or_forgets_a_voice(
    hass: HomeAssistant, hass_admin_user: MockUser, hass_read_only_user: MockUser
) -> None:
    hass.states.async_set(ALICE, "home")
    assert await async_setup_component(hass, DOMAIN, {})
    library = voiceprint_library(hass)
    await library.async_enroll(ALICE, [PHRASE], "Kitchen")
    read_only = Context(user_id=hass_read_only_user.id)
    admin = Context(user_id=hass_admin_user.id)

    with pytest.raises(Unauthorized):
        await hass.services.async_call(
            DOMAIN,
            "enroll_voice",
            {"entity_id": SATELLITE, "person": ALICE},
            blocking=True,
            return_response=True,
            context=read_only,
        )
    with pytest.raises(Unauthorized):
        await hass.services.async_call(
            DOMAIN, "forget_voice", {"person": ALICE}, blocking=True, context=read_only
        )
    assert list(library.people) == [ALICE]

    # An administrator gets as far as the satellite, and forgets.
    with pytest.raises(ServiceValidationError) as no_satellite:
        await hass.services.async_call(
            DOMAIN,
            "enroll_voice",
            {"entity_id": SATELLITE, "person": ALICE},
            blocking=True,
            return_response=True,
            context=admin,
        )
    assert no_satellite.value.translation_key == "not_a_satellite_entity"
    await hass.services.async_call(
        DOMAIN, "forget_voice", {"person": ALICE}, blocking=True, context=admin
    )
    assert library.people == {}


async def test_the_file_is_private_and_diagnostics_name_no_one(
    hass: HomeAssistant,
    pipeline: Pipeline,
    stack: AsyncExitStack,
    hass_admin_user: MockUser,
) -> None:
    peer, entry_id = await connected(hass, stack)
    peer.enroll_answers = [PRINT, PRINT, PRINT]

    response = await enroll(hass, ALICE, hass_admin_user)

    assert response == {
        "person": ALICE,
        "phrases": 3,
        "seconds": [2.5, 2.5, 2.5],
        # The stand-in's answers carry no level, room or cohort figures.
        "quality": {"margin": None, "rating": "unknown", "warnings": {}},
    }
    path = voiceprints_file(hass)
    assert mode(path) == 0o600
    # What is kept: the phrases' embeddings, when, and on which satellite.
    stored = json.loads(path.read_text())["data"]["voices"]
    assert list(stored) == [ALICE]
    assert sorted(stored[ALICE]) == ["embeddings", "enrolled_at", "satellite"]
    assert stored[ALICE]["embeddings"] == [PRINT["embedding"]] * 3
    assert stored[ALICE]["satellite"] == "test-satellite"

    entry = hass.config_entries.async_get_entry(entry_id)
    assert entry is not None
    diagnostics = await async_get_config_entry_diagnostics(hass, entry)
    assert diagnostics["barge_in"]["enrolled_people"] == 1
    text = json.dumps(diagnostics)
    for hidden in ("alice", "person.", "embedding", "voiceprints"):
        assert hidden not in text.lower(), hidden


async def test_a_voice_goes_with_its_person_and_follows_a_rename(
    hass: HomeAssistant,
    pipeline: Pipeline,
    stack: AsyncExitStack,
    hass_admin_user: MockUser,
    hass_ws_client: Callable[[HomeAssistant], Awaitable[Any]],
) -> None:
    for component in (DOMAIN, "person"):  # their views before HTTP starts
        assert await async_setup_component(hass, component, {})
    ws = await hass_ws_client(hass)
    await ws.send_json_auto_id({"type": "person/create", "name": "Alice"})
    created = await ws.receive_json()
    assert created["success"], created
    assert hass.states.get(ALICE) is not None
    peer, _entry_id = await connected(hass, stack, alice=False)
    peer.enroll_answers = [PRINT, PRINT, PRINT]
    await enroll(hass, ALICE, hass_admin_user)
    await wait_for(lambda: satellite_voices(peer) == [ALICE], 5, "Alice's voice sent")
    library = voiceprint_library(hass)

    er.async_get(hass).async_update_entity(ALICE, new_entity_id="person.alicia")
    await hass.async_block_till_done()

    assert list(library.people) == ["person.alicia"]
    await wait_for(
        lambda: satellite_voices(peer) == ["person.alicia"], 5, "the voice renamed"
    )

    await ws.send_json_auto_id(
        {"type": "person/delete", "person_id": created["result"]["id"]}
    )
    assert (await ws.receive_json())["success"]
    await hass.async_block_till_done()

    assert library.people == {}
    assert json.loads(voiceprints_file(hass).read_text())["data"]["voices"] == {}
    await wait_for(lambda: satellite_voices(peer) == [], 5, "the voice taken back")


async def test_the_voices_go_with_the_last_satellite(hass: HomeAssistant) -> None:
    assert await async_setup_component(hass, DOMAIN, {})
    await voiceprint_library(hass).async_enroll(ALICE, [PHRASE], "Kitchen")
    path = voiceprints_file(hass)
    entries = [
        MockConfigEntry(
            domain=DOMAIN,
            title=name,
            data={CONF_HOST: "127.0.0.1", CONF_PORT: servers.free_port()},
            unique_id=name,
            source=source,
        )
        for name, source in (("one", "user"), ("two", "user"), ("x", SOURCE_IGNORE))
    ]
    for entry in entries:
        entry.add_to_hass(hass)

    await hass.config_entries.async_remove(entries[0].entry_id)
    kept = path.exists(), list(voiceprint_library(hass).people)
    await hass.config_entries.async_remove(entries[1].entry_id)  # an ignored one stays

    assert kept == (True, [ALICE])
    assert not path.exists()
    assert voiceprint_library(hass).people == {}


async def test_a_file_an_earlier_version_left_readable_is_made_private(
    hass: HomeAssistant,
) -> None:
    await Store(hass, STORAGE_VERSION, STORAGE_KEY).async_save(
        {"voices": {ALICE: {"embeddings": [PHRASE], "satellite": "Kitchen"}}}
    )
    path = voiceprints_file(hass)
    path.chmod(0o644)

    assert await async_setup_component(hass, DOMAIN, {})

    assert mode(path) == 0o600
    assert list(voiceprint_library(hass).people) == [ALICE]
