"""A static scan of the Home Assistant API the integration relies on.

Names that moved or went away, and base-class methods whose signature changed
under an override, otherwise surface only when that code path runs. The scan
parses the integration (never imports it, so it works while it does not import)
and resolves each ``homeassistant.*`` name against the installed wheel. Private
members of HA's base classes change without notice: only ``compat.py`` may use them.

Run: ``scripts/ha-run .venv/bin/python -m tests.integration.ha_api_surface [DIR]``
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
import functools
import importlib
import inspect
from pathlib import Path
import re
import sys
from types import ModuleType
from typing import Any

from annotationlib import Format

MISSING = "missing name"
SIGNATURE = "changed signature"
PRIVATE = "private HA member used"
COMPAT_MODULE = "compat.py"  # the one module allowed to touch private HA members
PACKAGE_DIR = Path(__file__).resolve().parents[2] / "custom_components" / "voicestack"
# Underscored, yet the documented way for a config flow to use its base
# (developers.home-assistant.io, "Config flow"); every integration calls them.
PROTECTED_API = frozenset(
    [
        "_abort_if_unique_id_configured",
        "_abort_if_unique_id_mismatch",
        "_async_in_progress",
        "_async_abort_entries_match",
        "_async_current_entries",
        "_async_current_ids",
        "_async_handle_discovery_without_unique_id",
        "_get_reauth_entry",
        "_get_reconfigure_entry",
    ]
)

_P = inspect.Parameter
_POSITIONAL = (_P.POSITIONAL_ONLY, _P.POSITIONAL_OR_KEYWORD)
_VARIADIC = (_P.VAR_POSITIONAL, _P.VAR_KEYWORD)
# The kinds an override's parameter may have so that every call still binds.
_BINDS = {
    _P.POSITIONAL_ONLY: _POSITIONAL,
    _P.POSITIONAL_OR_KEYWORD: (_P.POSITIONAL_OR_KEYWORD,),
    _P.KEYWORD_ONLY: (_P.POSITIONAL_OR_KEYWORD, _P.KEYWORD_ONLY),
}
_SELF_PRIVATE = re.compile(r"\bself\.(_[A-Za-z]\w*)")
_UNRESOLVED: Any = object()
type _Def = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, order=True)
class Problem:
    """One finding, located in the integration's source."""

    file: Path
    line: int
    kind: str
    message: str

    def __str__(self) -> str:
        """``file:line: kind: message``, as compilers print them."""
        return f"{self.file}:{self.line}: {self.kind}: {self.message}"


@dataclass
class _Module:
    """One parsed file and what its names are bound to."""

    path: Path
    key: tuple[str, ...]  # its module path in the scanned package; () for __init__
    package: tuple[str, ...]  # the package it is in, for relative imports
    tree: ast.Module
    ha: dict[str, Any] = field(default_factory=dict)  # local name -> HA object
    # local name -> (module, class name) of a relative import, for own base classes
    own: dict[str, tuple[tuple[str, ...], str]] = field(default_factory=dict)


def scan(package_dir: Path) -> list[Problem]:
    """Every missing name, changed override and private-member use, sorted."""
    modules = [_parse(path, package_dir) for path in sorted(package_dir.rglob("*.py"))]
    problems = [p for m in modules for p in _check_names(m)]
    classes = {
        (m.key, node.name): (m, node)
        for m in modules
        for node in m.tree.body
        if isinstance(node, ast.ClassDef)
    }
    for module, cls in classes.values():
        if bases := _ha_bases(module, cls, classes):
            problems += _check_overrides(module, cls, bases)
            if module.path != package_dir / COMPAT_MODULE:
                problems += _check_private(module, cls, bases)
    return sorted(set(problems))


def _parse(path: Path, package_dir: Path) -> _Module:
    key = path.relative_to(package_dir).with_suffix("").parts
    key = key[:-1] if key[-1] == "__init__" else key
    package = path.parent.relative_to(package_dir).parts
    return _Module(path, key, package, ast.parse(path.read_text(), str(path)))


# -- names ---------------------------------------------------------------------


def _check_names(module: _Module) -> Iterator[Problem]:
    """Imports first (they bind the names), then attributes read through them."""
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for name in _bind(module, node):
                yield Problem(module.path, node.lineno, MISSING, name)
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            owner = _resolve(module, node.value)
            if _is_namespace(owner) and not hasattr(owner, node.attr):
                name = f"{_qualname(owner)}.{node.attr}"
                yield Problem(module.path, node.lineno, MISSING, name)


