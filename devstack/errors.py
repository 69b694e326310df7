"""The one error a stack step raises."""

from __future__ import annotations


class StackError(Exception):
    """A step of the stack failed; the message says which and what to look at."""
