"""Command line and config file: every option can come from either.

A config file (``--config FILE``, TOML) holds the same option names with dashes or
underscores (``wake-word = ["hey_jarvis"]``); the command line wins over the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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

MAX_PAYLOAD_LIMIT = 64 * 1024 * 1024
# Files the satellite opens besides its connections (mic, sound and event
# commands, zeroconf, the listening socket: 16 measured with all of them).
FILES_RESERVED = 64
MAX_SOCKET_PATH = 107  # bytes in a Unix socket address, without its final NUL


@dataclass(slots=True)
class Settings:
    """Everything the satellite is configured with."""

    name: str
    area: str | None = None
    satellite_id: str | None = None  # stable id for Home Assistant; default: MAC-port
    host: str = "0.0.0.0"  # noqa: S104 - a satellite listens for Home Assistant
    port: int = 10700
    mic_command: list[str] | None = None
    mic_file: Path | None = None
    mic_stdin: bool = False
    mic_volume: float = 1.0
    # What --mic-command/--mic-stdin print, converted to 16 kHz mono 16-bit here;
    # mic_channel picks one channel (None: their average).
    mic_rate: int = 16000
    mic_width: int = 2
    mic_channels: int = 1
    mic_channel: int | None = None
    snd_command: list[str] | None = None
    snd_file: Path | None = None
    snd_rate: int = 22050
    snd_volume: float = 1.0
    snd_width: int = 2  # what --snd-command reads, converted from 16-bit mono
    snd_channels: int = 1
    # Seconds the sound command holds audio before the speaker; None: derived
    # from the command (latency.py), 0 for --snd-file.
    snd_latency_s: float | None = None
    wake_words: list[str] = field(default_factory=lambda: ["hey_jarvis"])
    wake_uri: str | None = None  # a Wyoming wake word service instead of ours
    wake_word_names: list[str] | None = None  # for wake_uri (default: wake_words)
    wake_threshold: float = 0.5
    wake_trigger_level: int = 1
    wake_refractory_s: float = 2.0
    vad_threshold: float = 0.5
    # After playback the mic still hears the reply (room, device and mic
    # buffers): speech that starts this soon after the last sample is ignored.
    echo_tail_s: float = 0.3
    # Barge-in's echo handling (echo_path.py); None: aec if installed, else gate.
    echo_cancel: str | None = None
    noise_suppression: int = 0  # speex, 0-4 (enhance.py)
    auto_gain: int = 0  # speex, 0-31 dBFS
    preroll_s: float = 1.0
    # After a wake word only the words after it matter: a short preroll keeps the
    # wake word itself out of the request (stock peers send it to STT as is).
    wake_preroll_s: float = 0.3
    stop_on_wake: bool = True
    max_request_s: float = 15.0  # safety net if the peer never ends the request
    # After a wake word nobody spoke this long: a false wake, dropped (0: off).
    no_speech_s: float = 5.0
    owner_timeout_s: float = 30.0  # a silent owner loses the satellite to a new one
    awake_sound: Path | None = None  # None: the shipped chime
    done_sound: Path | None = None
    feedback_sounds: bool = True  # awake and done chimes
    mute_during_awake: bool = True
    timer_sound: Path | None = None
    timer_repeat: int = 5
    event_command: list[str] | None = None
    event_hooks: dict[str, list[str]] = field(default_factory=dict)  # compat.HOOKS
    event_uri: str | None = None  # a Wyoming service sent the satellite's events
    max_payload_bytes: int = 4 * 1024 * 1024  # others: min(this, NON_OWNER_MAX_PAYLOAD)
    # The network cannot exhaust a Pi (docs/satellite.md, "Limits"): connections
    # at once, seconds a non-owner may stay silent, seconds one write may take.
    max_connections: int = 8
    idle_timeout_s: float = 10.0
    write_timeout_s: float = 5.0
    zeroconf: bool = True
    announce_socket: Path | None = None  # JSON lines from local scripts to announce
    debug: bool = False


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
