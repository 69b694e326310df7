"""Give freed memory back to the system after a large buffer was dropped.

The player keeps its audio as many small numpy arrays, which glibc's malloc
serves from its heap. Freeing them makes the memory reusable by the process, but
not smaller: the pages stay resident until ``malloc_trim`` returns them. After a
flush of the bounded player buffer (docs/satellite.md, "Limits") this is what
brings the resident size back down. On a C library without ``malloc_trim``
(musl, macOS) nothing happens.
"""

from __future__ import annotations

from collections.abc import Callable
import ctypes
import ctypes.util
import functools
import logging

_LOGGER = logging.getLogger(__name__)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        trim = ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):
        trim = None
    if trim is None:
        _LOGGER.debug("No malloc_trim: freed memory stays with the process")
    return trim


def release_freed_memory() -> None:
    """Return the heap's free pages to the system (glibc), else do nothing."""
    if (trim := _malloc_trim()) is not None:
        trim(0)
