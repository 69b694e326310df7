"""RobustFileLock: real processes, real files, real time (short).

The stress test runs 8 separate Python processes appending 500 lines each to one
file, each line in several writes under the lock; every line must arrive whole
(without the lock they interleave, so the test can fail). The processes load ``core/filelock.py`` by
path (it needs only the standard library), so they start in a blink instead of
importing Home Assistant with the integration package.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterator
import logging
import os
from pathlib import Path
import shutil
import subprocess
import sys
import time
from typing import Any, TypeVar
import zlib

import pytest

from custom_components.voicestack.core import filelock
from custom_components.voicestack.core.filelock import (
    ConfinementError,
    LockTimeoutError,
    RobustFileLock,
    append_line,
    append_lines,
    open_confined,
)

FILELOCK = Path(filelock.__file__)
T = TypeVar("T")

WRITER = """
import asyncio, functools, importlib.util, os, random, sys, time, zlib
spec = importlib.util.spec_from_file_location("filelock", sys.argv[1])
filelock = importlib.util.module_from_spec(spec)
spec.loader.exec_module(filelock)
path, proc, count = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(proc)

def write_in_pieces(line):
    # Several writes per line, a pause between: only the lock keeps other
    # writers out (one O_APPEND write per line would be whole even unlocked).
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as file:
        for start in range(0, len(line), 1500):
            file.write(line[start : start + 1500])
            file.flush()
            time.sleep(0)

async def main():
    lock = filelock.RobustFileLock.for_file(path)
    for index in range(count):
        body = chr(ord("a") + proc) * rng.choice((1, 80, 700, 4000, 9000))
        head = f"{proc} {index} {body}"
        line = f"{head} {zlib.crc32(head.encode()):08x}\\n"
        await lock.run(functools.partial(write_in_pieces, line))
    await filelock.append_line(path, f"{proc} done")  # the production path too

print("ready", flush=True)
sys.stdin.readline()
asyncio.run(main())
"""

HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


def start(script: str, *args: object) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *map(str, args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


async def elsewhere(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` in a task of its own (a holder's own task may not wait)."""
    return await asyncio.create_task(coroutine)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdin, process.stdout):
            if stream is not None:
                stream.close()


