"""The dev stack's import rules, read from the source.

``devstack/`` is what tests, ``scripts/`` and ``bench/`` build on, so none of
those three may import ``tests``; and the modules the satellite's tests use must
import nothing from Home Assistant, so they also run on the satellite's Python 3.11
where Home Assistant is not installed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# What tests/satellite and tests/test_speech_chain.py import from the dev stack.
SATELLITE_SIDE = (
    "speech",
    "servers",
    "satellite",
    "spoken_request",
    "waiting",
    "follow_on",
)
HA_PACKAGES = ("homeassistant", "custom_components")


def imported(path: Path) -> Iterator[str]:
    """Every module ``path`` imports, absolute names only."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module
            if node.module == "devstack":  # from devstack import speech
                yield from (f"devstack.{alias.name}" for alias in node.names)


def top(module: str) -> str:
    """The package a module name belongs to."""
    return module.partition(".")[0]


def test_devstack_bench_and_scripts_import_nothing_from_tests() -> None:
    offenders = [
        f"{path.relative_to(REPO)} imports {module}"
        for folder in ("devstack", "bench", "scripts")
        for path in sorted((REPO / folder).glob("*.py"))
        for module in imported(path)
        if top(module) == "tests"
    ]

    assert offenders == []


def test_the_satellite_side_of_devstack_needs_no_home_assistant() -> None:
    seen: set[str] = set()
    pending = [f"devstack.{name}" for name in SATELLITE_SIDE]
    offenders: list[str] = []
    while pending:
        module = pending.pop()
        if module in seen:
            continue
        seen.add(module)
        path = REPO / "devstack" / f"{module.removeprefix('devstack.')}.py"
        for name in imported(path):
            if top(name) in HA_PACKAGES:
                offenders.append(f"{module} imports {name}")
            elif name.startswith("devstack.") and name.count(".") == 1:
                pending.append(name)

    assert offenders == []
    assert "devstack.errors" in seen  # the walk follows devstack's own imports
