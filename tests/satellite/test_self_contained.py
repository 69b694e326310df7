"""The satellite package stands on its own: ``satellite/`` copied to a Pi works.

Nothing in it may link out of it (a copy without the repository would break),
and ``wire.py``, the defensive Wyoming reader both ends use, is a copy of the
integration's: it must stay the same file, byte for byte, until the shared
protocol package replaces both.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SATELLITE = ROOT / "satellite"


def test_nothing_in_the_satellite_links_out_of_it() -> None:
    links = [path for path in SATELLITE.rglob("*") if path.is_symlink()]

    assert links == []


def test_the_satellites_wire_reader_is_the_integrations() -> None:
    ours = SATELLITE / "voicestack_satellite" / "wire.py"
    theirs = ROOT / "custom_components" / "voicestack" / "core" / "wire.py"

    assert ours.read_bytes() == theirs.read_bytes(), (
        "satellite/voicestack_satellite/wire.py differs from "
        "custom_components/voicestack/core/wire.py: edit one, copy it to the other"
    )
