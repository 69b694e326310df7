"""The satellite's settings, as ``settings.load`` makes them from the command line and file.

On its own so that what only reads them (``compat.check``, the satellite's parts)
needs nothing of how they are parsed: the parser imports ``compat`` for
wyoming-satellite's flags.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


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
