"""What the voice modes need of the device they serve.

``VoiceModes`` runs one router for one device. Two kinds of device use it: a
VoiceStack satellite (``modes/satellite.py``, over its hub) and any other Assist
device that talks through the VoiceStack conversation agent (``agent/device.py``,
keyed by the ``device_id``/``satellite_id`` Home Assistant passes). Both answer
``ModesDevice``; only a VoiceStack satellite also has ``SatelliteControls``
(it can be spoken to outside a request, has a TTS voice to pick and a listen
mode to switch), so the frames that need those are inert elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import CALLBACK_TYPE, Context

from ..core.router import ListenMode, Voice


class ModesDevice(Protocol):
    """The device a router serves: who it is, what it asks, where it says so."""

    @property
    def entry(self) -> ConfigEntry:
        """The config entry whose options configure the router (and owns its tasks)."""

    @property
    def name(self) -> str:
        """For logs and the router's name."""

    @property
    def context(self) -> Context:
        """The current request's context: service calls made for it carry it."""

    def device_id(self) -> str | None:
        """The device registry id (None: unknown, a text-only client)."""

    def entity_id(self) -> str | None:
        """The device's assist satellite entity (None: none)."""

    def agent_id(self) -> str | None:
        """The conversation agent its requests go to (None: the default agent)."""

    def language(self) -> str:
        """The language of its requests."""

    def notify(self) -> None:
        """The mode stack changed: entities that show it update."""


class SatelliteControls(Protocol):
    """What only a VoiceStack satellite can do."""

    @property
    def connected(self) -> bool:
        """It can be spoken to now, outside a request."""

    def async_subscribe_connection(
        self, listener: Callable[[bool], None]
    ) -> CALLBACK_TYPE:
        """Call ``listener`` on every connect and loss; the remover."""

    async def list_voices(self) -> Sequence[Voice]:
        """The voices its pipeline's TTS engine offers (but the current one)."""

    async def set_voice(self, voice: Voice) -> None:
        """Speak in ``voice`` from now on."""

    async def set_listen_mode(self, mode: ListenMode) -> None:
        """Stream every speech segment (always listening) or wait for a wake word."""
