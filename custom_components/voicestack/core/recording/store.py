"""Recorded requests on disk: one WAV and one JSON per request, bounded per satellite.

Files live in ``<root>/<entry_id>/<recording_id>.wav`` and ``.json``, where the
root is ``<config>/voicestack/recordings``. The JSON is what makes a recording
exist: both files are written to a hidden temporary file and renamed into
place, the WAV first, so a crash leaves at worst a WAV without its JSON or a
temporary file, neither of which is listed, and both of which the next save in
that folder removes.

Every id that comes from outside (a websocket message, a URL) passes
``valid_recording_id`` / ``valid_entry_id`` before any path is built from it: a
recording id is exactly what ``RecordingStore`` makes (``<UTC
yyyymmddTHHMMSSffffff>-<8 hex>``), so ``..``, ``/`` or NUL never reach the file
system. Ids sort by time, which gives "newest first" without reading a file.

Synchronous file IO: Home Assistant calls it in the executor. One lock orders
the calls, so a save's pruning never races another save or a delete.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
import contextlib
from dataclasses import dataclass
from datetime import UTC, datetime
import json
import logging
import os
from pathlib import Path
import re
import secrets
import shutil
import tempfile
import threading
from typing import Any, Final

from ..wav import Pcm, wav_bytes

__all__ = [
    "InvalidIdError",
    "RecordingNotFoundError",
    "RecordingStore",
    "SaveResult",
    "summary",
    "valid_entry_id",
    "valid_recording_id",
]

_LOGGER = logging.getLogger(__name__)

RECORDING_ID: Final = re.compile(r"[0-9]{8}T[0-9]{12}-[0-9a-f]{8}")
# Home Assistant's entry ids are ULIDs; anything alphanumeric is accepted.
ENTRY_ID: Final = re.compile(r"[A-Za-z0-9]+")
WAV: Final = ".wav"
JSON: Final = ".json"
_TEMP_SUFFIX: Final = ".tmp"
_WIDTH: Final = 2  # 16-bit
_CHANNELS: Final = 1


class InvalidIdError(ValueError):
    """An id from outside is not one the store could have made."""


class RecordingNotFoundError(LookupError):
    """No recording has this id (any more)."""


def valid_recording_id(value: object) -> str:
    """``value`` if it is a recording id; ``InvalidIdError`` otherwise."""
    if isinstance(value, str) and RECORDING_ID.fullmatch(value):
        return value
    raise InvalidIdError(f"not a recording id: {value!r}")


def valid_entry_id(value: object) -> str:
    """``value`` if it can be a config entry id; ``InvalidIdError`` otherwise."""
    if isinstance(value, str) and ENTRY_ID.fullmatch(value):
        return value
    raise InvalidIdError(f"not a config entry id: {value!r}")


def summary(meta: dict[str, Any]) -> dict[str, Any]:
    """The line of a recording in a list (the contract's ``summary``)."""
    stt = meta.get("stt")
    decision = meta.get("decision")
    stt = stt if isinstance(stt, dict) else {}
    decision = decision if isinstance(decision, dict) else {}
    return {
        "id": meta.get("id"),
        "entry_id": meta.get("entry_id"),
        "satellite": meta.get("satellite"),
        "started": meta.get("started"),
        "duration_s": meta.get("duration_s"),
        "text": meta.get("text"),
        "outcome": meta.get("outcome"),
        "result": meta.get("result"),
        "stt_raw": stt.get("raw"),
        "frame": decision.get("frame"),
        "rule": decision.get("rule"),
        "bytes": meta.get("bytes"),
    }


@dataclass(frozen=True, slots=True)
class SaveResult:
    """What a save did: the recording as stored, and what it pushed out."""

    recording: dict[str, Any]
    removed: tuple[str, ...]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _token() -> str:
    return secrets.token_hex(4)


class RecordingStore:
    """The recordings under one root folder."""

    def __init__(
        self,
        root: Path,
        *,
        now: Callable[[], datetime] = _utc_now,
        token: Callable[[], str] = _token,
    ) -> None:
        """Nothing is read or created until the first call.

        ``now`` and ``token`` make the ids; tests pass fixed ones.
        """
        self._root = root
        self._now = now
        self._token = token
        self._lock = threading.Lock()

    def save(
        self, meta: dict[str, Any], pcm: bytes, *, keep: int, max_bytes: int
    ) -> SaveResult:
        """Store one recording, then prune its satellite's oldest ones.

        Sets ``meta["id"]`` and ``meta["bytes"]`` (the WAV's size). Afterwards at
        most ``keep`` recordings of ``meta["entry_id"]`` remain and their files
        take at most ``max_bytes``, with one exception: the recording just saved
        always stays, so one bigger than ``max_bytes`` is kept alone (every older
        one is removed) rather than lost. ``ValueError`` for bad metadata or
        limits, before anything is written; ``OSError`` when the disk refuses.
        """
        if keep < 1 or max_bytes < 1:
            raise ValueError(f"limits must be positive: keep={keep}, max={max_bytes}")
        entry_id = valid_entry_id(meta.get("entry_id"))
        rate = meta.get("rate")
        if not isinstance(rate, int) or isinstance(rate, bool) or rate <= 0:
            raise ValueError(f"rate must be a positive integer: {rate!r}")
        wav = wav_bytes(Pcm(pcm, rate=rate, width=_WIDTH, channels=_CHANNELS))
        with self._lock:
            stamp = self._now().astimezone(UTC)
            recording_id = valid_recording_id(
                f"{stamp:%Y%m%dT%H%M%S%f}-{self._token()}"
            )
            meta["id"] = recording_id
            meta["bytes"] = len(wav)
            # Serialized before any file exists: a bad value writes nothing.
            try:
                text = json.dumps(meta, ensure_ascii=False, allow_nan=False)
            except TypeError as err:
                raise ValueError(f"metadata is not JSON: {err}") from err
            folder = self._root / entry_id
            folder.mkdir(parents=True, exist_ok=True)
            _write_atomic(folder / f"{recording_id}{WAV}", wav)
            _write_atomic(folder / f"{recording_id}{JSON}", text.encode())
            removed = self._prune(folder, recording_id, keep, max_bytes)
        return SaveResult(recording=meta, removed=removed)

    def summaries(self, entry_id: str | None = None) -> list[dict[str, Any]]:
        """Summaries, newest first: one satellite's, or all of them.

        A JSON file that cannot be read or parsed is skipped with a log line.
        """
        folders = (
            [self._root / valid_entry_id(entry_id)]
            if entry_id is not None
            else list(self._entry_folders())
        )
        found = [
            (recording_id, folder)
            for folder in folders
            for recording_id in _recording_ids(folder)
        ]
        found.sort(key=lambda item: item[0], reverse=True)
        return [
            summary(meta)
            for recording_id, folder in found
            if (meta := _read_meta(folder, recording_id)) is not None
        ]

    def get(self, recording_id: str) -> dict[str, Any]:
        """A recording's metadata; ``RecordingNotFoundError`` if there is none."""
        folder = self._folder_of(valid_recording_id(recording_id))
        meta = _read_meta(folder, recording_id)
        if meta is None:
            raise RecordingNotFoundError(recording_id)
        return meta

    def wav_path(self, recording_id: str) -> Path:
        """Where a recording's audio is; ``RecordingNotFoundError`` if nowhere."""
        folder = self._folder_of(valid_recording_id(recording_id))
        path = folder / f"{recording_id}{WAV}"
        if not path.is_file():
            raise RecordingNotFoundError(recording_id)
        return path

    def delete(self, recording_id: str) -> None:
        """Remove one recording; ``RecordingNotFoundError`` if there is none."""
        valid_recording_id(recording_id)
        with self._lock:
            _remove(self._folder_of(recording_id), recording_id)

    def delete_entry(self, entry_id: str) -> list[str]:
        """Remove a satellite's folder with all its recordings; their ids."""
        folder = self._root / valid_entry_id(entry_id)
        with self._lock:
            if not folder.is_dir():
                return []
            removed = sorted(_recording_ids(folder), reverse=True)
            shutil.rmtree(folder)
        return removed

    def _folder_of(self, recording_id: str) -> Path:
        for folder in self._entry_folders():
            if (folder / f"{recording_id}{JSON}").is_file():
                return folder
        raise RecordingNotFoundError(recording_id)

    def _entry_folders(self) -> Iterator[Path]:
        try:
            children = list(self._root.iterdir())
        except FileNotFoundError:
            return
        for child in children:
            if (
                ENTRY_ID.fullmatch(child.name)
                and child.is_dir()
                and not child.is_symlink()
            ):
                yield child

    def _prune(
        self, folder: Path, saved: str, keep: int, max_bytes: int
    ) -> tuple[str, ...]:
        """Remove what is over the limits, oldest first, and crash leftovers."""
        _remove_leftovers(folder)
        older = sorted(
            (rid for rid in _recording_ids(folder) if rid != saved), reverse=True
        )
        total = _size(folder, saved)
        kept = 1
        removed: list[str] = []
        for recording_id in older:
            size = _size(folder, recording_id)
            if removed or kept >= keep or total + size > max_bytes:
                _remove(folder, recording_id)
                removed.append(recording_id)
            else:
                kept += 1
                total += size
        if total > max_bytes:
            _LOGGER.warning(
                "Recording %s takes %d bytes, more than the %d allowed: it is kept"
                " alone",
                saved,
                total,
                max_bytes,
            )
        return tuple(removed)


def _recording_ids(folder: Path) -> list[str]:
    """The ids of the recordings in ``folder`` (the JSON files), unordered."""
    try:
        names = [path.name for path in folder.iterdir()]
    except FileNotFoundError:
        return []
    return [
        name[: -len(JSON)]
        for name in names
        if name.endswith(JSON) and RECORDING_ID.fullmatch(name[: -len(JSON)])
    ]


def _read_meta(folder: Path, recording_id: str) -> dict[str, Any] | None:
    """A recording's metadata, or None (logged) when it cannot be read."""
    path = folder / f"{recording_id}{JSON}"
    try:
        meta = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None  # deleted since it was listed
    except (OSError, ValueError) as err:
        _LOGGER.warning("Skipping recording %s: %s", path, err)
        return None
    if not isinstance(meta, dict):
        _LOGGER.warning("Skipping recording %s: not a JSON object", path)
        return None
    # The file's place is the truth, whatever a hand edit put inside.
    meta["id"] = recording_id
    meta["entry_id"] = folder.name
    return meta


def _size(folder: Path, recording_id: str) -> int:
    """Bytes both files of a recording take (0 for a file that is gone)."""
    total = 0
    for suffix in (WAV, JSON):
        with contextlib.suppress(FileNotFoundError):
            total += (folder / f"{recording_id}{suffix}").stat().st_size
    return total


def _remove(folder: Path, recording_id: str) -> None:
    """Delete a recording's files, the JSON first so it is never half listed."""
    json_path = folder / f"{recording_id}{JSON}"
    try:
        json_path.unlink()
    except FileNotFoundError:
        raise RecordingNotFoundError(recording_id) from None
    (folder / f"{recording_id}{WAV}").unlink(missing_ok=True)


def _remove_leftovers(folder: Path) -> None:
    """Temporary files and WAVs without JSON: what a crash mid-save leaves."""
    names = {path.name for path in folder.iterdir()}
    for name in names:
        stem = name[: -len(WAV)]
        if (name.startswith(".") and name.endswith(_TEMP_SUFFIX)) or (
            name.endswith(WAV)
            and RECORDING_ID.fullmatch(stem)
            and f"{stem}{JSON}" not in names
        ):
            _LOGGER.debug("Removing leftover %s", folder / name)
            (folder / name).unlink(missing_ok=True)


def _write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that it is whole or absent, never half."""
    fd, temp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=_TEMP_SUFFIX
    )
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        Path(temp).replace(path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
