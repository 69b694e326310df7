"""The mic loop: every chunk to the coordinator, and a failing chunk never ends it.

A satellite that stops listening is broken whatever else works, so one exception
while processing a chunk is logged and the next chunk is processed as usual. A
fault that repeats must neither flood the log (50 chunks a second) nor leave a
deaf satellite running quietly: one traceback per minute of mic audio at most,
with a count of the failures in between, ``on_error`` for the state hook (LEDs),
and after 10 s of mic audio in which every chunk failed the loop gives up with
``MicLoopError``, so the process exits and its service manager (systemd
``Restart=always``) starts it afresh. Time is counted in mic chunks, so the
rules hold exactly whatever the load.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable
import logging

import numpy as np

from .audio import RATE
from .mic_format import READ_SAMPLES

_LOGGER = logging.getLogger(__name__)

CHUNKS_PER_S = RATE / READ_SAMPLES  # 50
GIVE_UP_CHUNKS = round(10 * CHUNKS_PER_S)  # every chunk failed for 10 s
REPORT_EVERY_CHUNKS = round(60 * CHUNKS_PER_S)  # at most one traceback a minute


class MicLoopError(Exception):
    """Every mic chunk failed for ``GIVE_UP_CHUNKS`` in a row."""


async def run_mic_loop(
    chunks: AsyncIterable[np.ndarray],
    process: Callable[[np.ndarray], Awaitable[None]],
    on_error: Callable[[str], None],
) -> None:
    """Feed ``chunks`` to ``process`` until they end; see the module for failures."""
    in_a_row = 0  # failed chunks since the last good one
    unreported = 0  # failures since the last traceback
    since_report: int | None = None  # chunks since the last traceback
    async for chunk in chunks:
        if since_report is not None:
            since_report += 1
        try:
            await process(chunk)
        except Exception as err:
            in_a_row += 1
            if since_report is None or since_report >= REPORT_EVERY_CHUNKS:
                _LOGGER.exception(
                    "Processing a mic chunk failed (%d more failures since the "
                    "last report); still listening",
                    unreported,
                )
                on_error(f"mic processing failed: {err!r}")
                since_report, unreported = 0, 0
            else:
                unreported += 1
            if in_a_row >= GIVE_UP_CHUNKS:
                raise MicLoopError(
                    f"every mic chunk failed for {GIVE_UP_CHUNKS / CHUNKS_PER_S:g} s"
                    f" (last: {err!r})"
                ) from err
        else:
            in_a_row = 0
