"""The integration's modules import each other without cycles; the core is HA-free.

Every import counts, wherever it stands: at the top, under ``TYPE_CHECKING`` and
inside functions. A cycle hidden under ``TYPE_CHECKING`` or in a function is
still two modules that cannot be understood (or moved) one without the other.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "custom_components.voicestack"
CORE = f"{PACKAGE}.core"


def modules() -> dict[str, Path]:
    """Every module of the integration by dotted name (packages as their name)."""
    found = {}
    for path in (ROOT / Path(*PACKAGE.split("."))).rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: Mapping[str, Path]) -> Iterator[str]:
    """The modules ``name`` imports, absolute and relative, anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *filter(None, [base])])
            # ``from . import compat`` imports the module ``compat``, not the
            # package's ``__init__`` (which is imported first as its parent).
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            yield from (module for module in submodules if module in known)
            if not all(module in known for module in submodules):
                yield base


def graph() -> dict[str, set[str]]:
    """Module -> the integration's modules it imports."""
    known = modules()
    return {
        name: {target for target in imported(name, path, known) if target in known}
        - {name}
        for name, path in known.items()
    }


def cycles(edges: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(edges[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = set()
            while (member := stack.pop()) != node:
                component.add(member)
            if component:
                found.append(frozenset({node, *component}))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle() -> None:
    assert [sorted(cycle) for cycle in cycles(graph())] == []


def test_the_walk_sees_type_checking_and_function_level_imports(
    tmp_path: Path,
) -> None:
    module = tmp_path / "hub.py"
    module.write_text(
        "from typing import TYPE_CHECKING\n"
        "from . import compat\n"
        "if TYPE_CHECKING:\n"
        "    from .entity import Entity\n"
        "def later():\n"
        "    from .core.router import rules\n",
        encoding="utf-8",
    )
    known = {f"{PACKAGE}.compat": module, f"{PACKAGE}.core.router.rules": module}

    assert set(imported(f"{PACKAGE}.hub", module, known)) >= {
        f"{PACKAGE}.compat",
        f"{PACKAGE}.entity",
        f"{PACKAGE}.core.router.rules",
    }
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        frozenset("abc")
    ]


def test_the_core_imports_nothing_from_home_assistant() -> None:
    known = modules()
    offenders = {
        name: target
        for name, path in known.items()
        if name == CORE or name.startswith(f"{CORE}.")
        for target in imported(name, path, known)
        if target == "homeassistant" or target.startswith("homeassistant.")
    }

    assert offenders == {}


def test_the_core_imports_nothing_of_the_glue() -> None:
    edges = graph()
    glue = {
        f"{name} -> {target}"
        for name, targets in edges.items()
        if name == CORE or name.startswith(f"{CORE}.")
        for target in targets
        if not (target == CORE or target.startswith(f"{CORE}."))
    }

    assert glue == set()
