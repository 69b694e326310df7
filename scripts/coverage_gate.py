"""Fail when the integration's test coverage falls below what it must keep.

scripts/test runs the suite on the newest Home Assistant under coverage
(pyproject.toml's ``[tool.coverage.run]``); this reads the data it wrote:

- the config and options flows (the options' Voices step too) are covered
  completely (quality scale: every step, error and abort is tested);
- the whole of ``custom_components/voicestack`` stays at or above ``TOTAL_FLOOR``.

    python -m scripts.coverage_gate
"""

from __future__ import annotations

import sys

import coverage

FULLY_COVERED = ("config_flow.py", "options_flow.py", "voice_options.py")
TOTAL_FLOOR = 95.0


def main() -> int:
    """Print the figures; 1 when a module or the total falls short."""
    cov = coverage.Coverage()
    cov.load()
    total = cov.report(show_missing=True, skip_covered=True, file=sys.stdout)
    failed = False
    for filename in cov.get_data().measured_files():
        if filename.endswith(FULLY_COVERED):
            _, statements, _, missing, _ = cov.analysis2(filename)
            if missing:
                print(f"coverage: {filename}: lines {missing} not covered")
                failed = True
            else:
                print(f"coverage: {filename}: all {len(statements)} statements covered")
    if total < TOTAL_FLOOR:
        print(f"coverage: total {total:.1f} % is below {TOTAL_FLOOR} %")
        failed = True
    else:
        print(f"coverage: total {total:.1f} % (floor {TOTAL_FLOOR} %)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
