"""No callable slots: a module never plugs a callable into another object's attribute.

``mic.on_error = coordinator.report_error`` or ``self.hub.on_event = self._on_x``
wire objects by late binding: who calls whom is decided by whichever line ran
last, a second assignment silently cuts the first listener off, and the object
that fires the callback cannot tell who owns it. The code passes callables to a
constructor, to a ``subscribe(listener)`` method, or to the call that needs them
instead; this test holds the integration, the satellite and the dev stack to it,
read from the source with ``ast``.

An assignment is reported (``file:line``) when its target is an attribute of an
object other than ``self`` or ``cls`` (``hub.say``, ``self.hub.on_event``) and
its value is a callable expression. Without running the code, "callable" is
decided by these rules:

- a ``lambda``;
- ``functools.partial(...)`` (also as a bare ``partial(...)``);
- an attribute reference (``self._on_x``, ``coordinator.report_error``) whose
  last name starts with ``on_`` or ``_on_`` (callbacks by convention, wherever
  they come from), or is a method: a ``def`` in a class body somewhere in the
  scanned files, properties excepted (they read as data), and no class there
  declares a data field of that name (``end_of_speech_s: float`` in a class
  body, or ``self.end_of_speech_s: float = ...``): a name used both ways is
  taken for data, unless the reference is on ``self``/``cls`` and the module's
  own classes use the name for a method only;
- a bare name of a function the module defines outside a class body (a
  method is reached through its object, so a bare ``options`` is a variable);
- either branch of ``a if c else b`` or any operand of ``a or b``, by these rules.

So plain data stays allowed (``stream.reported = stream.position``,
``self._stats.last_error = err.reason``), and a callable that arrives as a
parameter (``obj.x = callback``) is not seen: the rules are a heuristic that
catches how such wiring is written here, not a proof.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TREES = ("custom_components/voicestack", "satellite/voicestack_satellite", "devstack")
OWN = ("self", "cls")
CALLBACK_PREFIXES = ("on_", "_on_")
PROPERTY_DECORATORS = ("property", "cached_property", "setter", "deleter")

Function = ast.FunctionDef | ast.AsyncFunctionDef


def functions_of(tree: ast.Module) -> set[str]:
    """Functions a bare name reaches in ``tree``: all its ``def``s but methods."""
    methods = {
        id(member)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for member in node.body
    }
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, Function) and id(node) not in methods
    }


def modules(trees: tuple[str, ...] = TREES) -> dict[Path, ast.Module]:
    """Every Python file of ``trees``, once (a symlink to a file also scanned is not)."""
    found: dict[Path, ast.Module] = {}
    seen: set[Path] = set()
    for tree in trees:
        for path in sorted((REPO / tree).rglob("*.py")):
            if path.resolve() not in seen:
                seen.add(path.resolve())
                found[path] = ast.parse(path.read_text(), str(path))
    return found


def _is_property(function: Function) -> bool:
    """``@property``, ``@cached_property``, ``@x.setter`` and the like."""
    for decorator in function.decorator_list:
        name = decorator.attr if isinstance(decorator, ast.Attribute) else None
        if isinstance(decorator, ast.Name):
            name = decorator.id
        if name in PROPERTY_DECORATORS:
            return True
    return False


def _is_own(target: ast.expr) -> bool:
    """``self.x`` or ``cls.x``."""
    return (
        isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id in OWN
    )


def method_names(trees: list[ast.Module]) -> set[str]:
    """Methods of ``trees`` (no properties) that no class declares as data."""
    methods: set[str] = set()
    fields: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, Function) and not _is_property(member):
                        methods.add(member.name)
                    elif isinstance(member, ast.AnnAssign) and isinstance(
                        member.target, ast.Name
                    ):
                        fields.add(member.target.id)
            elif isinstance(node, ast.AnnAssign) and _is_own(node.target):
                assert isinstance(node.target, ast.Attribute)
                fields.add(node.target.attr)
    return methods - fields


def _is_partial(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id == "partial"
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "partial"
        and isinstance(func.value, ast.Name)
        and func.value.id == "functools"
    )


@dataclass(frozen=True, slots=True)
class Known:
    """The names that call something, as one module sees them."""

    methods: set[str]  # in all scanned files (``method_names``)
    own_methods: set[str]  # of this module's classes only
    functions: set[str]  # this module's, reached by a bare name

    @classmethod
    def in_module(cls, tree: ast.Module, methods: set[str]) -> Known:
        """What ``tree`` knows, given the methods of all scanned files."""
        return cls(methods, method_names([tree]), functions_of(tree))

    def is_callable(self, value: ast.expr) -> bool:
        """Whether ``value`` is a callable expression, by the docstring's rules."""
        if isinstance(value, ast.Lambda):
            return True
        if isinstance(value, ast.Call):
            return _is_partial(value)
        if isinstance(value, ast.Attribute):
            return (
                value.attr.startswith(CALLBACK_PREFIXES)
                or value.attr in self.methods
                or (_is_own(value) and value.attr in self.own_methods)
            )
        if isinstance(value, ast.Name):
            return value.id in self.functions
        if isinstance(value, ast.IfExp):
            return self.is_callable(value.body) or self.is_callable(value.orelse)
        if isinstance(value, ast.BoolOp):
            return any(self.is_callable(operand) for operand in value.values)
        return False


