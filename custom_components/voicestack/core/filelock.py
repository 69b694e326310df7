"""RobustFileLock: one writer at a time across processes, without blocking the loop.

**POSIX only** (Linux, macOS): it uses ``fcntl.flock``; Windows is not supported.
The lock file must be on a local filesystem (``flock`` over NFS is unreliable).

Why ``flock`` and not temp files and renames: the kernel grants it atomically,
releases it when the holder dies (no stale lock can outlive its process), and it
needs no size checks or cleanup. Two open files of the same lock conflict even in
one process, so tasks of one process exclude each other as processes do.

Contracts:

- **Event loop**: every blocking call (mkdir, open, flock, write, unlock) runs in
  the executor; waiting polls ``flock(LOCK_EX | LOCK_NB)`` inside the executor
  thread with a growing pause (1 ms up to ``poll_interval_s``, jittered), so a
  waiter neither blocks the loop nor floods it.
- **Not reentrant**: the task (or thread) that holds or is acquiring a lock may not
  acquire it again; that raises ``RuntimeError`` at once instead of deadlocking
  until the timeout. Other tasks of the same process wait like other processes.
- **Directory vanishes**: a missing directory is created again and the open
  retried; a lock file removed or replaced while we waited for it is detected
  (the locked file is no longer the one at the path) and the acquisition retried.
- **Stale warning**: the holder writes its pid, source and start time into the
  lock file; a waiter logs one warning when the holder has held it longer than
  ``stale_warning_s``, and a holder that held it that long warns at release.
- **Timeout**: ``acquire`` returns False after ``timeout_s``; ``run`` and
  ``append_line`` raise ``LockTimeoutError``. On failure the caller must assume
  nothing was written.
- **Cancellation**: cancelling a waiter never leaves the lock held; ``run`` holds
  the lock until its blocking function has returned, even if the awaiting task is
  cancelled meanwhile (the lock is released in the executor, after the function).
- **Forking** while holding a lock is not supported (the child shares the lock).

``append_line(path, line)`` appends one line under ``<path>.lock``: the notes file
target uses it, and any file two processes may append to can.

**Confinement** (``within``): a file that must stay inside a trusted folder (the
notes file in Home Assistant's config directory) is opened by ``open_confined``,
one path component at a time from ``within`` with ``O_NOFOLLOW``, data file and
lock file alike. A symbolic link anywhere below ``within`` (planted before the
write or while it runs), a folder that is a file, or a target that is not a
regular file (a directory, a FIFO, a device) raises ``ConfinementError``; nothing
is written and nothing outside ``within`` is created or truncated. Checking a
resolved path first and opening it afterwards would leave a window for a swap;
walking with ``O_NOFOLLOW`` has none.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
import contextlib
import errno
import fcntl  # POSIX only
from functools import partial
import json
import logging
import os
from pathlib import Path, PurePath
import random
import stat
import threading
import time
from typing import Any, Final

__all__ = [
    "ConfinementError",
    "LockTimeoutError",
    "RobustFileLock",
    "append_line",
    "append_lines",
    "open_confined",
]

_LOGGER = logging.getLogger(__name__)

_DIRECTORY_RETRIES: Final = 5
_FIRST_PAUSE_S: Final = 0.001

# Who holds or is acquiring which lock in this process (the reentrancy guard).
_claims: dict[str, set[object]] = {}
_claims_guard = threading.Lock()


class LockTimeoutError(TimeoutError):
    """The lock was not acquired in time; nothing was done."""


class ConfinementError(OSError):
    """A path below a trusted folder is a symbolic link or not a regular file.

    ``reason`` is ``"symlink"`` or ``"not_a_file"`` (a folder on the way is a
    file, or the target is a directory, FIFO or device). Nothing was opened.
    """

    def __init__(self, path: str, reason: str) -> None:
        """``path`` as given, below its trusted folder."""
        what = "a symbolic link" if reason == "symlink" else "not a regular file"
        super().__init__(f"{path}: {what} on the way; refused")
        self.reason = reason


# Errors of an O_NOFOLLOW open that mean "not what it should be", not "missing".
_REFUSED_ERRNOS: Final = frozenset(
    {errno.ELOOP, errno.EMLINK, errno.ENOTDIR, errno.EISDIR, errno.ENXIO}
)
_FOLDER_FLAGS: Final = (
    os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
)
# O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader.
_LEAF_FLAGS: Final = os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


def _refusal(folder_fd: int, name: str, shown: str) -> ConfinementError:
    """What ``name`` in the open folder is, as the refusal of opening it.

    Gone meanwhile: ``FileNotFoundError``, which the callers retry.
    """
    mode = os.lstat(name, dir_fd=folder_fd).st_mode
    return ConfinementError(shown, "symlink" if stat.S_ISLNK(mode) else "not_a_file")


def _open_folder(folder_fd: int, name: str, make_dirs: bool, shown: str) -> int:
    """Open sub-folder ``name`` (created if missing and ``make_dirs``), never a link."""
    try:
        try:
            return os.open(name, _FOLDER_FLAGS, dir_fd=folder_fd)
        except FileNotFoundError:
            if not make_dirs:
                raise
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o755, dir_fd=folder_fd)
            return os.open(name, _FOLDER_FLAGS, dir_fd=folder_fd)
    except OSError as err:
        if err.errno in _REFUSED_ERRNOS:
            raise _refusal(folder_fd, name, shown) from err
        raise


def _open_leaf(folder_fd: int, name: str, flags: int, shown: str) -> int:
    """Open file ``name`` with ``flags``; it must be a regular file, not a link."""
    try:
        fd = os.open(name, flags | _LEAF_FLAGS, 0o644, dir_fd=folder_fd)
    except OSError as err:
        if err.errno in _REFUSED_ERRNOS:
            raise _refusal(folder_fd, name, shown) from err
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfinementError(shown, "not_a_file")
    return fd


def open_confined(
    within: str | os.PathLike[str],
    relative: str | PurePath,
    flags: int,
    *,
    make_dirs: bool = True,
) -> int:
    """Open ``within/relative`` with ``flags`` without leaving ``within``; the fd.

    Every folder on the way is opened relative to the one before with
    ``O_NOFOLLOW`` (missing ones are created when ``make_dirs``), then the file,
    which must be a regular file. ``within`` itself is trusted (it may be a
    link). Raises ``ConfinementError`` for a link, a non-folder on the way or a
    target that is not a regular file; ``FileNotFoundError`` when something is
    missing that ``flags``/``make_dirs`` do not create. ``relative`` must be a
    relative path without ``.`` or ``..`` parts (``ValueError``).
    """
    parts = PurePath(relative).parts
    if not parts or PurePath(relative).is_absolute() or {".", ".."} & set(parts):
        raise ValueError(f"{relative}: not a plain relative path")
    shown = str(relative)
    fd = os.open(within, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
    try:
        for name in parts[:-1]:
            child = _open_folder(fd, name, make_dirs, shown)
            os.close(fd)
            fd = child
        return _open_leaf(fd, parts[-1], flags, shown)
    finally:
        os.close(fd)


def _owner() -> object:
    """The current task, or the current thread outside an event loop."""
    try:
        task = asyncio.current_task()
    except RuntimeError:
        task = None
    return task if task is not None else ("thread", threading.get_ident())


class RobustFileLock:
    """An exclusive ``flock`` on ``path``, acquired and released off the loop."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        source: str = "voicestack",
        timeout_s: float = 5.0,
        poll_interval_s: float = 0.05,
        stale_warning_s: float = 30.0,
        within: str | os.PathLike[str] | None = None,
    ) -> None:
        """Lock file ``path`` (``~`` and ``$VARS`` expanded); nothing is opened yet.

        ``source`` names the holder in the lock file (for the stale warning).
        With ``within``, ``path`` must lie below that folder and is opened
        confined to it (``open_confined``).
        """
        self.path = Path(os.path.expandvars(os.fspath(path))).expanduser()
        # (folder, path below it); ValueError when path is not below within.
        self._confined = (
            None if within is None else (Path(within), self.path.relative_to(within))
        )
        self.source = source
        self.timeout_s = timeout_s
        self.poll_interval_s = poll_interval_s
        self.stale_warning_s = stale_warning_s
        self.attempts = 0  # flock attempts of the current/last acquisition
        self._key = str(self.path.absolute())
        self._fd: int | None = None
        self._owner: object = None
        self._acquired_at = 0.0

    @classmethod
    def for_file(cls, path: str | os.PathLike[str], **kwargs: Any) -> RobustFileLock:
        """The lock guarding data file ``path``: ``<path>.lock`` next to it."""
        data = Path(path)
        return cls(data.with_name(data.name + ".lock"), **kwargs)

    @property
    def held(self) -> bool:
        """This instance holds the lock."""
        return self._fd is not None

    # -- async API ------------------------------------------------------------------

    async def acquire(self, timeout_s: float | None = None) -> bool:
        """Wait up to ``timeout_s`` (default: the instance's) for the lock.

        True when held, False on timeout. Raises ``RuntimeError`` if this task
        already holds or is acquiring it, or if this instance holds it.
        """
        if self._fd is not None:
            raise RuntimeError(f"{self.path}: this lock object already holds it")
        owner = _owner()
        self._claim(owner)
        deadline = time.monotonic() + (
            self.timeout_s if timeout_s is None else timeout_s
        )
        cancel = threading.Event()
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(None, self._lock_blocking, deadline, cancel)
        try:
            fd = await asyncio.shield(future)
        except asyncio.CancelledError:
            cancel.set()
            future.add_done_callback(self._drop_late_fd)
            self._unclaim(owner)
            raise
        except BaseException:
            self._unclaim(owner)
            raise
        if fd is None:
            self._unclaim(owner)
            return False
        self._fd, self._owner, self._acquired_at = fd, owner, time.monotonic()
        return True

    async def release(self) -> None:
        """Unlock and close (in the executor); a no-op when not held."""
        if self._fd is None:
            return
        future = asyncio.get_running_loop().run_in_executor(
            None, self._release_blocking
        )
        await asyncio.shield(future)

    async def run[T](
        self, function: Callable[[], T], timeout_s: float | None = None
    ) -> T:
        """Acquire, run blocking ``function`` in the executor, release; its result.

        The release happens in the same executor job, after ``function``: a
        cancelled caller cannot free the lock while ``function`` still runs.
        Raises ``LockTimeoutError`` if the lock is not acquired in time.
        """
        if not await self.acquire(timeout_s):
            waited = self.timeout_s if timeout_s is None else timeout_s
            raise LockTimeoutError(f"{self.path}: not acquired within {waited:g} s")

        def locked() -> T:
            try:
                return function()
            finally:
                self._release_blocking()

        future = asyncio.get_running_loop().run_in_executor(None, locked)
        return await asyncio.shield(future)

    async def __aenter__(self) -> bool:
        """``async with lock as acquired``: acquired is False on timeout."""
        return await self.acquire()

    async def __aexit__(self, *exc: object) -> None:
        """Release if held."""
        await self.release()

    # -- reentrancy guard -------------------------------------------------------------

    def _claim(self, owner: object) -> None:
        with _claims_guard:
            owners = _claims.setdefault(self._key, set())
            if owner in owners:
                raise RuntimeError(
                    f"{self.path}: not reentrant; this task already holds or awaits it"
                )
            owners.add(owner)

    def _unclaim(self, owner: object) -> None:
        with _claims_guard:
            owners = _claims.get(self._key, set())
            owners.discard(owner)
            if not owners:
                _claims.pop(self._key, None)

    # -- blocking parts (executor) -------------------------------------------------------

    def _lock_blocking(self, deadline: float, cancel: threading.Event) -> int | None:
        """Poll for the lock until ``deadline``; the locked fd or None."""
        self.attempts = 0
        pause = _FIRST_PAUSE_S
        warned = False
        while not cancel.is_set():
            self.attempts += 1
            fd = self._open()
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
            except BaseException:
                os.close(fd)
                raise
            else:
                if self._is_current(fd):
                    self._write_holder(fd)
                    return fd
                os.close(fd)  # removed or replaced while we waited: try again
                continue
            warned = warned or self._warn_if_stale()
            left = deadline - time.monotonic()
            if left <= 0:
                break
            jitter = 0.5 + random.random() / 2  # noqa: S311 - spreading waiters, not security
            cancel.wait(min(pause * jitter, left))
            pause = min(pause * 2, self.poll_interval_s)
        return None

    def _open(self) -> int:
        """Open (create) the lock file; recreate a vanished directory."""
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        if self._confined is not None:
            return _confined_retrying(*self._confined, flags)
        for _ in range(_DIRECTORY_RETRIES - 1):
            try:
                return os.open(self.path, flags, 0o644)
            except FileNotFoundError:
                with contextlib.suppress(FileNotFoundError):
                    self.path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(self.path, flags, 0o644)

    def _is_current(self, fd: int) -> bool:
        """The locked file is still the one at ``path``."""
        try:
            now = self.path.stat()
        except FileNotFoundError:
            return False
        mine = os.fstat(fd)
        return (mine.st_dev, mine.st_ino) == (now.st_dev, now.st_ino)

    def _write_holder(self, fd: int) -> None:
        """Who holds it, for a waiter's stale warning (debugging only)."""
        holder = {"pid": os.getpid(), "source": self.source, "since": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(holder).encode(), 0)

    def _warn_if_stale(self) -> bool:
        """Warn (once) when the current holder has held it too long."""
        try:
            holder = json.loads(self.path.read_text(encoding="utf-8"))
            held_s = time.time() - float(holder["since"])
        except (OSError, ValueError, KeyError, TypeError):
            return False  # no holder info (yet): nothing to say
        if held_s <= self.stale_warning_s:
            return False
        _LOGGER.warning(
            "Lock %s held by pid %s (%s) for %.1f s; waiting",
            self.path,
            holder.get("pid"),
            holder.get("source"),
            held_s,
        )
        return True

    def _release_blocking(self) -> None:
        fd, owner = self._fd, self._owner
        if fd is None:
            return
        self._fd, self._owner = None, None
        held_s = time.monotonic() - self._acquired_at
        try:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
            self._unclaim(owner)
        if held_s > self.stale_warning_s:
            _LOGGER.warning("Lock %s was held for %.1f s", self.path, held_s)

    def _drop_late_fd(self, future: asyncio.Future[int | None]) -> None:
        """A cancelled acquisition got the lock after all: let it go."""
        if future.cancelled() or future.exception() is not None:
            return
        fd = future.result()
        if fd is not None:
            os.close(fd)  # closing the only descriptor releases the flock


