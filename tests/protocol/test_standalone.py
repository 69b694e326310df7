"""voicestack-protocol stands alone: both ends install it, neither is in it.

It imports only the standard library, wyoming and itself (no Home Assistant, no
numpy: the integration and the satellite each bring their own), and every event
name is one of the extension events it lists.
"""

from __future__ import annotations

import ast
from pathlib import Path
import sys

import voicestack_protocol as protocol

PACKAGE = Path(protocol.__file__).parent


def imported_roots(path: Path) -> set[str]:
    """The top-level modules ``path`` imports (relative imports: itself)."""
    roots: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            roots.add("voicestack_protocol" if node.level else node.module or "")
        elif isinstance(node, ast.Import):
            roots.update(alias.name for alias in node.names)
    return {name.split(".")[0] for name in roots}


def test_it_imports_only_the_standard_library_wyoming_and_itself() -> None:
    modules = sorted(PACKAGE.glob("*.py"))
    assert len(modules) > 1
    outside = {
        module.name: imported_roots(module)
        - set(sys.stdlib_module_names)
        - {"__future__", "wyoming", "voicestack_protocol"}
        for module in modules
    }

    assert not any(outside.values()), outside


def test_every_event_is_listed_once_by_direction() -> None:
    events = protocol.SATELLITE_EVENTS + protocol.PEER_EVENTS

    assert len(set(events)) == len(events)
    assert all(name.startswith("voicestack-") for name in events)
    assert set(protocol.ASKED_FOR) <= set(protocol.SATELLITE_EVENTS)
