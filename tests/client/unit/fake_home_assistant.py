"""A stand-in for Home Assistant's websocket API, for the client's HA-free tests.

Home Assistant cannot run on the satellite's Python 3.11, where these tests
must also pass, so this speaks the part of its protocol the client uses, with
Home Assistant's message shapes: ``auth_required`` → ``auth`` →
``auth_ok``/``auth_invalid`` (then it hangs up), and ``call_service`` answered
by a ``result``. ``voicestack.announce`` checks the priority as VoiceStack does
and answers with receipts. tests/integration/test_client.py runs the same
client against the real Home Assistant.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
import itertools
from typing import Any

from aiohttp import WSMsgType, web

from tests.client.loopback_site import LoopbackSite, serve

LOGIN = "good-token"  # the one access token the fake accepts
PRIORITIES = ("critical", "high", "normal", "low")


@dataclass
class FakeHomeAssistant:
    """What the fake saw: login attempts and the announce calls, in order."""

    logins: int = 0
    calls: list[dict[str, Any]] = field(default_factory=list)
    announce_loaded: bool = True  # False: voicestack.announce is "not found"
    hold_answers: bool = False  # True: take calls, never answer (a call in flight)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def messages(self) -> list[str]:
        """The ``message`` of every announce call so far."""
        return [call["message"] for call in self.calls]

    async def websocket(self, request: web.Request) -> web.WebSocketResponse:
        """``/api/websocket``."""
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_json({"type": "auth_required", "ha_version": "fake"})
        auth = await ws.receive_json()
        self.logins += 1
        if auth.get("access_token") != LOGIN:
            await ws.send_json(
                {"type": "auth_invalid", "message": "Invalid access token or password"}
            )
            await ws.close()
            return ws
        await ws.send_json({"type": "auth_ok", "ha_version": "fake"})
        async for msg in ws:
            if msg.type is WSMsgType.TEXT:
                answer = self._answer(msg.json())
                if not self.hold_answers:
                    await ws.send_json(answer)
        return ws

    def _answer(self, command: dict[str, Any]) -> dict[str, Any]:
        result: dict[str, Any] = {"id": command["id"], "type": "result"}
        service = (command.get("domain"), command.get("service"))
        if service != ("voicestack", "announce") or not self.announce_loaded:
            return result | _error(
                "not_found", "Service voicestack.announce not found."
            )
        data = command["service_data"]
        if data.get("priority", "normal") not in PRIORITIES:
            return result | _error(
                "service_validation_error",
                f"Validation error: Unknown priority: {data['priority']!r}",
                translation_domain="voicestack",
                translation_key="announce_invalid_priority",
            )
        self.calls.append(data)
        receipt = {"satellite": "kitchen", "id": f"fake-{next(self._ids)}"}
        response = {"announcements": [receipt | {"status": "queued", "reason": None}]}
        return result | {
            "success": True,
            "result": {"context": {}, "response": response},
        }


def _error(code: str, message: str, **translation: str) -> dict[str, Any]:
    return {
        "success": False,
        "error": {"code": code, "message": message, **translation},
    }


@asynccontextmanager
async def fake_home_assistant() -> AsyncIterator[
    tuple[FakeHomeAssistant, LoopbackSite]
]:
    """The fake, listening on a loopback port."""
    fake = FakeHomeAssistant()
    app = web.Application()
    app.router.add_get("/api/websocket", fake.websocket)
    async with serve(app) as site:
        yield fake, site
