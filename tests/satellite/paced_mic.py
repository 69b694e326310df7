"""A recorder as ``arecord`` is one: raw PCM in real time, forever.

``python paced_mic.py RAW GO BYTES_PER_S`` prints silence until the file GO
exists, then RAW at BYTES_PER_S, then silence again: the test decides when the
person speaks, as ``--mic-file`` waits for ``run-satellite``.
"""

from __future__ import annotations

from pathlib import Path
import sys
import time

STEP_S = 0.02


def main() -> None:
    """Print until killed."""
    raw, go, rate = Path(sys.argv[1]).read_bytes(), Path(sys.argv[2]), int(sys.argv[3])
    step = int(rate * STEP_S) // 8 * 8  # whole frames of up to 8 bytes
    out = sys.stdout.buffer
    position, due = 0, time.monotonic()
    while True:
        if position < len(raw) and go.exists():
            piece = raw[position : position + step].ljust(step, b"\0")
            position += step
        else:
            piece = bytes(step)
        out.write(piece)
        out.flush()
        due += step / rate
        time.sleep(max(0.0, due - time.monotonic()))


if __name__ == "__main__":
    main()
