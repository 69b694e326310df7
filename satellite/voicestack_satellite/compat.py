"""wyoming-satellite's command line, understood: a user switching keeps theirs.

Every option of rhasspy's wyoming-satellite is known here and falls in one of
four kinds (docs/satellite.md, "Coming from wyoming-satellite", has the table):

- the same option under our name (``--mic-volume-multiplier`` is ``--mic-volume``);
- an option VoiceStack has under their name (``--wake-uri``, ``--event-uri``, the
  mic and sound format flags, the per-event ``--*-command`` hooks);
- accepted and ignored with a warning, where nothing changes for the user
  (``--mic-command-samples-per-chunk``: we read 80 ms chunks whatever it says);
- refused with the reason, where ignoring it would change what the satellite
  does (``--mic-uri``: we would listen to a different microphone).

The same names work in the config file, so translation runs on the merged values.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from .settings_error import SettingsError

if TYPE_CHECKING:
    from .settings_model import Settings

# Their name -> ours, same meaning (ours listed by ``voicestack-satellite --help``),
# and the type of the value.
ALIASES: dict[str, tuple[str, type]] = {
    "mic_volume_multiplier": ("mic_volume", float),
    "mic_noise_suppression": ("noise_suppression", int),
    "mic_auto_gain": ("auto_gain", int),
    "snd_command_rate": ("snd_rate", int),
    "snd_volume_multiplier": ("snd_volume", float),
    "wake_refractory_seconds": ("wake_refractory_s", float),
    "awake_wav": ("awake_sound", str),
    "done_wav": ("done_sound", str),
    "timer_finished_wav": ("timer_sound", str),
}

# Options VoiceStack has under wyoming-satellite's names -> the setting.
FORMATS = {
    "mic_command_rate": "mic_rate",
    "mic_command_width": "mic_width",
    "mic_command_channels": "mic_channels",
    "mic_channel_index": "mic_channel",
    "snd_command_width": "snd_width",
    "snd_command_channels": "snd_channels",
}

# Per-event hooks: --NAME-command runs once per event (event_hooks.py).
HOOKS = (
    "startup",
    "detect",
    "detection",
    "transcript",
    "stt_start",
    "stt_stop",
    "synthesize",
    "tts_start",
    "tts_stop",
    "tts_played",
    "streaming_start",
    "streaming_stop",
    "error",
    "connected",
    "disconnected",
    "timer_started",
    "timer_updated",
    "timer_cancelled",
    "timer_finished",
)

# Accepted, not used: why nothing is lost.
IGNORED = {
    "mic_command_samples_per_chunk": "the mic is read in 80 ms chunks",
    "mic_seconds_to_mute_after_awake_wav": "the request is muted until the awake "
    "sound has played and one chunk more",
    "wake_command_rate": "only used with --wake-command",
    "wake_command_width": "only used with --wake-command",
    "wake_command_channels": "only used with --wake-command",
    "vad_trigger_level": "only used with --vad",
    "vad_buffer_seconds": "only used with --vad",
    "vad_wake_word_timeout": "only used with --vad",
    "zeroconf_name": "the satellite is announced under --name",
    "zeroconf_host": "the announcement carries the addresses of every interface",
    "debug_recording_dir": "Home Assistant's VoiceStack records requests "
    "(its 'Record requests' switch)",
    "log_format": "logs go to the journal with time, level and module",
}

# Refused: what to do instead.
REFUSED = {
    "mic_uri": "a Wyoming microphone service is not supported; use --mic-command",
    "snd_uri": "a Wyoming sound service is not supported; use --snd-command",
    "wake_command": "a wake word program is not supported; use --wake-uri with a "
    "Wyoming wake word service, or the built-in --wake-word",
    "vad": "streaming on speech without a wake word is not supported; Home "
    "Assistant's VoiceStack can listen without one (its listen action)",
}

# Config file keys -> the name their option's ``dest`` gives on the command line.
_FILE_SPELLINGS = {
    "wake_word_name": "wake_word_names",
    "timer_canceled_command": "timer_cancelled_command",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """wyoming-satellite's options, under their names, in a group of their own."""
    group = parser.add_argument_group(
        "wyoming-satellite's options (docs/satellite.md, 'Coming from "
        "wyoming-satellite')"
    )
    add = group.add_argument
    add(
        "--wake-uri",
        help="Wyoming wake word service, tcp://HOST:PORT, instead of "
        "the built-in openWakeWord: the mic is streamed to it",
    )
    add(
        "--wake-word-name",
        action="append",
        nargs="+",
        dest="wake_word_names",
        metavar=("NAME", "PIPELINE"),
        help="a wake word for --wake-uri to detect; "
        "repeat for several (default: hey_jarvis)",
    )
    add(
        "--event-uri",
        help="Wyoming service, tcp://HOST:PORT, sent every event "
        "between Home Assistant and the satellite except audio",
    )
    for name, setting in FORMATS.items():
        add(f"--{_dashed(name)}", type=int, dest=setting, help=_FORMAT_HELP[name])
    for hook in HOOKS:
        add(
            f"--{_dashed(hook)}-command",
            metavar="COMMAND",
            help=f"run once per {hook.replace('_', ' ')} event (stdin as "
            "wyoming-satellite gives it)",
        )
    add(
        "--timer-canceled-command",
        dest="timer_cancelled_command",
        help=argparse.SUPPRESS,
    )
    for name, (ours, kind) in ALIASES.items():
        add(f"--{_dashed(name)}", type=kind, help=f"same as --{_dashed(ours)}")
    add(
        "--mic-no-mute-during-awake-wav",
        action="store_const",
        const=False,
        dest="mute_during_awake",
        help="same as --no-mute-during-awake",
    )
    add(
        "--timer-finished-wav-repeat",
        nargs=2,
        type=float,
        metavar=("REPEAT", "DELAY"),
        help="REPEAT is --timer-repeat; DELAY must be 0",
    )
    for name in (*IGNORED, *REFUSED):
        if name == "vad":
            add("--vad", action="store_true", default=None, help=argparse.SUPPRESS)
        else:
            add(f"--{_dashed(name)}", help=argparse.SUPPRESS)


