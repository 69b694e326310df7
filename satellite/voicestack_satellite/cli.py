"""The ``voicestack-satellite`` command line: every option, its help and default.

The same names work in a config file (settings.py reads both and checks them).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from . import __version__, compat
from .connections import NON_OWNER_MAX_PAYLOAD
from .peer import MAX_QUEUED_BYTES


def build_parser() -> argparse.ArgumentParser:
    """The ``voicestack-satellite`` command line."""
    parser = argparse.ArgumentParser(
        prog="voicestack-satellite",
        description="A Wyoming voice satellite: wake word, VAD and interruptible "
        "playback in one process. Home Assistant connects to it.",
    )
    add = parser.add_argument
    add("--config", type=Path, help="TOML file with any of these options")
    add("--name", help="satellite name shown in Home Assistant (required)")
    add("--area", help="area (room) the satellite is in")
    add(
        "--id",
        dest="satellite_id",
        help="stable id Home Assistant uses to recognise this satellite "
        "(default: this machine's MAC address and the port)",
    )
    add(
        "--uri",
        help="where to listen, tcp://HOST:PORT (default: tcp://0.0.0.0:10700)",
    )
    mic = parser.add_mutually_exclusive_group()
    mic.add_argument(
        "--mic-command",
        help="command printing raw 16 kHz 16-bit mono PCM, e.g. "
        "'arecord -D plughw:CARD=Device -r 16000 -c 1 -f S16_LE -t raw' "
        "(split like a shell would, never run by a shell)",
    )
    mic.add_argument(
        "--mic-file",
        type=Path,
        help="WAV file (any rate, width, channels) played as the mic in real time "
        "once a peer sends run-satellite, then silence (tests and demos)",
    )
    mic.add_argument(
        "--mic-stdin",
        action="store_true",
        default=None,  # unset: a config file's mic-stdin = true stands
        help="raw 16 kHz 16-bit mono PCM on stdin",
    )
    add("--mic-volume", type=float, help="mic volume multiplier (default 1.0)")
    snd = parser.add_mutually_exclusive_group()
    snd.add_argument(
        "--snd-command",
        help="long-running command reading raw 16-bit mono PCM at --snd-rate, e.g. "
        "'aplay -D plughw:CARD=Device -r 22050 -c 1 -f S16_LE -t raw'",
    )
    snd.add_argument(
        "--snd-file",
        type=Path,
        help="write each played stream to FILE.N.wav, paced like a sound card",
    )
    add("--snd-rate", type=int, help="sample rate of the sound output (default 22050)")
    add("--snd-volume", type=float, help="playback volume multiplier (default 1.0)")
    add(
        "--snd-latency",
        type=float,
        dest="snd_latency_s",
        help="seconds the sound command holds audio before the speaker plays it; "
        "'played' waits for it (default: aplay's start threshold from its "
        "--start-delay/--buffer-time/--buffer-size, else 0.5; 0.1 for other "
        "commands; 0 for --snd-file)",
    )
    add(
        "--wake-word",
        action="append",
        dest="wake_words",
        metavar="NAME_OR_PATH",
        help="openWakeWord model: built-in name (hey_jarvis, okay_nabu, alexa, "
        "hey_mycroft, hey_rhasspy) or a .tflite path; repeat for several "
        "(default: hey_jarvis). NAME:THRESHOLD sets a per-word threshold",
    )
    add("--wake-threshold", type=float, help="detection probability (default 0.5)")
    add(
        "--wake-trigger-level",
        type=int,
        help="consecutive 80 ms windows above threshold to trigger (default 1)",
    )
    add(
        "--wake-refractory",
        type=float,
        dest="wake_refractory_s",
        help="seconds after a detection during which the same word is ignored "
        "(default 2.0)",
    )
    add("--vad-threshold", type=float, help="speech probability (default 0.5)")
    add(
        "--echo-tail",
        type=float,
        dest="echo_tail_s",
        help="seconds after playback ends during which speech that starts is "
        "taken for the reply's own echo and starts no request (default 0.3)",
    )
    add(
        "--echo-cancel",
        choices=("aec", "gate", "external"),
        help="how barge-in keeps the satellite's own voice out of the mic: aec "
        "(WebRTC's echo canceller, package livekit or aec-audio-processing), gate (ignore "
        "the mic while the speaker is loud), external (the mic is already "
        "echo-cancelled, e.g. PipeWire's echo-cancel source); default: aec if "
        "installed, else gate",
    )
    add(
        "--noise-suppression",
        type=int,
        help="speex noise suppression on the mic, 0 (off, default) to 4, as Home "
        "Assistant's own; needs pyspeex-noise",
    )
    add(
        "--auto-gain",
        type=int,
        help="speex automatic gain on the mic, 0 (off, default) to 31 dBFS, as Home "
        "Assistant's own; needs pyspeex-noise",
    )
    add(
        "--preroll",
        type=float,
        dest="preroll_s",
        help="seconds of audio kept before the speech onset and sent with a "
        "request started by voice activity (listen-now), so the first words are "
        "not clipped; also the most --wake-preroll can be (default 1.0)",
    )
    add(
        "--wake-preroll",
        type=float,
        dest="wake_preroll_s",
        help="seconds before the wake word detection sent with the request: "
        "catches words said while the detector decided, without sending the "
        "wake word itself to speech-to-text (default 0.3)",
    )
    add(
        "--max-request",
        type=float,
        dest="max_request_s",
        help="seconds after which a request's audio ends even if the peer never "
        "said the speech ended (default 15)",
    )
    add(
        "--no-speech-timeout",
        type=float,
        dest="no_speech_s",
        help="seconds after a wake word within which speech must start; if none "
        "does (a false wake), the request is dropped without speech-to-text. "
        "Needs a VoiceStack peer; 0: off (default 5)",
    )
    add(
        "--owner-timeout",
        type=float,
        dest="owner_timeout_s",
        help="seconds without a word (Home Assistant pings every few seconds) after "
        "which the connection owning the satellite counts as dead and a new one "
        "may take over (default 30)",
    )
    add(
        "--no-stop-on-wake",
        dest="stop_on_wake",
        action="store_false",
        default=None,
        help="keep playing when the wake word is heard during playback",
    )
    add(
        "--awake-sound",
        type=Path,
        help="WAV played when the wake word is heard (default: a short chime)",
    )
    add(
        "--done-sound",
        type=Path,
        help="WAV played when the request has been heard (default: a short chime)",
    )
    add(
        "--no-sounds",
        dest="feedback_sounds",
        action="store_false",
        default=None,
        help="play neither the awake nor the done sound",
    )
    add(
        "--no-mute-during-awake",
        dest="mute_during_awake",
        action="store_false",
        default=None,
        help="send the mic as is while the awake sound plays (default: silence, "
        "so the request does not contain the chime)",
    )
    add(
        "--timer-sound",
        type=Path,
        help="WAV repeated when a timer finishes (default: three beeps)",
    )
    add(
        "--timer-repeat",
        type=int,
        help="how often the timer sound repeats unless cancelled; 0 for none "
        "(default 5)",
    )
    add(
        "--event-command",
        help="long-running command receiving one JSON line per state change on "
        "stdin (for LEDs and scripts)",
    )
    add(
        "--max-payload",
        type=int,
        dest="max_payload_bytes",
        help="largest event data and payload accepted from the connection that "
        "runs the satellite, in bytes (default 4 MiB, at most 64 MiB); other "
        f"connections may send {NON_OWNER_MAX_PAYLOAD // 1024} KiB",
    )
    add(
        "--max-connections",
        type=int,
        help="connections open at once; at the limit a new one replaces the oldest "
        "that has sent nothing, or is closed (default 8)",
    )
    add(
        "--idle-timeout",
        type=float,
        dest="idle_timeout_s",
        help="seconds a connection that does not run the satellite may go without "
        "sending an event before it is closed (default 10)",
    )
    add(
        "--write-timeout",
        type=float,
        dest="write_timeout_s",
        help="seconds a write to a connection may wait for it to read; then, or "
        f"with more than {MAX_QUEUED_BYTES // 1024} KiB unsent, the connection is "
        "dropped (default 5)",
    )
    add(
        "--announce-socket",
        type=Path,
        metavar="PATH",
        help="Unix socket (mode 0600) taking JSON lines such as "
        '\'{"message": "Someone is at the door"}\' from scripts on this machine '
        "and sending each to Home Assistant's announcer (default: none)",
    )
    add(
        "--no-zeroconf",
        dest="zeroconf",
        action="store_false",
        default=None,
        help="do not announce _wyoming._tcp.local.",
    )
    add("--debug", action="store_true", default=None, help="log debug messages")
    add("--version", action="version", version=__version__)
    compat.add_arguments(parser)
    return parser