def _confined_retrying(within: Path, relative: PurePath, flags: int) -> int:
    """``open_confined``, again when a folder vanished between its steps."""
    for _ in range(_DIRECTORY_RETRIES - 1):
        with contextlib.suppress(FileNotFoundError):
            return open_confined(within, relative, flags)
    return open_confined(within, relative, flags)


def _append_confined(within: Path, relative: PurePath, text: str) -> None:
    """Append ``text`` to ``within/relative``, confined (see ``open_confined``)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    fd = _confined_retrying(within, relative, flags)
    with os.fdopen(fd, "a", encoding="utf-8") as file:
        file.write(text)


def _append(path: Path, text: str) -> None:
    """Append ``text``; recreate a vanished directory."""
    for attempt in range(_DIRECTORY_RETRIES):
        try:
            with path.open("a", encoding="utf-8") as file:
                file.write(text)
        except FileNotFoundError:
            if attempt == _DIRECTORY_RETRIES - 1:
                raise
            with contextlib.suppress(FileNotFoundError):
                path.parent.mkdir(parents=True, exist_ok=True)
        else:
            return


async def append_lines(
    path: str | os.PathLike[str],
    lines: Iterable[str],
    *,
    timeout_s: float = 5.0,
    source: str = "voicestack",
    within: str | os.PathLike[str] | None = None,
) -> None:
    """Append ``lines`` to ``path`` as one locked write (``<path>.lock``).

    A line must not contain a newline (``ValueError``): one line is one record.
    Raises ``LockTimeoutError`` if another writer holds the lock past
    ``timeout_s``. With ``within``, both files are opened confined to that
    folder and ``ConfinementError`` means nothing was written.
    """
    records = list(lines)
    if any("\n" in line or "\r" in line for line in records):
        raise ValueError("a line must not contain a line break")
    if not records:
        return
    data = Path(path)
    lock = RobustFileLock.for_file(
        data, source=source, timeout_s=timeout_s, within=within
    )
    text = "".join(f"{line}\n" for line in records)
    if within is None:
        await lock.run(partial(_append, data, text))
    else:
        await lock.run(
            partial(_append_confined, Path(within), data.relative_to(within), text)
        )


async def append_line(
    path: str | os.PathLike[str],
    line: str,
    *,
    timeout_s: float = 5.0,
    source: str = "voicestack",
    within: str | os.PathLike[str] | None = None,
) -> None:
    """Append one ``line`` to ``path`` under its lock (see ``append_lines``)."""
    await append_lines(path, (line,), timeout_s=timeout_s, source=source, within=within)
