"""What the satellite's mic does now, and so what may start a request.

"When does the mic stream?" has one answer: in ``ListenerState.STREAMING``
(``listener.py`` enters and leaves it); every other state says what may start
a request (docs/satellite.md).
"""

from __future__ import annotations

from enum import Enum
from typing import Final


class ListenerState(Enum):
    """What the mic does now, and so what may start a request."""

    UNOWNED = "unowned"  # no owner: wake words are logged, nothing streams
    PAUSED = "paused"  # the owner muted the satellite: nothing starts a request
    WAKE_WORD = "wake word"  # only a wake word starts a request
    WINDOW = "window"  # until ``_window_ends``: speech or a wake word starts one
    CONTINUOUS = "continuous"  # always listening: every speech segment is one
    STREAMING = "streaming"  # the mic goes to the owner as a request


# States where speech (not only a wake word) starts a request.
HEARS_SPEECH: Final = (ListenerState.WINDOW, ListenerState.CONTINUOUS)
