"""The recorded requests of every satellite, for Home Assistant.

One library per hass (``recording_library``): the recorder of each satellite
saves into it, the websocket commands and the HTTP view read from it, and the
debug panel's subscription hears of every recording added or removed, whatever
removed it (a delete, the bounds, a satellite removed for good). The files are
``core.recording_store``'s; every call to it runs in the executor.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.util.hass_dict import HassKey

from ..const import DOMAIN
from ..core.notes_file import NOTES_FOLDER
from ..core.recording.store import RecordingStore, summary
from ..subscriptions import Subscribers

__all__ = ["RecordingChange", "RecordingLibrary", "recording_library"]

RECORDINGS_FOLDER: Final = "recordings"  # in <config>/voicestack/
DATA_LIBRARY: HassKey[RecordingLibrary] = HassKey(f"{DOMAIN}_recording_library")

# What subscribers are told, as the websocket sends it:
# {"type": "added", "recording": summary} or {"type": "removed", "recording_id": id}.
type RecordingChange = dict[str, Any]


@callback
def recording_library(hass: HomeAssistant) -> RecordingLibrary:
    """The library of ``hass``, made on first use."""
    library = hass.data.get(DATA_LIBRARY)
    if library is None:
        root = Path(hass.config.path(NOTES_FOLDER, RECORDINGS_FOLDER))
        library = hass.data[DATA_LIBRARY] = RecordingLibrary(hass, RecordingStore(root))
    return library


class RecordingLibrary:
    """Async access to the recordings, and news of them."""

    def __init__(self, hass: HomeAssistant, store: RecordingStore) -> None:
        """Use ``store`` (blocking) through ``hass``'s executor."""
        self._hass = hass
        self._store = store
        self._subscribers = Subscribers[Callable[[RecordingChange], None]]()

    async def async_save(
        self,
        meta: dict[str, Any],
        pcm: bytes,
        keep: int,
        max_bytes: int,
    ) -> str:
        """Store a recording (16-bit mono PCM and its metadata); its id.

        Sets ``meta["id"]`` and ``meta["bytes"]``; the oldest recordings of
        ``meta["entry_id"]`` go until at most ``keep`` remain within
        ``max_bytes`` (see ``RecordingStore.save``). Raises ``ValueError`` for
        bad metadata and ``OSError`` when the disk refuses.
        """
        result = await self._hass.async_add_executor_job(
            lambda: self._store.save(meta, pcm, keep=keep, max_bytes=max_bytes)
        )
        for recording_id in result.removed:
            self._tell({"type": "removed", "recording_id": recording_id})
        self._tell({"type": "added", "recording": summary(result.recording)})
        return str(result.recording["id"])

    async def async_list(self, entry_id: str | None = None) -> list[dict[str, Any]]:
        """Summaries, newest first: one satellite's or everyone's."""
        return await self._hass.async_add_executor_job(self._store.summaries, entry_id)

    async def async_get(self, recording_id: str) -> dict[str, Any]:
        """A recording's metadata (``RecordingNotFoundError``, ``InvalidIdError``)."""
        return await self._hass.async_add_executor_job(self._store.get, recording_id)

    async def async_wav_path(self, recording_id: str) -> Path:
        """Where a recording's WAV is (``RecordingNotFoundError``, ``InvalidIdError``)."""
        return await self._hass.async_add_executor_job(
            self._store.wav_path, recording_id
        )

    async def async_delete(self, recording_id: str) -> None:
        """Remove a recording (``RecordingNotFoundError``, ``InvalidIdError``)."""
        await self._hass.async_add_executor_job(self._store.delete, recording_id)
        self._tell({"type": "removed", "recording_id": recording_id})

    async def async_delete_entry(self, entry_id: str) -> None:
        """Remove every recording of a satellite (its entry is deleted)."""
        removed = await self._hass.async_add_executor_job(
            self._store.delete_entry, entry_id
        )
        for recording_id in removed:
            self._tell({"type": "removed", "recording_id": recording_id})

    @callback
    def async_subscribe(
        self, listener: Callable[[RecordingChange], None]
    ) -> CALLBACK_TYPE:
        """Hear of every recording added or removed; the unsubscribe."""
        return self._subscribers.add(listener)

    def _tell(self, change: RecordingChange) -> None:
        for listener in self._subscribers:
            listener(change)
