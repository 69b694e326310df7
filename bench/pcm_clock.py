"""A stand-in sound command for the satellite: logs when PCM arrives on stdin.

``bench/satellite_latency.py`` runs the satellite with ``--snd-command 'python
bench/pcm_clock.py LOG'``. Each read is logged as ``<time.monotonic()> <bytes>``
(the clock is system-wide, so the bench can compare it with its own), and the
bench models an ideal sound card that plays every sample in real time from its
arrival. The audio itself is discarded.

    python bench/pcm_clock.py LOG < raw.pcm
"""

from __future__ import annotations

import os
from pathlib import Path
import sys
import time


def main(log_path: Path) -> None:
    """Log every read until stdin closes (or the process is terminated)."""
    with log_path.open("w", buffering=1) as log:  # line-buffered: nothing is lost
        while data := os.read(0, 1 << 16):
            log.write(f"{time.monotonic()} {len(data)}\n")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
