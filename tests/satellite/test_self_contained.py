"""The satellite package stands on its own: ``satellite/`` copied to a Pi works.

Nothing in it may link out of it: a copy without the repository would break.
(What it shares with the integration, the events and the defensive Wyoming
reader, is a package of its own, voicestack-protocol, which it depends on.)
"""

from __future__ import annotations

from pathlib import Path

SATELLITE = Path(__file__).resolve().parents[2] / "satellite"


def test_nothing_in_the_satellite_links_out_of_it() -> None:
    links = [path for path in SATELLITE.rglob("*") if path.is_symlink()]

    assert links == []