def test_eight_processes_append_4000_intact_lines(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    path = tmp_path / "notes" / "notes.txt"
    writers, count = 8, 500
    processes.extend(
        start(WRITER, FILELOCK, path, proc, count) for proc in range(writers)
    )
    for process in processes:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
    began = time.monotonic()
    for process in processes:  # all start writing together
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    for process in processes:
        assert process.wait(timeout=120) == 0
    elapsed = time.monotonic() - began

    lines = path.read_bytes().split(b"\n")
    assert lines.pop() == b""  # the file ends with a newline
    done = [line for line in lines if line.endswith(b" done")]
    assert sorted(done) == [f"{proc} done".encode() for proc in range(writers)]
    lines = [line for line in lines if not line.endswith(b" done")]
    assert len(lines) == writers * count
    seen: dict[int, list[int]] = {proc: [] for proc in range(writers)}
    for raw in lines:
        head, crc = raw.decode().rsplit(" ", 1)
        assert f"{zlib.crc32(head.encode()):08x}" == crc, raw[:80]
        proc, index, body = head.split(" ", 2)
        assert body == chr(ord("a") + int(proc)) * len(body)
        seen[int(proc)].append(int(index))
    assert all(indices == list(range(count)) for indices in seen.values())
    assert elapsed < 60, f"{elapsed:.1f} s for 4000 locked appends"


async def test_timeout_when_another_process_holds_it(
    tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    lock_path = tmp_path / "x.lock"
    holder = start(HOLDER, lock_path)
    processes.append(holder)
    assert holder.stdout is not None
    assert holder.stdout.readline() == "locked\n"
    lock = RobustFileLock(lock_path, timeout_s=0.2)

    began = time.monotonic()
    assert not await lock.acquire()
    assert 0.2 <= time.monotonic() - began < 2.0
    with pytest.raises(LockTimeoutError, match=r"not acquired within 0\.1 s"):
        await append_line(tmp_path / "x", "never written", timeout_s=0.1)
    assert not (tmp_path / "x").exists()

    holder.kill()  # the kernel releases a dead holder's lock
    holder.wait()
    assert await lock.acquire(timeout_s=2.0)
    await lock.release()


async def test_waiting_does_not_block_the_event_loop(tmp_path: Path) -> None:
    holder = RobustFileLock(tmp_path / "x.lock")
    assert await holder.acquire()
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    ticker = asyncio.create_task(tick())
    assert not await elsewhere(
        RobustFileLock(tmp_path / "x.lock").acquire(timeout_s=0.3)
    )
    ticker.cancel()
    await asyncio.gather(ticker, return_exceptions=True)
    await holder.release()

    assert ticks >= 10


async def test_tasks_of_one_process_exclude_each_other(tmp_path: Path) -> None:
    inside: list[str] = []
    overlaps = 0

    async def worker(name: str) -> None:
        nonlocal overlaps
        for _ in range(20):
            lock = RobustFileLock(tmp_path / "x.lock", poll_interval_s=0.002)
            async with lock as acquired:
                assert acquired
                overlaps += bool(inside)
                inside.append(name)
                await asyncio.sleep(0.001)
                inside.remove(name)

    await asyncio.gather(*(worker(f"w{i}") for i in range(4)))

    assert overlaps == 0


async def test_reentrant_acquisition_fails_fast(tmp_path: Path) -> None:
    lock = RobustFileLock(tmp_path / "x.lock")
    assert await lock.acquire()

    with pytest.raises(RuntimeError, match="already holds it"):
        await lock.acquire()
    began = time.monotonic()
    with pytest.raises(RuntimeError, match="not reentrant"):
        await RobustFileLock(tmp_path / "x.lock").acquire()
    assert time.monotonic() - began < 0.1
    await lock.release()
    assert await lock.acquire(timeout_s=0.1)  # released: fine again
    await lock.release()


async def test_a_missing_directory_is_created(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "notes.txt"

    await append_lines(path, ["one", "two"])

    assert path.read_text(encoding="utf-8") == "one\ntwo\n"
    assert (tmp_path / "a" / "b" / "notes.txt.lock").exists()


async def test_the_directory_vanishing_between_uses_is_survived(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    await append_line(folder / "n.txt", "first")
    shutil.rmtree(folder)

    await append_line(folder / "n.txt", "second")

    assert (folder / "n.txt").read_text(encoding="utf-8") == "second\n"


async def test_the_directory_vanishing_while_waiting_is_survived(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "locks"
    holder = RobustFileLock(folder / "x.lock")
    assert await holder.acquire()
    waiter = RobustFileLock(folder / "x.lock", poll_interval_s=0.005)
    waiting = asyncio.create_task(waiter.acquire(timeout_s=5.0))  # another task
    async with asyncio.timeout(5):  # a broken lock never makes it wait
        while waiter.attempts < 2:
            await asyncio.sleep(0.005)

    shutil.rmtree(folder)
    await holder.release()

    assert await waiting
    assert (folder / "x.lock").exists()  # the waiter locks the file at the path
    await waiter.release()


def test_a_replaced_lock_file_is_not_trusted(tmp_path: Path) -> None:
    lock = RobustFileLock(tmp_path / "x.lock")
    fd = lock._open()
    try:
        assert lock._is_current(fd)
        (tmp_path / "x.lock").unlink()
        assert not lock._is_current(fd)
        (tmp_path / "x.lock").write_text("")
        assert not lock._is_current(fd)
    finally:
        os.close(fd)


async def test_stale_holders_are_warned_about(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    holder = RobustFileLock(tmp_path / "x.lock", stale_warning_s=0.05, source="tester")
    assert await holder.acquire()
    await asyncio.sleep(0.1)

    with caplog.at_level(logging.WARNING):
        waiter = RobustFileLock(tmp_path / "x.lock", stale_warning_s=0.05)
        assert not await elsewhere(waiter.acquire(timeout_s=0.1))
        await holder.release()

    messages = [record.getMessage() for record in caplog.records]
    assert sum(f"held by pid {os.getpid()} (tester)" in m for m in messages) == 1
    assert any(m.endswith("s") and "was held for" in m for m in messages)


async def test_a_cancelled_waiter_leaves_nothing_held(tmp_path: Path) -> None:
    holder = RobustFileLock(tmp_path / "x.lock")
    assert await holder.acquire()
    waiter = RobustFileLock(tmp_path / "x.lock", poll_interval_s=0.005)
    waiting = asyncio.create_task(waiter.acquire(timeout_s=5.0))
    while waiter.attempts < 1:
        await asyncio.sleep(0.005)

    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await holder.release()

    again = RobustFileLock(tmp_path / "x.lock")
    assert await again.acquire(timeout_s=1.0)
    await again.release()
    assert filelock._claims == {}


async def test_run_holds_the_lock_until_the_function_returns(tmp_path: Path) -> None:
    lock = RobustFileLock(tmp_path / "x.lock")
    finished: list[float] = []

    def work() -> str:
        time.sleep(0.05)
        finished.append(time.monotonic())
        return "done"

    task = asyncio.create_task(lock.run(work))
    while not lock.held:
        await asyncio.sleep(0.001)
    task.cancel()  # the caller gives up; the work still finishes under the lock
    other = RobustFileLock(tmp_path / "x.lock", poll_interval_s=0.002)
    assert await other.acquire(timeout_s=2.0)
    acquired = time.monotonic()
    await other.release()

    assert finished
    assert finished[0] <= acquired
    assert await RobustFileLock(tmp_path / "y.lock").run(lambda: 42) == 42


async def test_a_line_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="line break"):
        await append_line(tmp_path / "n.txt", "two\nlines")


# -- confinement: a file that must stay inside a trusted folder ------------------


@pytest.fixture
def config(tmp_path: Path) -> Path:
    """A config directory with Home Assistant's files and a notes folder."""
    root = tmp_path / "config"
    (root / ".storage").mkdir(parents=True)
    (root / "voicestack").mkdir()
    (root / "configuration.yaml").write_text("homeassistant:\n", encoding="utf-8")
    (root / "secrets.yaml").write_text("pin: 4711\n", encoding="utf-8")
    return root


def untouched(config: Path) -> dict[str, str]:
    """Home Assistant's files as they are (they must stay so)."""
    return {
        name: (config / name).read_text(encoding="utf-8")
        for name in ("configuration.yaml", "secrets.yaml")
    }


async def test_confined_appends_create_missing_folders(config: Path) -> None:
    path = config / "voicestack" / "kitchen" / "notes.txt"

    await append_lines(path, ["one"], within=config)
    await append_line(path, "two", within=config)

    assert path.read_text(encoding="utf-8") == "one\ntwo\n"
    assert (path.parent / "notes.txt.lock").is_file()


def _link_the_file_to_the_secrets(config: Path) -> None:
    (config / "voicestack" / "notes.txt").symlink_to("../secrets.yaml")


def _link_the_folder_into_storage(config: Path) -> None:
    (config / "voicestack").rmdir()
    (config / "voicestack").symlink_to(".storage")


def _link_the_lock_file(config: Path) -> None:
    """flock, then truncate, through this link would clobber configuration.yaml."""
    (config / "voicestack" / "notes.txt.lock").symlink_to("../configuration.yaml")


def _dangling_link_outside(config: Path) -> None:
    """Following it would create a file outside the config directory."""
    (config / "voicestack" / "notes.txt").symlink_to(config.parent / "outside.txt")


def _a_directory(config: Path) -> None:
    (config / "voicestack" / "notes.txt").mkdir()


def _a_fifo(config: Path) -> None:
    """Opening it for writing would wait for a reader for ever."""
    os.mkfifo(config / "voicestack" / "notes.txt")


def _a_fifo_as_the_lock_file(config: Path) -> None:
    """Opened for reading and writing, a FIFO does not block: its type is checked."""
    os.mkfifo(config / "voicestack" / "notes.txt.lock")


def _a_file_as_the_folder(config: Path) -> None:
    (config / "voicestack").rmdir()
    (config / "voicestack").write_text("", encoding="utf-8")


@pytest.mark.parametrize(
    ("plant", "reason"),
    [
        (_link_the_file_to_the_secrets, "symlink"),
        (_link_the_folder_into_storage, "symlink"),
        (_link_the_lock_file, "symlink"),
        (_dangling_link_outside, "symlink"),
        (_a_directory, "not_a_file"),
        (_a_fifo, "not_a_file"),
        (_a_fifo_as_the_lock_file, "not_a_file"),
        (_a_file_as_the_folder, "not_a_file"),
    ],
)
async def test_a_planted_link_or_non_file_is_refused_at_write_time(
    config: Path, plant: Callable[[Path], None], reason: str
) -> None:
    before = untouched(config)
    plant(config)

    with pytest.raises(ConfinementError) as refused:
        await append_lines(
            config / "voicestack" / "notes.txt", ["PIN 4711"], within=config
        )

    assert refused.value.reason == reason
    assert untouched(config) == before
    assert list((config / ".storage").iterdir()) == []
    assert not (config.parent / "outside.txt").exists()
    assert filelock._claims == {}


async def test_a_link_swapped_in_between_writes_is_refused(config: Path) -> None:
    notes = config / "voicestack" / "notes.txt"
    await append_line(notes, "first", within=config)
    before = untouched(config)

    notes.unlink()
    notes.symlink_to(config / "secrets.yaml")  # an absolute link this time
    with pytest.raises(ConfinementError):
        await append_line(notes, "second", within=config)

    assert untouched(config) == before


def test_open_confined_takes_only_plain_relative_paths(config: Path) -> None:
    for bad in ("", "/etc/passwd", "../secrets.yaml", "voicestack/../secrets.yaml"):
        with pytest.raises(ValueError, match="not a plain relative path"):
            open_confined(config, bad, os.O_RDONLY)
    with pytest.raises(FileNotFoundError):
        open_confined(config, "voicestack/a/b.txt", os.O_RDONLY, make_dirs=False)
    with pytest.raises(ValueError, match="is not in the subpath"):
        RobustFileLock(config.parent / "x.lock", within=config)
