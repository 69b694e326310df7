"""How long a sound command holds audio before the speaker plays it.

The player paces itself by its own clock and writes one to two 10 ms blocks
ahead of it; ``played`` must wait until the last sample has really left the
speaker. aplay does not start the card until its start threshold is buffered,
and from then on keeps about that much queued, so every sample comes out that
much later than the player's clock says. The threshold follows from aplay's own
options (aplay.c): ``--start-delay`` microseconds when positive, else the
buffer (``--buffer-time`` microseconds, ``--buffer-size`` samples, by default the
card's largest buffer up to 500 ms) plus the (negative or zero) start delay.
"""

from __future__ import annotations

from pathlib import Path

APLAY_DEFAULT_BUFFER_S = 0.5  # aplay caps the card's largest buffer at 500 ms
APLAY_DEFAULT_RATE = 8000  # raw input without -r
# Another player (paplay, pw-play, ...): its buffering is not known here. A
# ``played`` that comes a little late is harmless; one that comes early lets
# the mic hear the end of the reply.
OTHER_COMMAND_S = 0.1

# aplay's short options that take a value (aplay.c: "D:t:c:f:r:d:s:F:A:R:T:B:V:m:").
_SHORT_WITH_VALUE = frozenset("DtcfrdsFARTBVm")
_WANTED = {
    "R": "start-delay",
    "B": "buffer-time",
    "r": "rate",
}


def sound_command_latency_s(argv: list[str] | None) -> float:
    """Seconds ``argv`` holds audio before the speaker; 0 for no command (a file).

    Raises ValueError when an aplay option it needs is not a number.
    """
    if not argv:
        return 0.0
    if Path(argv[0]).name != "aplay":
        return OTHER_COMMAND_S
    options = _aplay_options(argv[1:])
    start_delay_s = _number(options, "start-delay") / 1e6
    if "buffer-time" in options:
        buffer_s = _number(options, "buffer-time") / 1e6
    elif "buffer-size" in options:
        rate = _number(options, "rate") if "rate" in options else APLAY_DEFAULT_RATE
        rate = rate * 1000 if rate < 300 else rate  # aplay reads -r 44 as 44 kHz
        buffer_s = _number(options, "buffer-size") / rate
    else:
        buffer_s = APLAY_DEFAULT_BUFFER_S
    if start_delay_s > 0:
        return min(start_delay_s, buffer_s)
    return max(0.0, buffer_s + start_delay_s)


def _aplay_options(args: list[str]) -> dict[str, str]:
    """The start delay, buffer and rate options of an aplay command line.

    Understands what getopt accepts: ``--name=V``, ``--name V``, ``-XV``,
    ``-X V`` and short flags grouped before one that takes a value (``-qR V``).
    """
    found: dict[str, str] = {}
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            break
        if arg.startswith("--"):
            name, has_value, value = arg[2:].partition("=")
            if name in ("start-delay", "buffer-time", "buffer-size", "rate"):
                found[name] = value if has_value else next(rest, "")
            continue
        if not arg.startswith("-") or arg == "-":
            continue
        for index, letter in enumerate(arg[1:], start=1):
            if letter not in _SHORT_WITH_VALUE:
                continue
            value = arg[index + 1 :] or next(rest, "")
            if letter in _WANTED:
                found[_WANTED[letter]] = value
            break
    return found


def _number(options: dict[str, str], name: str) -> float:
    """An integer option as aplay parses it (strtol base 0: 40000, 0x9c40, -5000)."""
    value = options.get(name, "0")
    try:
        return float(int(value, 0))
    except ValueError:
        raise ValueError(f"aplay --{name} {value!r} is not a whole number") from None