def _bind(module: _Module, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    """Bind the names an import makes; yield the HA names that do not exist."""
    if isinstance(node, ast.ImportFrom) and node.level:  # from the integration
        origin = module.package[: len(module.package) - node.level + 1]
        origin += tuple(node.module.split(".")) if node.module else ()
        module.own.update({a.asname or a.name: (origin, a.name) for a in node.names})
    elif isinstance(node, ast.Import):
        for alias in (a for a in node.names if _is_ha(a.name)):
            if (found := _import(alias.name)) is None:
                yield alias.name
            elif alias.asname:
                module.ha[alias.asname] = found
            else:  # import homeassistant.x binds homeassistant
                module.ha["homeassistant"] = sys.modules["homeassistant"]
    elif _is_ha(module_name := node.module or ""):
        if (source := _import(module_name)) is None:
            yield module_name
            return
        for alias in (a for a in node.names if a.name != "*"):
            found = getattr(source, alias.name, _UNRESOLVED)
            if found is _UNRESOLVED:  # a submodule its package has not imported
                found = _import(f"{module_name}.{alias.name}") or _UNRESOLVED
            if found is _UNRESOLVED:
                yield f"{module_name}.{alias.name}"
            else:
                module.ha[alias.asname or alias.name] = found


def _resolve(module: _Module, expr: ast.expr) -> Any:
    """The HA object a ``name`` or ``name.attr.attr`` stands for, if any."""
    if isinstance(expr, ast.Name):
        return module.ha.get(expr.id, _UNRESOLVED)
    owner = _resolve(module, expr.value) if isinstance(expr, ast.Attribute) else None
    return (
        getattr(owner, expr.attr, _UNRESOLVED) if _is_namespace(owner) else _UNRESOLVED
    )


def _import(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _is_ha(name: str) -> bool:
    return name.partition(".")[0] == "homeassistant"


def _is_namespace(obj: Any) -> bool:
    """Modules and classes: where a missing attribute is certainly an error."""
    return inspect.ismodule(obj) or isinstance(obj, type)


def _qualname(obj: Any) -> str:
    if inspect.ismodule(obj):
        return obj.__name__
    return f"{obj.__module__}.{obj.__qualname__}"


# -- overrides -----------------------------------------------------------------


def _ha_bases(module: _Module, cls: ast.ClassDef, classes: dict) -> list[type]:
    """HA classes among the bases, also through the integration's own bases."""
    found: list[type] = []
    for expr in cls.bases:
        if isinstance(base := _resolve(module, expr), type):
            found.append(base)
        elif isinstance(expr, ast.Name):
            own = module.own.get(expr.id, (module.key, expr.id))
            found += _ha_bases(*classes[own], classes) if own in classes else []
    return list(dict.fromkeys(found))


def _lookup(bases: list[type], name: str) -> tuple[type, Any] | None:
    """The most derived HA class defining ``name`` (the one Python would use)."""
    definers = [(k, vars(k)[name]) for b in bases for k in b.__mro__ if name in vars(k)]
    return max(definers, key=lambda d: len(d[0].__mro__), default=None)


def _check_overrides(
    module: _Module, cls: ast.ClassDef, bases: list
) -> Iterator[Problem]:
    for stmt in cls.body:
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        kind, found = _def_kind(stmt), _lookup(bases, stmt.name)
        if kind and found and not stmt.name.startswith("__"):  # __init__ may differ
            name = f"{cls.name}.{stmt.name} overrides {_qualname(found[0])}"
            for change in _changes(stmt, kind, found[1]):
                message = f"{name}.{stmt.name}: {change}"
                yield Problem(module.path, stmt.lineno, SIGNATURE, message)


def _changes(stmt: _Def, kind: str, member: Any) -> Iterator[str]:
    """How an override differs from the HA member in a way callers would notice."""
    base_kind = _member_kind(member)
    if base_kind is None:  # a plain class attribute: any descriptor may replace it
        return
    if kind != base_kind:
        yield f"a {kind} here, a {base_kind} in Home Assistant"
        return
    if kind == "property":
        return
    func = getattr(member, "__func__", member)  # unwrap staticmethod / classmethod
    is_async = inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func)
    if is_async != isinstance(stmt, ast.AsyncFunctionDef):
        yield f"{'async' if is_async else 'sync'} in Home Assistant, not here"
    try:  # FORWARDREF: HA annotates with names it imports for type checking only
        signature = inspect.signature(func, annotation_format=Format.FORWARDREF)
    except (TypeError, ValueError):  # nothing to compare with
        return
    base, ours = list(signature.parameters.values()), _ast_params(stmt.args)
    skip = 0 if kind == "staticmethod" else 1  # self / cls may be named anything
    yield from _parameter_changes(base[skip:], ours[skip:])


def _parameter_changes(base: list[_P], ours: list[_P]) -> Iterator[str]:
    mine = {p.name: p for p in ours}
    variadic = {p.kind for p in ours if p.kind in _VARIADIC}
    for p in base:
        if p.kind in _VARIADIC and p.kind not in variadic:
            yield f"lacks {'*' if p.kind is _P.VAR_POSITIONAL else '**'}{p.name}"
        elif p.kind not in _VARIADIC and p.name not in mine and not variadic:
            yield f"lacks parameter {p.name!r}"
        elif p.name in mine and mine[p.name].kind not in _BINDS.get(p.kind, _VARIADIC):
            here = mine[p.name].kind.description
            yield f"parameter {p.name!r} is {here} here, {p.kind.description} in Home Assistant"
    base_order = [p.name for p in base if p.kind in _POSITIONAL]
    our_order = [p.name for p in ours if p.kind in _POSITIONAL]
    if set(base_order) <= set(our_order) and our_order[: len(base_order)] != base_order:
        yield f"positional parameters {our_order} here, {base_order} in Home Assistant"
    names = {p.name for p in base}
    for p in ours:
        if p.kind not in _VARIADIC and p.default is _P.empty and p.name not in names:
            yield f"adds required parameter {p.name!r}"


def _ast_params(args: ast.arguments) -> list[_P]:
    """The parameters of a ``def`` as ``inspect`` would list them (defaults: ...)."""
    positional = [(a, _P.POSITIONAL_ONLY) for a in args.posonlyargs]
    positional += [(a, _P.POSITIONAL_OR_KEYWORD) for a in args.args]
    first_default = len(positional) - len(args.defaults)
    params = [
        _P(a.arg, kind, default=... if i >= first_default else _P.empty)
        for i, (a, kind) in enumerate(positional)
    ]
    params += [_P(args.vararg.arg, _P.VAR_POSITIONAL)] if args.vararg else []
    params += [
        _P(a.arg, _P.KEYWORD_ONLY, default=_P.empty if d is None else ...)
        for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
    ]
    return params + ([_P(args.kwarg.arg, _P.VAR_KEYWORD)] if args.kwarg else [])


def _def_kind(stmt: _Def) -> str | None:
    """property, staticmethod, classmethod or method; None for a setter/deleter."""
    decorators = (getattr(d, "func", d) for d in stmt.decorator_list)  # @x(..): x
    names = {getattr(d, "attr", getattr(d, "id", "")) for d in decorators}
    if names & {"setter", "deleter"}:
        return None
    if names & {"property", "cached_property", "under_cached_property"}:
        return "property"
    return next((k for k in ("staticmethod", "classmethod") if k in names), "method")


def _member_kind(member: Any) -> str | None:
    if isinstance(member, staticmethod | classmethod):
        return type(member).__name__
    if inspect.isfunction(member):
        return "method"
    if not callable(member) and hasattr(type(member), "__get__"):
        return "property"  # property, functools' or propcache's cached_property
    return None


# -- private members -------------------------------------------------------------


def _check_private(
    module: _Module, cls: ast.ClassDef, bases: list
) -> Iterator[Problem]:
    """Private HA members the class defines, or reads, writes or calls on self."""
    for name, node in _private_names(cls):
        owner = next((b for b in bases if name in _private_members(b)), None)
        if owner and not name.startswith("_attr_") and name not in PROTECTED_API:
            message = f"{cls.name} uses {name}, private to {_qualname(owner)}"
            yield Problem(module.path, node.lineno, PRIVATE, message)


def _private_names(cls: ast.ClassDef) -> Iterator[tuple[str, ast.stmt | ast.expr]]:
    """Names the class body defines, and ``self._x`` / ``super()._x`` anywhere in it."""
    for stmt in cls.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield stmt.name, stmt
        for target in getattr(stmt, "targets", [getattr(stmt, "target", None)]):
            if isinstance(target, ast.Name):
                yield target.id, stmt
    for node in ast.walk(cls):
        if isinstance(node, ast.Attribute) and _is_self(node.value):
            yield node.attr, node


def _is_self(expr: ast.expr) -> bool:
    """``self`` or ``super()``: the instance whose HA base owns the member."""
    if isinstance(expr, ast.Call):
        return isinstance(expr.func, ast.Name) and expr.func.id == "super"
    return isinstance(expr, ast.Name) and expr.id == "self"


@functools.cache
def _private_members(klass: type) -> frozenset[str]:
    """Private names on the class, or set on ``self`` anywhere in its MRO's source."""
    names = set(dir(klass))
    for k in klass.__mro__:
        try:
            names.update(_SELF_PRIVATE.findall(inspect.getsource(k)))
        except (OSError, TypeError):  # built in, or no source shipped
            continue
    return frozenset(n for n in names if n.startswith("_") and n[:2] != "__")


def main(argv: list[str]) -> int:
    """Print the problems (and the installed HA's version); 1 when there are any."""
    from homeassistant.const import __version__

    default = PACKAGE_DIR.relative_to(Path.cwd(), walk_up=True)  # shorter paths
    problems = scan(Path(argv[1]) if len(argv) > 1 else default)
    sys.stdout.write(f"Home Assistant {__version__}: {len(problems)} problem(s)\n")
    sys.stdout.writelines(f"{problem}\n" for problem in problems)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
