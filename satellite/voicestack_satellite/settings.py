"""Command line and config file: every option can come from either.

A config file (``--config FILE``, TOML) holds the same option names with dashes or
underscores (``wake-word = ["hey_jarvis"]``); the command line wins over the file.
"""

from __future__ import annotations

import os
from pathlib import Path
import resource
import shlex
import stat
import tomllib

from . import compat
from .cli import build_parser
from .latency import sound_command_latency_s
from .settings_error import SettingsError
from .settings_model import Settings

MAX_PAYLOAD_LIMIT = 64 * 1024 * 1024
# Files the satellite opens besides its connections (mic, sound and event
# commands, zeroconf, the listening socket: 16 measured with all of them).
FILES_RESERVED = 64
MAX_SOCKET_PATH = 107  # bytes in a Unix socket address, without its final NUL


_COMMANDS = ("mic_command", "snd_command", "event_command")
_PATHS = (
    "mic_file",
    "snd_file",
    "awake_sound",
    "done_sound",
    "timer_sound",
    "announce_socket",
)


def load(argv: list[str] | None = None) -> Settings:
    """Merge config file and command line into checked ``Settings``."""
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    values: dict[str, object] = {}
    if (config := args.pop("config")) is not None:
        values.update(_read_config(config))
    values.update({k: v for k, v in args.items() if v is not None})
    return _settings_from(compat.translate(values))


def _read_config(path: Path) -> dict[str, object]:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise SettingsError(f"cannot read config file {path}: {err.strerror}") from err
    except tomllib.TOMLDecodeError as err:
        raise SettingsError(f"config file {path} is not valid TOML: {err}") from err
    aliases = {
        "id": "satellite_id",
        "wake_word": "wake_words",
        "preroll": "preroll_s",
        "wake_preroll": "wake_preroll_s",
        "max_request": "max_request_s",
        "no_speech_timeout": "no_speech_s",
        "owner_timeout": "owner_timeout_s",
        "idle_timeout": "idle_timeout_s",
        "write_timeout": "write_timeout_s",
        "snd_latency": "snd_latency_s",
        "echo_tail": "echo_tail_s",
    }
    out: dict[str, object] = {}
    for key, value in raw.items():
        name = key.replace("-", "_")
        out[aliases.get(name, name)] = value
    return out


def _settings_from(values: dict[str, object]) -> Settings:
    known = set(Settings.__slots__) | {"uri"}
    if unknown := sorted(set(values) - known):
        raise SettingsError(f"unknown option(s): {', '.join(unknown)}")
    if not values.get("name"):
        raise SettingsError("--name is required (the name Home Assistant shows)")
    if (uri := values.pop("uri", None)) is not None:
        values["host"], values["port"] = compat.parse_tcp_uri(str(uri), "uri")
    for key in _COMMANDS:
        if isinstance(command := values.get(key), str):
            values[key] = shlex.split(command)
            if not values[key]:
                raise SettingsError(f"--{key.replace('_', '-')} is empty")
    for key in _PATHS:
        if isinstance(path := values.get(key), str):
            values[key] = Path(path)
    if isinstance(words := values.get("wake_words"), str):
        values["wake_words"] = [words]
    try:
        settings = Settings(**values)  # type: ignore[arg-type]
    except TypeError as err:
        raise SettingsError(str(err)) from err
    _check(settings)
    if settings.snd_latency_s is None:
        try:
            settings.snd_latency_s = sound_command_latency_s(settings.snd_command)
        except ValueError as err:
            raise SettingsError(
                f"--snd-command: {err}; fix it or set --snd-latency"
            ) from err
    return settings