_FORMAT_HELP = {
    "mic_command_rate": "sample rate of --mic-command/--mic-stdin (default 16000)",
    "mic_command_width": "bytes per sample of the mic: 1, 2 or 4 (default 2)",
    "mic_command_channels": "channels of the mic (default 1); averaged unless "
    "--mic-channel-index picks one",
    "mic_channel_index": "the mic channel to use, from 0",
    "snd_command_width": "bytes per sample --snd-command reads: 1, 2 or 4 (default 2)",
    "snd_command_channels": "channels --snd-command reads (default 1)",
}


def translate(values: dict[str, object]) -> dict[str, object]:
    """Their names -> ours in ``values`` (command line and config file merged)."""
    out = dict(values)
    # The config file's keys where the command line spells them through ``dest``.
    for spelling, name in (*_FILE_SPELLINGS.items(), *FORMATS.items()):
        if spelling in out:
            out[name] = out.pop(spelling)
    for theirs, (ours, _kind) in ALIASES.items():
        if theirs in out:
            if ours in out:
                raise SettingsError(f"give --{_dashed(ours)} or --{_dashed(theirs)}")
            out[ours] = out.pop(theirs)
    for name, reason in REFUSED.items():
        if out.pop(name, None) not in (None, False):
            raise SettingsError(f"--{_dashed(name)}: {reason}")
    for name, reason in IGNORED.items():
        if out.pop(name, None) is not None:
            _warn(f"--{_dashed(name)} is ignored: {reason}")
    if (repeat := out.pop("timer_finished_wav_repeat", None)) is not None:
        if not isinstance(repeat, list | tuple) or len(repeat) != 2:
            raise SettingsError("--timer-finished-wav-repeat takes REPEAT DELAY")
        count, delay = repeat
        if delay:
            raise SettingsError("--timer-finished-wav-repeat: a DELAY is not supported")
        out["timer_repeat"] = int(count)
    hooks = {h: out.pop(f"{h}_command") for h in HOOKS if f"{h}_command" in out}
    if hooks:
        out["event_hooks"] = {h: _command(h, c) for h, c in hooks.items() if c}
    if (names := out.get("wake_word_names")) is not None:
        out["wake_word_names"] = _wake_word_names(names)
    return out


def _wake_word_names(names: object) -> list[str]:
    """``[[name], [name, pipeline], ...]`` (or a list of names from a file)."""
    entries = [[n] if isinstance(n, str) else list(n) for n in names]  # type: ignore[attr-defined]
    if any(not entry or len(entry) > 2 for entry in entries):
        raise SettingsError("--wake-word-name takes a NAME and an optional PIPELINE")
    if any(len(entry) == 2 for entry in entries):
        _warn(
            "--wake-word-name's PIPELINE is ignored: Home Assistant picks the "
            "pipeline (the satellite's 'Assistant' select)"
        )
    return [str(entry[0]) for entry in entries]


def _command(hook: str, command: object) -> list[str]:
    argv = shlex.split(str(command))
    if not argv:
        raise SettingsError(f"--{_dashed(hook)}-command is empty")
    return argv


def _dashed(name: str) -> str:
    return name.replace("_", "-")


def _warn(message: str) -> None:
    print(f"voicestack-satellite: {message}", file=sys.stderr)  # noqa: T201 - before logging


def check(settings: Settings) -> None:
    """The formats, services and hooks are usable (after ``translate``)."""
    if not 8000 <= settings.mic_rate <= 192000:
        raise SettingsError("--mic-command-rate must be between 8000 and 192000")
    for flag, width, channels in (
        ("mic", settings.mic_width, settings.mic_channels),
        ("snd", settings.snd_width, settings.snd_channels),
    ):
        if width not in (1, 2, 4):
            raise SettingsError(f"--{flag}-command-width must be 1, 2 or 4 (bytes)")
        if not 1 <= channels <= 32:
            raise SettingsError(f"--{flag}-command-channels must be between 1 and 32")
    if settings.mic_channel is not None and not (
        0 <= settings.mic_channel < settings.mic_channels
    ):
        raise SettingsError(
            f"--mic-channel-index must be between 0 and {settings.mic_channels - 1}"
        )
    if settings.mic_file is not None and (
        (settings.mic_rate, settings.mic_width, settings.mic_channels) != (16000, 2, 1)
    ):
        raise SettingsError(
            "--mic-file is a WAV with its own format: no --mic-command-*"
        )
    if settings.wake_word_names is not None and settings.wake_uri is None:
        raise SettingsError("--wake-word-name needs --wake-uri")
    for flag, uri in (
        ("wake-uri", settings.wake_uri),
        ("event-uri", settings.event_uri),
    ):
        if uri is not None:
            parse_tcp_uri(uri, flag)


def parse_tcp_uri(uri: str, flag: str) -> tuple[str, int]:
    """``tcp://HOST:PORT`` -> (host, port), else a SettingsError naming ``flag``."""
    parsed = urlparse(uri)
    try:
        port = parsed.port
    except ValueError:
        port = None
    if parsed.scheme != "tcp" or not parsed.hostname or port is None:
        raise SettingsError(f"--{flag} must look like tcp://HOST:PORT, not {uri!r}")
    return parsed.hostname, port
