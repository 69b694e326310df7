"""Enrolled voices, kept in Home Assistant's storage: one voiceprint per person.

Enrollment (``enrollment.py``) records a few phrases on a satellite, whose
voice gate turns each into a GE2E embedding. They are kept here per person
(a ``person`` entity), and each person's voiceprint, the normalized mean of their
phrases' embeddings (as GE2E's speaker centroid), goes to every satellite in its
barge-in settings. Nothing leaves the home: no audio is kept, only the vectors.

One library per Home Assistant (``voiceprint_library``), shared by every
satellite; subscribers hear each change so the satellites get it at once.

A voiceprint is biometric data, so the file is private (0600, like the
recordings), and a voice goes with its owner: with the person (their entity
removed from the registry), and every voice with the last satellite entry
(``async_remove_entry``). A renamed person keeps their voice under the new id:
under the old one it would belong to whoever is given that id next.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
import logging
import math
import os
from typing import Any

from homeassistant.const import ATTR_ENTITY_ID
from homeassistant.core import CALLBACK_TYPE, Event, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er
from homeassistant.helpers.storage import Store
from homeassistant.util.hass_dict import HassKey

from voicestack_protocol import Voiceprint, check_embedding

from ..const import DOMAIN
from ..subscriptions import Subscribers

_LOGGER = logging.getLogger(__name__)

STORAGE_VERSION = 1
STORAGE_KEY = f"{DOMAIN}.voiceprints"
DATA_VOICEPRINTS: HassKey[VoiceprintLibrary] = HassKey(f"{DOMAIN}_voiceprints")


@dataclass(frozen=True, slots=True)
class EnrolledVoice:
    """One person's enrollment: the phrases' embeddings and when."""

    person: str  # the person entity's id
    embeddings: tuple[tuple[float, ...], ...]
    enrolled_at: str  # ISO 8601, UTC
    satellite: str  # the satellite it was recorded on (its title)

    def voiceprint(self) -> Voiceprint:
        """The normalized mean of the embeddings (the speaker's centroid)."""
        size = len(self.embeddings[0])
        mean = [sum(e[i] for e in self.embeddings) for i in range(size)]
        norm = math.sqrt(sum(v * v for v in mean)) or 1.0
        return Voiceprint(self.person, tuple(v / norm for v in mean))


class VoiceprintLibrary:
    """The enrolled voices of this Home Assistant, in its storage."""

    def __init__(self, hass: HomeAssistant) -> None:
        """Empty until ``async_load``."""
        self._hass = hass
        self._store: Store[dict[str, Any]] = Store(
            hass, STORAGE_VERSION, STORAGE_KEY, private=True
        )
        self._voices: dict[str, EnrolledVoice] = {}
        self._subscribers = Subscribers[CALLBACK_TYPE]()

    async def async_load(self) -> None:
        """Read the stored voices; an entry that does not read is dropped, logged.

        A file an earlier VoiceStack wrote readable by all is made private.
        """
        data = await self._store.async_load()
        if data is None:
            return
        try:
            await self._hass.async_add_executor_job(os.chmod, self._store.path, 0o600)
        except OSError as err:
            _LOGGER.warning("Cannot make the voiceprints private: %s", err)
        for person, raw in (data.get("voices") or {}).items():
            try:
                self._voices[person] = _voice_from_storage(person, raw)
            except (TypeError, ValueError, KeyError, IndexError) as err:
                _LOGGER.warning("Stored voiceprint of %s is unusable: %s", person, err)

    @property
    def people(self) -> dict[str, EnrolledVoice]:
        """Every enrolled person's enrollment, by person entity id."""
        return dict(self._voices)

    def voiceprints(self) -> list[Voiceprint]:
        """One voiceprint per enrolled person, for the satellites' gates."""
        return [voice.voiceprint() for voice in self._voices.values()]

    async def async_enroll(
        self,
        person: str,
        embeddings: Sequence[Sequence[float]],
        satellite: str,
    ) -> EnrolledVoice:
        """Keep ``person``'s phrases (replacing an earlier enrollment)."""
        if not embeddings:
            raise ValueError("no embeddings to enroll")
        voice = EnrolledVoice(
            person=person,
            embeddings=tuple(
                check_embedding(e, f"phrase {n}") for n, e in enumerate(embeddings, 1)
            ),
            enrolled_at=datetime.now(UTC).isoformat(),
            satellite=satellite,
        )
        self._voices[person] = voice
        await self._save()
        return voice

    async def async_forget(self, person: str) -> bool:
        """Forget ``person``'s voice; False if they were not enrolled."""
        if self._voices.pop(person, None) is None:
            return False
        await self._save()
        return True

    async def async_rename(self, old: str, new: str) -> None:
        """The person ``old`` is now ``new`` (their entity id was changed)."""
        voice = self._voices.pop(old, None)
        if voice is None:
            return
        self._voices[new] = replace(voice, person=new)
        await self._save()

    async def async_remove(self) -> None:
        """Forget every voice and delete the file (the last satellite is gone)."""
        self._voices.clear()
        await self._store.async_remove()
        self._tell()

    @callback
    def async_subscribe(self, listener: CALLBACK_TYPE) -> CALLBACK_TYPE:
        """Call ``listener`` after every change of the voices; the remover."""
        return self._subscribers.add(listener)

    async def _save(self) -> None:
        await self._store.async_save(
            {
                "voices": {
                    person: {
                        "embeddings": [list(e) for e in voice.embeddings],
                        "enrolled_at": voice.enrolled_at,
                        "satellite": voice.satellite,
                    }
                    for person, voice in self._voices.items()
                }
            }
        )
        self._tell()

    def _tell(self) -> None:
        for listener in self._subscribers:
            listener()


def _voice_from_storage(person: str, raw: dict[str, Any]) -> EnrolledVoice:
    embeddings = tuple(
        check_embedding(e, f"{person} phrase {n}")
        for n, e in enumerate(raw["embeddings"], 1)
    )
    if not embeddings:
        raise ValueError("no embeddings")
    return EnrolledVoice(
        person=person,
        embeddings=embeddings,
        enrolled_at=str(raw.get("enrolled_at", "")),
        satellite=str(raw.get("satellite", "")),
    )


async def async_setup_voiceprints(hass: HomeAssistant) -> None:
    """Load the library once, at setup; it follows the people for good."""
    library = hass.data[DATA_VOICEPRINTS] = VoiceprintLibrary(hass)
    await library.async_load()

    @callback
    def is_person(data: er.EventEntityRegistryUpdatedData) -> bool:
        return data[ATTR_ENTITY_ID].startswith("person.")

    async def person_changed(event: Event[er.EventEntityRegistryUpdatedData]) -> None:
        """A person deleted takes their voice; one renamed keeps it."""
        data = event.data
        if data["action"] == "remove":
            await library.async_forget(data[ATTR_ENTITY_ID])
        elif data["action"] == "update" and "old_entity_id" in data:
            await library.async_rename(data["old_entity_id"], data[ATTR_ENTITY_ID])

    hass.bus.async_listen(
        er.EVENT_ENTITY_REGISTRY_UPDATED, person_changed, event_filter=is_person
    )


async def async_remove_voiceprints(hass: HomeAssistant) -> None:
    """Every voice forgotten and its file deleted (the last entry was removed).

    Also when VoiceStack was not set up in this run (an entry removed at once).
    """
    library = hass.data.get(DATA_VOICEPRINTS) or VoiceprintLibrary(hass)
    await library.async_remove()


def voiceprint_library(hass: HomeAssistant) -> VoiceprintLibrary:
    """This Home Assistant's enrolled voices (``async_setup_voiceprints`` made it)."""
    return hass.data[DATA_VOICEPRINTS]