def _check(settings: Settings) -> None:
    sources = [settings.mic_command, settings.mic_file, settings.mic_stdin]
    if sum(bool(s) for s in sources) != 1:
        raise SettingsError(
            "choose exactly one of --mic-command, --mic-file, --mic-stdin"
        )
    if settings.snd_command is None and settings.snd_file is None:
        raise SettingsError("choose one of --snd-command, --snd-file")
    for key in ("mic_file", "awake_sound", "done_sound", "timer_sound"):
        path = getattr(settings, key)
        if path is not None and not path.is_file():
            raise SettingsError(f"--{key.replace('_', '-')} {path} does not exist")
    if not 0.0 < settings.wake_threshold < 1.0:
        raise SettingsError("--wake-threshold must be between 0 and 1")
    if not 0.0 < settings.vad_threshold < 1.0:
        raise SettingsError("--vad-threshold must be between 0 and 1")
    if settings.wake_trigger_level < 1:
        raise SettingsError("--wake-trigger-level must be at least 1")
    if not 0.0 <= settings.preroll_s <= 10.0:
        raise SettingsError("--preroll must be between 0 and 10 seconds")
    if not 0.0 <= settings.wake_preroll_s <= settings.preroll_s:
        raise SettingsError("--wake-preroll must be between 0 and --preroll")
    if not 1 <= settings.port <= 65535:
        raise SettingsError(f"port {settings.port} is not in 1..65535")
    if settings.snd_rate not in (8000, 16000, 22050, 24000, 44100, 48000):
        raise SettingsError(f"--snd-rate {settings.snd_rate} is not a common rate")
    if not 1024 <= settings.max_payload_bytes <= MAX_PAYLOAD_LIMIT:
        raise SettingsError("--max-payload must be between 1024 bytes and 64 MiB")
    _check_connections(settings)
    if settings.announce_socket is not None:
        _check_announce_socket(settings.announce_socket)
    if not 1.0 <= settings.owner_timeout_s <= 3600.0:
        raise SettingsError("--owner-timeout must be between 1 and 3600 seconds")
    if not 1.0 <= settings.max_request_s <= 300.0:
        raise SettingsError("--max-request must be between 1 and 300 seconds")
    if not (settings.no_speech_s == 0 or 1.0 <= settings.no_speech_s <= 60.0):
        raise SettingsError("--no-speech-timeout must be 0 (off) or 1 to 60 seconds")
    if not 0 <= settings.timer_repeat <= 100:
        raise SettingsError("--timer-repeat must be between 0 and 100")
    if settings.snd_latency_s is not None and not 0.0 <= settings.snd_latency_s <= 2.0:
        raise SettingsError("--snd-latency must be between 0 and 2 seconds")
    if not 0.0 <= settings.echo_tail_s <= 3.0:
        raise SettingsError("--echo-tail must be between 0 and 3 seconds")
    if not settings.wake_words:
        raise SettingsError("at least one --wake-word is needed")
    if settings.echo_cancel not in (None, "aec", "gate", "external"):
        raise SettingsError("--echo-cancel must be aec, gate or external")
    if not 0 <= settings.noise_suppression <= 4:
        raise SettingsError("--noise-suppression must be between 0 and 4")
    if not 0 <= settings.auto_gain <= 31:
        raise SettingsError("--auto-gain must be between 0 and 31 (dBFS)")
    compat.check(settings)


def _check_connections(settings: Settings) -> None:
    """The connection limits, and whether the process may open that many files."""
    if not 2 <= settings.max_connections <= 256:
        # Two at least: the owner, and Home Assistant's describe beside it.
        raise SettingsError("--max-connections must be between 2 and 256")
    if not 1.0 <= settings.idle_timeout_s <= 3600.0:
        raise SettingsError("--idle-timeout must be between 1 and 3600 seconds")
    if not 0.5 <= settings.write_timeout_s <= 60.0:
        raise SettingsError("--write-timeout must be between 0.5 and 60 seconds")
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = settings.max_connections + FILES_RESERVED
    if soft != resource.RLIM_INFINITY and needed > soft:
        raise SettingsError(
            f"--max-connections {settings.max_connections} needs {needed} open "
            f"files, but the limit is {soft} (ulimit -n; systemd: LimitNOFILE=)"
        )


def _check_announce_socket(path: Path) -> None:
    """Its folder exists; the path is free or a socket (a stale one is replaced)."""
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise SettingsError(
            f"--announce-socket {path} is too long for a Unix socket "
            f"(at most {MAX_SOCKET_PATH} bytes)"
        )
    if not path.parent.is_dir():
        raise SettingsError(f"--announce-socket: folder {path.parent} does not exist")
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(mode):
        raise SettingsError(
            f"--announce-socket {path} exists and is not a socket; "
            "refusing to replace it"
        )
