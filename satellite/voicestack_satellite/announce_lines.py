"""What the local announce socket accepts: one JSON object per line, at a bounded rate.

A line is ``{"message": "...", "priority"?, "category"?, "source"?,
"dedup_key"?, "ttl"?}`` (the fields of ``voicestack.announce`` a script on the Pi
may set; the target is always this satellite). ``parse_line`` checks the shape
and the types and says what is wrong in words a script's author understands;
the values Home Assistant alone knows (categories) are checked there.
``TokenBucket`` bounds how many lines per second the socket takes, on a clock
the tests drive.
"""

from __future__ import annotations

from collections.abc import Callable
import json
import math

import voicestack_protocol as protocol

FIELDS = ("message", *protocol.ANNOUNCE_OPTIONAL)
_TEXT_FIELDS = ("priority", "category", "source", "dedup_key")
EXAMPLE = '{"message": "Someone is at the door"}'


class LineError(ValueError):
    """A line that is no announcement; the message is the answer's ``error``."""


def parse_line(line: bytes) -> dict[str, object]:
    """The line's fields, every one of ``FIELDS`` (``None``: not given).

    Raises ``LineError`` for anything but a JSON object with a non-empty
    ``message`` and optional fields of the right type. ``null`` counts as not
    given.
    """
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise LineError("the line is not UTF-8 text") from None
    if not text.strip():
        raise LineError(f"empty line; send a JSON object such as {EXAMPLE}")
    try:
        data = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        raise LineError(f"not valid JSON: {err.msg} at column {err.colno}") from None
    except ValueError as err:  # NaN, Infinity
        raise LineError(f"not valid JSON: {err}") from None
    if not isinstance(data, dict):
        raise LineError(f"expected a JSON object such as {EXAMPLE}, got {_kind(data)}")
    if unknown := sorted(set(data) - set(FIELDS)):
        raise LineError(
            f"unknown field(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {', '.join(FIELDS)}"
        )
    fields = {key: data.get(key) for key in FIELDS}
    message = fields["message"]
    if message is None:
        raise LineError(f"message is required, e.g. {EXAMPLE}")
    if not isinstance(message, str):
        raise LineError(f"message must be a string, got {_kind(message)}")
    if not message.strip():
        raise LineError("message is empty")
    for key in _TEXT_FIELDS:
        if (value := fields[key]) is not None and not isinstance(value, str):
            raise LineError(f"{key} must be a string, got {_kind(value)}")
    if (priority := fields["priority"]) is not None and (
        priority not in protocol.ANNOUNCE_PRIORITIES
    ):
        raise LineError(
            f"priority must be one of {', '.join(protocol.ANNOUNCE_PRIORITIES)}, "
            f"got {priority!r:.40}"
        )
    if (ttl := fields["ttl"]) is not None and not _positive_seconds(ttl):
        raise LineError(
            f"ttl must be a positive number of seconds, got {json.dumps(ttl):.40}"
        )
    return fields


class TokenBucket:
    """``capacity`` lines at once, then one more every ``period_s / capacity``.

    The satellite's only token bucket. Home Assistant's announcer has its own,
    per source (``core/announce/limits.py``): the satellite is a separate
    install and does not import the integration.
    """

    def __init__(
        self, capacity: int, period_s: float, clock: Callable[[], float]
    ) -> None:
        """Full at first; ``clock`` gives monotonic seconds."""
        self.capacity = capacity
        self.period_s = period_s
        self._per_s = capacity / period_s
        self._clock = clock
        self._tokens = float(capacity)
        self._at = clock()

    def take(self) -> float:
        """Take a token: 0.0, or the seconds until the next one (none taken)."""
        now = self._clock()
        self._tokens = min(
            float(self.capacity), self._tokens + (now - self._at) * self._per_s
        )
        self._at = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / self._per_s


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a number JSON allows")


def _positive_seconds(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(value) and value > 0
    except OverflowError:  # an int too large for a float
        return False


def _kind(value: object) -> str:
    """What a JSON value is, as its author would say it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
