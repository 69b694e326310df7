"""The recorded requests, served to the debug panel: admins only.

Four websocket commands (``voicestack/recordings/list``, ``get``, ``subscribe``,
``delete``) and ``GET /api/voicestack/recordings/<id>.wav|.json``. Home
Assistant answers a websocket command of a non-admin with ``unauthorized``
(``require_admin``) and an HTTP request without a token with 401; the view
answers an authenticated non-admin with 403 itself.

Ids are checked by the schema (``invalid_format``) before the library sees
them. A recording that is not there is ``not_found``, with a message from the
``exceptions`` translations, the way Home Assistant's own panels are answered
(the message is shown as is, so it is rendered in Home Assistant's language and
the translation key goes along for a frontend that translates itself).
"""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any, Final

from aiohttp import hdrs, web
from homeassistant.components import websocket_api
from homeassistant.components.http import KEY_HASS, KEY_HASS_USER, HomeAssistantView
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
import voluptuous as vol

from ..const import DOMAIN
from ..core.recording.store import (
    InvalidIdError,
    RecordingNotFoundError,
    valid_entry_id,
    valid_recording_id,
)
from .library import RecordingChange, recording_library

__all__ = ["RECORDINGS_URL", "async_setup_recording_api"]

RECORDINGS_URL: Final = "/api/voicestack/recordings/{filename}"
NOT_FOUND_KEY: Final = "recording_not_found"


@callback
def async_setup_recording_api(hass: HomeAssistant) -> None:
    """Register the commands and the view (once per hass: from ``async_setup``)."""
    for command in (_ws_list, _ws_get, _ws_subscribe, _ws_delete):
        websocket_api.async_register_command(hass, command)
    hass.http.register_view(RecordingFileView())


def _checked(check: Callable[[object], str]) -> Callable[[object], str]:
    """A schema validator from an id check, keeping the check's message."""

    def validate(value: object) -> str:
        try:
            return check(value)
        except InvalidIdError as err:
            raise vol.Invalid(str(err)) from err

    return validate


RECORDING_ID_SCHEMA: Final = _checked(valid_recording_id)


@websocket_api.require_admin
@websocket_api.websocket_command(
    {
        vol.Required("type"): "voicestack/recordings/list",
        vol.Optional("entry_id"): _checked(valid_entry_id),
    }
)
@websocket_api.async_response
async def _ws_list(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """Summaries, newest first: one satellite's or everyone's."""
    recordings = await recording_library(hass).async_list(msg.get("entry_id"))
    connection.send_result(msg["id"], {"recordings": recordings})


@websocket_api.require_admin
@websocket_api.websocket_command(
    {
        vol.Required("type"): "voicestack/recordings/get",
        vol.Required("recording_id"): RECORDING_ID_SCHEMA,
    }
)
@websocket_api.async_response
async def _ws_get(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """One recording's metadata."""
    try:
        meta = await recording_library(hass).async_get(msg["recording_id"])
    except RecordingNotFoundError:
        _send_not_found(connection, msg)
        return
    connection.send_result(msg["id"], {"recording": meta})


@websocket_api.require_admin
@websocket_api.websocket_command(
    {
        vol.Required("type"): "voicestack/recordings/delete",
        vol.Required("recording_id"): RECORDING_ID_SCHEMA,
    }
)
@websocket_api.async_response
async def _ws_delete(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """Remove one recording (subscribers hear of it)."""
    try:
        await recording_library(hass).async_delete(msg["recording_id"])
    except RecordingNotFoundError:
        _send_not_found(connection, msg)
        return
    connection.send_result(msg["id"], {"deleted": True})


@websocket_api.require_admin
@websocket_api.websocket_command(
    {vol.Required("type"): "voicestack/recordings/subscribe"}
)
@callback
def _ws_subscribe(
    hass: HomeAssistant, connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    """Every recording added or removed from now on, until unsubscribed."""

    @callback
    def forward(change: RecordingChange) -> None:
        connection.send_message(websocket_api.event_message(msg["id"], change))

    connection.subscriptions[msg["id"]] = recording_library(hass).async_subscribe(
        forward
    )
    connection.send_result(msg["id"])


def _send_not_found(
    connection: websocket_api.ActiveConnection, msg: dict[str, Any]
) -> None:
    placeholders = {"recording_id": msg["recording_id"]}
    connection.send_error(
        msg["id"],
        websocket_api.ERR_NOT_FOUND,
        _not_found_message(placeholders),
        translation_key=NOT_FOUND_KEY,
        translation_domain=DOMAIN,
        translation_placeholders=placeholders,
    )


def _not_found_message(placeholders: dict[str, str]) -> str:
    """The translated message (HomeAssistantError renders it in HA's language)."""
    return str(
        HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key=NOT_FOUND_KEY,
            translation_placeholders=placeholders,
        )
    )


class RecordingFileView(HomeAssistantView):
    """``GET /api/voicestack/recordings/<id>.wav`` or ``.json``: admins only."""

    url = RECORDINGS_URL
    name = "api:voicestack:recordings"

    async def get(self, request: web.Request, filename: str) -> web.StreamResponse:
        """The WAV as ``audio/wav``, or the metadata as a JSON attachment.

        403 for a non-admin, 400 for a name that is no recording's, 404 for a
        recording that is not there.
        """
        if not request[KEY_HASS_USER].is_admin:
            return self.json_message("Admin only", HTTPStatus.FORBIDDEN)
        recording_id, _, kind = filename.rpartition(".")
        try:
            valid_recording_id(recording_id)
        except InvalidIdError:
            return self.json_message("Not a recording", HTTPStatus.BAD_REQUEST)
        library = recording_library(request.app[KEY_HASS])
        try:
            if kind == "wav":
                return web.FileResponse(
                    await library.async_wav_path(recording_id),
                    headers={
                        hdrs.CONTENT_TYPE: "audio/wav",
                        hdrs.CONTENT_DISPOSITION: f'inline; filename="{filename}"',
                    },
                )
            if kind == "json":
                return self.json(
                    await library.async_get(recording_id),
                    headers={
                        hdrs.CONTENT_DISPOSITION: f'attachment; filename="{filename}"'
                    },
                )
        except RecordingNotFoundError:
            pass
        return self.json_message(
            _not_found_message({"recording_id": recording_id}), HTTPStatus.NOT_FOUND
        )
