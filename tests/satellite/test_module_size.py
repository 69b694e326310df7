"""Every satellite module, in sub-packages too, stays readable in one sitting (300 lines)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "satellite" / "voicestack_satellite"
MAX_LINES = 300


def test_no_satellite_module_is_over_300_lines() -> None:
    sizes = {
        str(path.relative_to(PACKAGE)): len(
            path.read_text(encoding="utf-8").splitlines()
        )
        for path in PACKAGE.rglob("*.py")
    }

    assert len(sizes) > 10
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
