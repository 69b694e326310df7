"""The recording store: whole files only, bounded per satellite, ids checked."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
import io
import json
import logging
import os
from pathlib import Path
from typing import Any
import wave

import pytest

from custom_components.voicestack.core.recording.store import (
    InvalidIdError,
    RecordingNotFoundError,
    RecordingStore,
)
from custom_components.voicestack.core.wav import read_wav

ENTRY = "01JDKITCHEN0000000000000000"
OTHER = "01JDHALLWAY0000000000000000"
START = datetime(2026, 11, 23, 22, 15, 0, 123456, tzinfo=UTC)


class Ids:
    """``now`` one second later at each call, and tokens 00000001, 00000002, ..."""

    def __init__(self, start: datetime = START) -> None:
        """The first id is at ``start``."""
        self.next = start
        self.tokens = 0

    def now(self) -> datetime:
        """The time of the next id."""
        now, self.next = self.next, self.next + timedelta(seconds=1)
        return now

    def token(self) -> str:
        """The random part of the next id, counted instead."""
        self.tokens += 1
        return f"{self.tokens:08x}"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "recordings"


@pytest.fixture
def store(root: Path) -> RecordingStore:
    ids = Ids()
    return RecordingStore(root, now=ids.now, token=ids.token)


def _meta(entry_id: str = ENTRY, **extra: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "entry_id": entry_id,
        "satellite": "Kitchen",
        "started": "2026-11-23T22:15:00.123456+00:00",
        "rate": 16000,
        "duration_s": 0.5,
        "stt": {"engine": "stt.faster_whisper", "raw": "[BLANK_AUDIO]"},
        "text": "",
        "outcome": "empty",
        "result": "empty",
        "decision": {"frame": "base", "rule": "agent"},
        **extra,
    }


def _pcm(samples: int) -> bytes:
    return b"".join(
        (i % 256 - 128).to_bytes(2, "little", signed=True) for i in range(samples)
    )


def _save(
    store: RecordingStore, entry_id: str = ENTRY, samples: int = 100, **limits: int
) -> str:
    meta = _meta(entry_id)
    store.save(
        meta,
        _pcm(samples),
        keep=limits.get("keep", 20),
        max_bytes=limits.get("max_bytes", 10**9),
    )
    return meta["id"]


def _ids(store: RecordingStore, entry_id: str | None = None) -> list[str]:
    return [summary["id"] for summary in store.summaries(entry_id)]


def _disk_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir())


def test_a_saved_recording_is_a_wav_and_its_metadata(
    store: RecordingStore, root: Path
) -> None:
    meta = _meta()
    pcm = _pcm(16000)

    result = store.save(meta, pcm, keep=5, max_bytes=10**6)

    recording_id = meta["id"]
    assert recording_id == "20261123T221500123456-00000001"
    assert result.recording is meta
    assert result.removed == ()
    wav_path = store.wav_path(recording_id)
    assert wav_path == root / ENTRY / f"{recording_id}.wav"
    assert meta["bytes"] == wav_path.stat().st_size == 44 + len(pcm)
    with wave.open(str(wav_path), "rb") as wav:  # the standard library reads it too
        assert (wav.getframerate(), wav.getsampwidth(), wav.getnchannels()) == (
            16000,
            2,
            1,
        )
        assert wav.getnframes() == 16000
    assert read_wav(wav_path.read_bytes()).audio == pcm
    assert store.get(recording_id) == json.loads(
        (root / ENTRY / f"{recording_id}.json").read_text()
    )
    assert store.get(recording_id) == meta
    assert store.summaries() == [
        {
            "id": recording_id,
            "entry_id": ENTRY,
            "satellite": "Kitchen",
            "started": "2026-11-23T22:15:00.123456+00:00",
            "duration_s": 0.5,
            "text": "",
            "outcome": "empty",
            "result": "empty",
            "stt_raw": "[BLANK_AUDIO]",
            "frame": "base",
            "rule": "agent",
            "bytes": 44 + len(pcm),
        }
    ]
    assert sorted(path.name for path in (root / ENTRY).iterdir()) == [
        f"{recording_id}.json",
        f"{recording_id}.wav",
    ]  # no temporary file stays behind


def test_ids_are_utc_and_the_list_is_newest_first_across_satellites(root: Path) -> None:
    # A clock in another zone still names the files in UTC.
    ids = Ids(START.astimezone(timezone(timedelta(hours=-5))))
    store = RecordingStore(root, now=ids.now, token=ids.token)
    first = _save(store, ENTRY)
    second = _save(store, OTHER)
    third = _save(store, ENTRY)

    assert first == "20261123T221500123456-00000001"
    assert _ids(store) == [third, second, first]
    assert _ids(store, ENTRY) == [third, first]
    assert _ids(store, OTHER) == [second]
    assert _ids(store, "01JDNOBODY") == []


def test_the_real_clock_and_tokens_make_valid_distinct_ids(root: Path) -> None:
    store = RecordingStore(root)
    ids = {_save(store) for _ in range(3)}

    assert len(ids) == 3
    assert all(store.get(recording_id)["id"] == recording_id for recording_id in ids)


def test_the_oldest_go_when_there_are_more_than_keep(store: RecordingStore) -> None:
    saved = [_save(store, keep=3) for _ in range(3)]
    other = _save(store, OTHER, keep=3)

    meta = _meta()
    result = store.save(meta, _pcm(100), keep=2, max_bytes=10**9)

    assert result.removed == (saved[1], saved[0])  # newest first
    assert _ids(store, ENTRY) == [meta["id"], saved[2]]
    assert _ids(store, OTHER) == [other]  # another satellite's limits are its own
    with pytest.raises(RecordingNotFoundError):
        store.wav_path(saved[1])


def test_the_oldest_go_until_the_files_fit_max_bytes(
    store: RecordingStore, root: Path
) -> None:
    first = _save(store, samples=1000)
    one = _disk_bytes(root / ENTRY)  # a WAV of 1000 samples and its JSON
    second = _save(store, samples=1000)
    third = _save(store, samples=1000)

    # Room for two recordings, one byte short of three.
    meta = _meta()
    result = store.save(meta, _pcm(1000), keep=20, max_bytes=3 * one - 1)

    assert result.removed == (second, first)
    assert _ids(store) == [meta["id"], third]
    assert _disk_bytes(root / ENTRY) == 2 * one


def test_a_recording_bigger_than_max_bytes_is_kept_alone(
    store: RecordingStore, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    older = [_save(store, samples=100) for _ in range(2)]

    meta = _meta()
    result = store.save(meta, _pcm(16000), keep=20, max_bytes=1000)

    assert result.removed == (older[1], older[0])
    assert _ids(store) == [meta["id"]]
    assert _disk_bytes(root / ENTRY) > 1000
    assert "more than the 1000 allowed: it is kept alone" in caplog.text


def test_a_recording_saved_with_an_earlier_clock_is_not_pruned_itself(
    root: Path,
) -> None:
    # NTP moved the clock back: the new recording sorts oldest, yet stays.
    times = iter([START, START - timedelta(hours=1)])
    store = RecordingStore(root, now=lambda: next(times))
    newer = _save(store)

    meta = _meta()
    result = store.save(meta, _pcm(100), keep=1, max_bytes=10**9)

    assert result.removed == (newer,)
    assert _ids(store) == [meta["id"]]


@pytest.mark.parametrize(
    ("meta", "limits", "message"),
    [
        (_meta(started=float("nan")), {}, "Out of range float"),
        (_meta(started=object()), {}, "not JSON serializable"),
        (_meta(rate=0), {}, "rate must be a positive integer"),
        (_meta(rate="16000"), {}, "rate must be a positive integer"),
        ({"rate": 16000}, {}, "not a config entry id"),
        (_meta(), {"keep": 0}, "limits must be positive"),
        (_meta(), {"max_bytes": 0}, "limits must be positive"),
    ],
)
def test_bad_metadata_or_limits_write_nothing(
    store: RecordingStore,
    root: Path,
    meta: dict[str, Any],
    limits: dict[str, int],
    message: str,
) -> None:
    with pytest.raises(ValueError, match=message):
        store.save(meta, _pcm(100), **{"keep": 5, "max_bytes": 10**6, **limits})

    assert not any(root.rglob("*.*"))
    assert store.summaries() == []


def test_a_write_that_fails_leaves_nothing_listed_and_the_next_save_cleans_up(
    store: RecordingStore, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kept = _save(store)
    # The disk fails while the JSON is written (the WAV is already in place).
    real_fsync = os.fsync
    calls = iter([real_fsync, _disk_full])

    def fsync(fd: int) -> None:
        next(calls)(fd)

    monkeypatch.setattr(os, "fsync", fsync)

    with pytest.raises(OSError, match="No space left"):
        _save(store)

    monkeypatch.setattr(os, "fsync", real_fsync)
    folder = root / ENTRY
    orphan = sorted(path.name for path in folder.glob("*.wav"))
    assert len(orphan) == 2  # the failed one's WAV, without JSON
    assert not list(folder.glob(".*"))  # its temporary JSON is gone
    assert _ids(store) == [kept]  # and it is not listed
    # What a killed process leaves: a temporary file.
    (folder / ".20261123T230000000000-00000009.json.abc.tmp").write_bytes(b'{"half')

    newest = _save(store)

    assert sorted(path.name for path in folder.iterdir()) == sorted(
        f"{recording_id}.{kind}"
        for recording_id in (kept, newest)
        for kind in ("wav", "json")
    )


def _disk_full(fd: int) -> None:
    raise OSError(28, "No space left on device")


def test_files_that_cannot_be_read_are_skipped_with_a_log_line(
    store: RecordingStore, root: Path, caplog: pytest.LogCaptureFixture
) -> None:
    good = _save(store)
    folder = root / ENTRY
    broken = {
        "20261123T230000000000-0000000a": b'{"version": 1, "entry',  # cut short
        "20261123T230000000000-0000000b": b"[1, 2, 3]",  # not an object
        "20261123T230000000000-0000000c": b"\xff\xfe\x00",  # not UTF-8
    }
    for recording_id, content in broken.items():
        (folder / f"{recording_id}.json").write_bytes(content)
    (folder / "20261123T230000000000-0000000d.json").mkdir()  # unreadable
    (folder / "notes.json").write_text("{}")  # not a recording's name: ignored
    (root / "not-an-entry").mkdir()
    (root / "not-an-entry" / f"{good}.json").write_text("{}")

    with caplog.at_level(logging.WARNING):
        assert _ids(store) == [good]

    assert caplog.text.count("Skipping recording") == 4
    for recording_id in broken:
        with pytest.raises(RecordingNotFoundError):
            store.get(recording_id)


def test_a_hand_edited_file_cannot_claim_another_id_or_satellite(
    store: RecordingStore, root: Path
) -> None:
    recording_id = _save(store)
    path = root / ENTRY / f"{recording_id}.json"
    path.write_text(
        json.dumps(
            {"id": "../../secrets", "entry_id": OTHER, "stt": "x", "decision": 3}
        )
    )

    (summary,) = store.summaries()

    assert (summary["id"], summary["entry_id"]) == (recording_id, ENTRY)
    assert (summary["stt_raw"], summary["frame"], summary["rule"]) == (None, None, None)


BAD_RECORDING_IDS = [
    "../../secrets.yaml",
    "../" + "20261123T221500123456-00000001",
    "20261123T221500123456-00000001/../../x",
    "20261123T221500123456-0000000\0",
    "20261123T221500123456-ABCDEF01",  # upper case: never made
    "20261123T221500123456-00000001.json",
    " 20261123T221500123456-00000001",
    "20261123T221500123456-00000001\n",
    "",
    None,
    20261123,
]


@pytest.mark.parametrize("bad", BAD_RECORDING_IDS)
@pytest.mark.parametrize("call", ["get", "wav_path", "delete"])
def test_bad_recording_ids_are_refused_before_any_path_is_built(
    store: RecordingStore, tmp_path: Path, bad: object, call: str
) -> None:
    _save(store)
    secret = tmp_path / "secrets.yaml"
    secret.write_text("password: x")

    with pytest.raises(InvalidIdError, match="not a recording id"):
        getattr(store, call)(bad)

    assert secret.read_text() == "password: x"
    assert len(store.summaries()) == 1


BAD_ENTRY_IDS = ["..", "../x", "a/b", "/etc", "a.b", "a\0", "", "a b", 7]


@pytest.mark.parametrize("bad", BAD_ENTRY_IDS)
@pytest.mark.parametrize(
    "call",
    [
        lambda store, bad: store.summaries(bad),
        lambda store, bad: store.delete_entry(bad),
        lambda store, bad: store.save(_meta(bad), b"", keep=1, max_bytes=10**6),
    ],
)
def test_bad_entry_ids_are_refused(
    store: RecordingStore,
    tmp_path: Path,
    bad: object,
    call: Callable[[RecordingStore, object], object],
) -> None:
    recording_id = _save(store)

    with pytest.raises(InvalidIdError, match="not a config entry id"):
        call(store, bad)

    assert _ids(store) == [recording_id]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["recordings"]


def test_delete_one_and_all_of_an_entry(store: RecordingStore, root: Path) -> None:
    first, second = _save(store), _save(store)
    other = _save(store, OTHER)

    store.delete(first)

    assert _ids(store) == [other, second]
    assert not (root / ENTRY / f"{first}.wav").exists()
    with pytest.raises(RecordingNotFoundError):
        store.delete(first)
    assert store.delete_entry(ENTRY) == [second]
    assert not (root / ENTRY).exists()
    assert store.delete_entry(ENTRY) == []
    assert _ids(store) == [other]


def test_an_empty_store_has_nothing(store: RecordingStore) -> None:
    assert store.summaries() == []
    assert store.summaries(ENTRY) == []
    with pytest.raises(RecordingNotFoundError):
        store.get("20261123T221500123456-00000001")
    with pytest.raises(RecordingNotFoundError):
        store.wav_path("20261123T221500123456-00000001")


def test_a_partial_sample_is_dropped_and_the_wav_stays_valid(
    store: RecordingStore,
) -> None:
    meta = _meta()
    store.save(meta, _pcm(10) + b"\x01", keep=1, max_bytes=10**6)

    data = store.wav_path(meta["id"]).read_bytes()

    with wave.open(io.BytesIO(data), "rb") as wav:
        assert wav.getnframes() == 10
    assert meta["bytes"] == len(data) == 44 + 20
