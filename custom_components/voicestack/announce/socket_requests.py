"""Announcements a satellite's local scripts ask for (its ``--announce-socket``).

A script on the Pi writes a JSON line to the satellite's announce socket; the
satellite sends it here as ``voicestack-announce`` (only because our hello asks
for it, ``voicestack_protocol.ASKED_FOR``). Each becomes a ``voicestack.announce`` call
on this satellite's own entity, so it is queued, merged and said like any other
announcement and reported in ``voicestack_announcement`` events. The source is
``satellite:<name>/<source>`` (``local`` when the line names none): a script
cannot pass for an automation, and has its own rate in the announcer.

The satellite has already answered its client "sent" when this runs; a
request Home Assistant refuses (bad data, a value ``voicestack.announce``
rejects) is logged here with the satellite's name and the request's id, and
counted in ``rejected``.
"""

from __future__ import annotations

import logging
from typing import Any, cast

from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
import voluptuous as vol
from wyoming.event import Event as WyomingEvent

from voicestack_protocol import ANNOUNCE, ANNOUNCE_OPTIONAL, Announce, parse_announce

from ..const import DOMAIN, SERVICE_ANNOUNCE
from ..hub import SatelliteHub

_LOGGER = logging.getLogger(__name__)

DEFAULT_LOCAL_SOURCE = "local"


class SatelliteAnnounceRequests:
    """Turns one satellite's ``voicestack-announce`` events into announcements."""

    def __init__(self, hass: HomeAssistant, hub: SatelliteHub) -> None:
        """Listen to the hub's events until ``close``."""
        self._hass = hass
        self._hub = hub
        self.accepted = 0  # calls voicestack.announce took
        self.rejected = 0  # requests refused here or by voicestack.announce
        self._unsubscribe = hub.async_subscribe_events(self._on_event)

    @callback
    def close(self) -> None:
        """Stop listening (the entry unloads); calls under way end with it."""
        self._unsubscribe()

    @property
    def _name(self) -> str:
        return self._hub.entry.title

    @callback
    def _on_event(self, event: WyomingEvent) -> None:
        if event.type != ANNOUNCE:
            return
        try:
            request = parse_announce(event)
        except ValueError as err:
            self._reject(f"{(event.data or {}).get('id')!r:.40}", str(err))
            return
        self._hub.entry.async_create_background_task(
            self._hass,
            self._announce(request),
            f"voicestack announce request {request.id} from {self._name}",
        )

    async def _announce(self, request: Announce) -> None:
        entity_id = self._hub.satellite_entity_id()
        if entity_id is None:
            self._reject(request.id, "its assist satellite entity is not registered")
            return
        data = self._service_data(request)
        try:
            response = await self._hass.services.async_call(
                DOMAIN,
                SERVICE_ANNOUNCE,
                data,
                target={ATTR_ENTITY_ID: entity_id},
                blocking=True,
                return_response=True,
            )
        except (HomeAssistantError, vol.Invalid) as err:
            self._reject(request.id, _describe(err))
            return
        self.accepted += 1
        # Our own announce action answers with its receipts (service.py).
        receipts = cast(
            "list[dict[str, Any]]", (response or {}).get("announcements") or []
        )
        _LOGGER.info(
            "%s: local announcement %s from %s: %s",
            self._name,
            request.id,
            data["source"],
            ", ".join(f"{r.get('id')} {r.get('status')}" for r in receipts),
        )

    def _service_data(self, request: Announce) -> dict[str, Any]:
        data: dict[str, Any] = {"message": request.message}
        for key in ANNOUNCE_OPTIONAL:
            if (value := getattr(request, key)) is not None:
                data[key] = value
        local = (request.source or "").strip() or DEFAULT_LOCAL_SOURCE
        data["source"] = f"satellite:{self._name}/{local}"
        return data

    def _reject(self, request_id: str, why: str) -> None:
        self.rejected += 1
        _LOGGER.warning(
            "%s: refused local announcement %s: %s", self._name, request_id, why
        )


def _describe(err: Exception) -> str:
    """The error's text, with its translation key (what strings.json says)."""
    key = getattr(err, "translation_key", None)
    return f"{err} ({key})" if key else str(err)
