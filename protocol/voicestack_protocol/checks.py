"""What every parser checks a value against; each raises or answers, never logs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import math
from typing import Any, TypeGuard

from wyoming.event import Event

from .names import EMBEDDING_SIZE


def event_data(event: Event, expected: str) -> Mapping[str, Any]:
    """``event``'s data (empty if none); ValueError if it is not an ``expected``."""
    if event.type != expected:
        raise ValueError(f"expected {expected}, got {event.type}")
    return event.data or {}


def is_int(value: object) -> TypeGuard[int]:
    """An int that is not a bool (JSON ``true`` is no sample count)."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[float]:
    """An int that is not a bool, or a float."""
    return is_int(value) or isinstance(value, float)


def is_id(value: object, longest: int) -> TypeGuard[str]:
    """A printable string of 1 to ``longest`` characters: safe to log and echo."""
    return isinstance(value, str) and 0 < len(value) <= longest and value.isprintable()


def is_name(value: object, longest: int) -> TypeGuard[str]:
    """An id that is not only blanks."""
    return is_id(value, longest) and bool(value.strip())


def check_embedding(value: object, what: str) -> tuple[float, ...]:
    """``EMBEDDING_SIZE`` finite numbers, as floats; ValueError otherwise."""
    if (
        not isinstance(value, Sequence)
        or isinstance(value, str)
        or len(value) != EMBEDDING_SIZE
    ):
        raise ValueError(f"{what}: not a list of {EMBEDDING_SIZE} numbers")
    if not all(is_number(item) and math.isfinite(item) for item in value):
        raise ValueError(f"{what}: holds something that is not a finite number")
    return tuple(float(item) for item in value)
