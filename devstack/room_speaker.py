"""The speaker of a simulated room: a satellite's ``--snd-command`` (devstack/room.py).

Copies the raw PCM the satellite's player writes on stdin to the room's Unix
socket as it comes, so the room hears it when a real speaker would play it.

    python -m devstack.room_speaker /tmp/room.sock
"""

from __future__ import annotations

import socket
import sys

BLOCK = 4096


def main(path: str) -> None:
    """Forward stdin to the socket at ``path`` until either end closes."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as room:
        room.connect(path)
        while data := sys.stdin.buffer.read1(BLOCK):
            try:
                room.sendall(data)
            except OSError:
                return


if __name__ == "__main__":
    main(sys.argv[1])
