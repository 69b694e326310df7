"""One authenticated connection to Home Assistant's websocket API.

The handshake is Home Assistant's: it sends ``auth_required``, the client
answers with its long-lived access token, and Home Assistant replies
``auth_ok`` or ``auth_invalid`` (and hangs up). After that, commands carry an
``id`` and each gets a ``result`` with the same ``id``. A reader task takes
every incoming message, so a dropped connection is noticed at once, not only
at the next send.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
import contextlib
import itertools
import json
import logging
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from .errors import AuthenticationError, ConnectionLostError, ServiceCallError

WEBSOCKET_PATH: Final = "/api/websocket"
_LOGGER = logging.getLogger(__name__)
_SCHEMES: Final = {"http": "ws", "https": "wss", "ws": "ws", "wss": "wss"}


def websocket_url(url: str) -> str:
    """Home Assistant's websocket address for its base ``url``.

    ``http://ha.local:8123`` becomes ``ws://ha.local:8123/api/websocket``; a
    ``ws://`` or ``wss://`` address with that path is taken as it is.
    """
    parts = urlsplit(url.strip())
    scheme = _SCHEMES.get(parts.scheme.lower())
    if scheme is None or not parts.hostname:
        raise ValueError(
            f"not a Home Assistant address: {url!r} (expected http://host:8123)"
        )
    path = parts.path.rstrip("/")
    if not path.endswith(WEBSOCKET_PATH):
        path += WEBSOCKET_PATH
    return urlunsplit((scheme, parts.netloc, path, "", ""))


class HomeAssistantConnection:
    """An open, authenticated websocket; ``connect`` makes one."""

    def __init__(
        self,
        ws: aiohttp.ClientWebSocketResponse,
        ha_version: str,
        answer_timeout_s: float = 30.0,
    ) -> None:
        """Take over ``ws`` after a successful handshake and start reading."""
        self._ws = ws
        self._answer_timeout_s = answer_timeout_s
        self.ha_version = ha_version
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Mapping[str, Any]]] = {}
        loop = asyncio.get_running_loop()
        self._lost: asyncio.Future[None] = loop.create_future()
        self._reader = loop.create_task(self._read(), name="voicestack-client-reader")

    @classmethod
    async def connect(
        cls,
        session: aiohttp.ClientSession,
        url: str,
        token: str,
        *,
        timeout_s: float = 10.0,
        answer_timeout_s: float = 30.0,
    ) -> HomeAssistantConnection:
        """Open ``url``'s websocket and authenticate with ``token``.

        Raises ``AuthenticationError`` if the token is refused and
        ``ConnectionLostError`` if Home Assistant cannot be reached (or is not
        Home Assistant) within ``timeout_s``. Calls wait ``answer_timeout_s``
        for their answer.
        """
        address = websocket_url(url)
        try:
            async with asyncio.timeout(timeout_s):
                ws = await session.ws_connect(address)
                try:
                    version = await _authenticate(ws, token)
                except BaseException:
                    await ws.close()
                    raise
        except (aiohttp.ClientError, OSError, TimeoutError) as err:
            reason = str(err) or type(err).__name__
            raise ConnectionLostError(f"cannot connect to {address}: {reason}") from err
        return cls(ws, version, answer_timeout_s)

    @property
    def closed(self) -> bool:
        """The connection is gone (closed by either side)."""
        return self._lost.done()

    async def wait_closed(self) -> None:
        """Return once the connection is gone."""
        await asyncio.shield(self._lost)

    async def call_service(
        self,
        domain: str,
        service: str,
        service_data: Mapping[str, Any],
        *,
        return_response: bool = False,
    ) -> Any:
        """Call ``domain.service``; its response data (``None`` without one).

        Raises ``ServiceCallError`` (or a subclass) with Home Assistant's message
        when it answers with an error, ``ConnectionLostError`` when the
        connection drops (or nothing answers in ``answer_timeout_s``).
        """
        if self.closed:
            raise ConnectionLostError("the connection to Home Assistant is closed")
        msg_id = next(self._ids)
        answer = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = answer
        try:
            await self._ws.send_json(
                {
                    "id": msg_id,
                    "type": "call_service",
                    "domain": domain,
                    "service": service,
                    "service_data": dict(service_data),
                    "return_response": return_response,
                }
            )
            async with asyncio.timeout(self._answer_timeout_s):
                result = await answer
        except TimeoutError as err:  # before OSError, whose subclass it is
            raise ConnectionLostError(
                f"no answer from Home Assistant within {self._answer_timeout_s:g} s"
            ) from err
        except (aiohttp.ClientError, OSError) as err:
            raise ConnectionLostError(
                f"sending to Home Assistant failed: {err}"
            ) from err
        finally:
            self._pending.pop(msg_id, None)
        if not result.get("success"):
            raise ServiceCallError.from_result(result.get("error") or {})
        return (result.get("result") or {}).get("response")

    async def close(self) -> None:
        """Stop reading, then close the websocket."""
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader
        await self._ws.close()

    async def _read(self) -> None:
        try:
            async for msg in self._ws:
                if msg.type is not aiohttp.WSMsgType.TEXT:
                    break
                self._dispatch(json.loads(msg.data))
        except ValueError:
            _LOGGER.warning("Home Assistant sent something that is not JSON")
        finally:
            lost = ConnectionLostError("the connection to Home Assistant was lost")
            for answer in self._pending.values():
                if not answer.done():
                    answer.set_exception(lost)
            if not self._lost.done():
                self._lost.set_result(None)

    def _dispatch(self, message: Any) -> None:
        for item in message if isinstance(message, list) else [message]:
            if not isinstance(item, dict) or item.get("type") != "result":
                continue  # events and pongs: this client subscribes to nothing
            answer = self._pending.get(item.get("id", -1))
            if answer is not None and not answer.done():
                answer.set_result(item)


async def _authenticate(ws: aiohttp.ClientWebSocketResponse, token: str) -> str:
    """Home Assistant's auth phase; its version on success."""
    hello = await _receive(ws)
    if hello.get("type") != "auth_required":
        raise ConnectionLostError(
            f"not Home Assistant's websocket API (it sent {hello.get('type')!r} first)"
        )
    await ws.send_json({"type": "auth", "access_token": token})
    answer = await _receive(ws)
    if answer.get("type") == "auth_ok":
        return str(answer.get("ha_version", ""))
    if answer.get("type") == "auth_invalid":
        raise AuthenticationError(
            f"Home Assistant refused the access token: {answer.get('message', '')}"
        )
    raise ConnectionLostError(f"unexpected answer to auth: {answer.get('type')!r}")


async def _receive(ws: aiohttp.ClientWebSocketResponse) -> dict[str, Any]:
    msg = await ws.receive()
    if msg.type is not aiohttp.WSMsgType.TEXT:
        raise ConnectionLostError("Home Assistant closed the connection")
    try:
        data = json.loads(msg.data)
    except ValueError as err:
        raise ConnectionLostError(
            "Home Assistant sent something that is not JSON"
        ) from err
    if not isinstance(data, dict):
        raise ConnectionLostError("Home Assistant sent an unexpected message")
    return data
