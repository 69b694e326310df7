"""The README's screenshots, taken from a real Home Assistant in Debian's Chromium.

The dev stack's Home Assistant (``devstack.home``: the demo home, whisper and
Piper as Wyoming servers, an Assist pipeline) with its web UI, a real
voicestack-satellite that hears "Hey Jarvis. Turn on the kitchen lights." with
*Record requests* on, and an automation that calls ``voicestack.announce``.
Playwright drives ``/usr/bin/chromium`` (never a downloaded browser), logs in
through Home Assistant's login page, and saves:

- ``readme-device.png``: the satellite's device page (its enabled entities);
- ``readme-debug-panel.png``: the Voice debug panel with that request open;
- ``readme-automation.png``: the automation in Home Assistant's editor.

Run (from the repository's root)::

    scripts/ha-run .venv/bin/python -m scripts.make_screenshots --out docs/images
"""

from __future__ import annotations

import argparse
import asyncio
from contextlib import AsyncExitStack
import json
from pathlib import Path
import tempfile
from typing import Any

from homeassistant.auth.providers.homeassistant import HassAuthProvider
from homeassistant.setup import async_setup_component
from playwright.async_api import Locator, Page, async_playwright

from custom_components.voicestack.recording.library import recording_library
from devstack import speech
from devstack.engines import start_engines
from devstack.home import Home, Owner
from devstack.home_config import KITCHEN_COMMAND
from devstack.satellite import Satellite
from devstack.spoken_request import prepare_mic, spoken_request
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from devstack.web_admin import ONBOARDED, PASSWORD, USERNAME, add_admin

CHROMIUM = "/usr/bin/chromium"
TIMEOUT_MS = 60_000
SETTLE_MS = 2_000  # the UI's fade-ins and late cards, before a picture
AUTOMATION_ID = "good_morning_bins"


def automation(satellite: str) -> dict[str, Any]:
    """The README's example: a morning reminder on the kitchen satellite."""
    return {
        "id": AUTOMATION_ID,
        "alias": "Bins reminder",
        "description": "Says on the kitchen satellite that the bins go out today.",
        "triggers": [{"trigger": "time", "at": "07:30:00", "weekday": ["tue"]}],
        "actions": [
            {
                "action": "voicestack.announce",
                "target": {"entity_id": satellite},
                "data": {
                    "message": "Good morning. The bins go out today.",
                    "priority": "normal",
                },
            }
        ],
        "mode": "single",
    }


async def add_automation(home: Home, satellite: str) -> None:
    """The automation, in automations.yaml as the editor saves it, and loaded."""
    conf = automation(satellite)
    path = home.config_dir / "automations.yaml"
    await asyncio.to_thread(path.write_text, json.dumps([conf], indent=2))
    assert await async_setup_component(home.hass, "automation", {"automation": [conf]})


async def record_one_request(
    home: Home, stack: AsyncExitStack, workdir: Path
) -> tuple[str, str]:
    """A satellite hears the kitchen command with recording on.

    The recording's id and the satellite's device.
    """
    pcm = speech.silence(3.0) + spoken_request(KITCHEN_COMMAND)
    mic = await asyncio.to_thread(prepare_mic, workdir / "mic.wav", pcm)
    satellite = await stack.enter_async_context(
        Satellite.running(workdir / "satellite", mic.path)
    )
    library = recording_library(home.hass)
    added: list[dict[str, Any]] = []
    stack.callback(library.async_subscribe(added.append))
    entry = await home.add_satellite(Owner.VOICESTACK, satellite.port)
    hub = runtime_of(entry).hub
    record = hub.entity_id("switch", "record_requests")
    await home.hass.services.async_call(
        "switch", "turn_on", {"entity_id": record}, blocking=True
    )
    await wait_for(lambda: bool(added), 60, "the request recorded")
    await add_automation(home, home.entity_of(entry, "assist_satellite"))
    device_id = hub.device_id()
    assert device_id is not None
    return str(added[0]["recording"]["id"]), device_id


async def log_in(page: Page, url: str) -> None:
    """Open ``url`` through Home Assistant's login page."""
    await page.goto(url)
    await page.locator("input[name='username']").fill(USERNAME)
    await page.locator("input[name='password']").fill(PASSWORD)
    await page.locator("input[name='password']").press("Enter")
    await page.wait_for_url(url, timeout=TIMEOUT_MS)


async def save(page: Page, ready: Locator, target: Path) -> None:
    """Once ``ready`` shows and the page settled, the window as ``target``.

    Home Assistant's pages scroll inside themselves: the window's height is
    what is in the picture.
    """
    await ready.first.wait_for(timeout=TIMEOUT_MS)
    await page.wait_for_load_state("networkidle")
    await page.wait_for_timeout(SETTLE_MS)
    await page.screenshot(path=target)
    print(f"saved {target}")


async def take(home: Home, recording_id: str, device_id: str, out: Path) -> None:
    """The three pictures."""
    base = f"http://127.0.0.1:{home.http_port}"
    panel = "voicestack-debug-panel"
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox"], headless=True
        )
        try:
            page = await browser.new_page(viewport={"width": 1280, "height": 1640})
            await log_in(page, f"{base}/config/devices/device/{device_id}")
            cards = page.locator("ha-config-device-page ha-device-entities-card")
            await save(page, cards, out / "readme-device.png")

            await page.set_viewport_size({"width": 1280, "height": 1000})
            await page.goto(f"{base}/voicestack-debug")
            await page.locator(f"{panel} button[data-id='{recording_id}']").click()
            details = page.locator(f"{panel} .details[data-loaded='{recording_id}']")
            await save(page, details, out / "readme-debug-panel.png")

            await page.set_viewport_size({"width": 1280, "height": 1300})
            await page.goto(f"{base}/config/automation/edit/{AUTOMATION_ID}")
            await page.get_by_text("VoiceStack: Announce").first.click()
            fields = page.get_by_text("Message")
            await save(page, fields, out / "readme-automation.png")
        finally:
            await browser.close()


async def main(out: Path) -> None:
    """Start the stack, make the request and the automation, take the pictures."""
    with tempfile.TemporaryDirectory(prefix="voicestack-screenshots-") as tmp:
        workdir = Path(tmp)
        storage = workdir / "config" / ".storage"
        storage.mkdir(parents=True)
        (storage / "onboarding").write_text(json.dumps(ONBOARDED))
        async with AsyncExitStack() as stack:
            engines = await start_engines(stack)
            home = await stack.enter_async_context(Home.running(workdir / "config"))
            await home.set_up_assist(engines)
            assert await async_setup_component(home.hass, "frontend", {})
            provider = next(
                p
                for p in home.hass.auth.auth_providers
                if isinstance(p, HassAuthProvider)
            )
            await provider.async_initialize()
            await add_admin(home.hass, provider)
            recording_id, device_id = await record_one_request(home, stack, workdir)
            await take(home, recording_id, device_id, out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("docs/images"))
    folder = parser.parse_args().out
    folder.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(folder))
