"""Entities without an integration: one platform of their own, for tests and benches.

``RecordingPlayer`` and ``RecordingSatellite`` stand for devices of other
integrations (a Sonos, a Voice PE); Home Assistant's own actions reach them
once they are on a platform of their domain, as an integration would put them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
import logging

from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import EntityPlatform

_LOGGER = logging.getLogger(__name__)
PLATFORM = "devstack"


async def add_entities(
    hass: HomeAssistant, domain: str, entities: Iterable[Entity]
) -> EntityPlatform:
    """Add ``entities`` to ``domain``; ``platform.async_reset()`` removes them.

    The domain's component must be set up (its actions reach them).
    """
    platform = EntityPlatform(
        hass=hass,
        logger=_LOGGER,
        domain=domain,
        platform_name=PLATFORM,
        platform=None,
        scan_interval=timedelta(seconds=30),
        entity_namespace=None,
    )
    await platform.async_add_entities(list(entities))
    return platform