def _is_foreign(target: ast.expr) -> bool:
    """An attribute of an object other than ``self``/``cls`` (also in a tuple)."""
    if isinstance(target, ast.Tuple | ast.List):
        return any(_is_foreign(element) for element in target.elts)
    return isinstance(target, ast.Attribute) and not _is_own(target)


def _pairs(target: ast.expr, value: ast.expr) -> Iterator[tuple[ast.expr, ast.expr]]:
    """Each target with its value: ``a.x, b.y = f, g`` pairs ``a.x`` with ``f``."""
    sequences = ast.Tuple | ast.List
    if (
        isinstance(target, sequences)
        and isinstance(value, sequences)
        and len(target.elts) == len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
    ):
        for pair in zip(target.elts, value.elts, strict=True):
            yield from _pairs(*pair)
    else:
        yield target, value


def callable_slots(tree: ast.Module, methods: set[str]) -> Iterator[ast.stmt]:
    """Each assignment in ``tree`` of a callable to a foreign attribute."""
    known = Known.in_module(tree, methods)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        if any(
            _is_foreign(slot) and known.is_callable(assigned)
            for target in targets
            for slot, assigned in _pairs(target, value)
        ):
            yield node


def test_no_module_assigns_a_callable_to_another_objects_attribute() -> None:
    scanned = modules()
    methods = method_names(list(scanned.values()))

    slots = [
        f"{path.relative_to(REPO)}:{node.lineno}: {ast.unparse(node)}"
        for path, tree in scanned.items()
        for node in callable_slots(tree, methods)
    ]

    assert slots == [], "\n".join(slots)


# The scanned module's definitions ...
DEFINITIONS = """\
class Coordinator:
    def report_error(self, message): pass
    def options(self): pass
    @property
    def position(self): return 0
    def end_of_speech_s(self): pass
class Failure:
    def reason(self): pass
def helper(): pass
"""
# ... and another module's: there ``end_of_speech_s`` and ``reason`` are data.
ELSEWHERE = """\
class Hello:
    end_of_speech_s: float
class Error:
    def __init__(self):
        self.reason: str = ""
"""
CAUGHT = [
    "mic.on_error = coordinator.report_error",
    "self.hub.on_event = self._on_event",
    "hub.say = lambda text: None",
    "hub.say = functools.partial(speak, 1)",
    "hub.say = partial(speak, 1)",
    "hub.say = helper",
    "a.b, c.d = (1, lambda: None)",
    "hub.say: object = other.on_anything",
    "hub.say = first.on_x if flag else None",
    "hub.say = given or first.report_error",
    "self.hub.end_of_speech_s = self.end_of_speech_s",
]
ALLOWED = [
    "stream.reported = stream.position",
    "self._stats.last_error = err.reason",
    "peer.end_of_speech_s = hello.end_of_speech_s",
    "self.satellite.conversation_id = result.helper",
    "self._window.options = options",
    "self._on_progress = on_progress",
    "self.callback = lambda: None",
    "cls.factory = helper",
    "hub.count = helper()",
    "hub.say = callback_from_a_parameter",
]


def test_the_rules_tell_wiring_from_data() -> None:
    """Each kind of callable is caught; data and an object's own slots are not."""
    tree = ast.parse(DEFINITIONS + "\n".join(CAUGHT + ALLOWED))
    elsewhere = ast.parse(ELSEWHERE)

    slots = callable_slots(tree, method_names([tree, elsewhere]))

    assert [ast.unparse(node) for node in slots] == CAUGHT
