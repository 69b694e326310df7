"""Command-line entry point: ``voicestack-satellite``."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys
import time

from voicestack_protocol import MAX_HEADER_BYTES

from . import compat
from .announce_socket import AnnounceSocket, AnnounceSocketError
from .audio import AudioFormatError
from .connections import ConnectionLimit
from .discovery import announce_in_background, withdraw
from .echo_cancel import EchoCancelError
from .echo_path import EchoPath, echo_cancel_available
from .enhance import EnhanceError, MicEnhancer
from .event_hooks import EventHooks
from .hooks import EventCommand
from .mic import CommandMic, FileMic, StdinMic
from .mic_format import MicFormat
from .mic_loop import MicLoopError, run_mic_loop
from .peer import Peer
from .player import Player
from .remote_wake import RemoteWake
from .satellite import SatelliteCoordinator
from .settings import load
from .settings_error import SettingsError
from .settings_model import Settings
from .sinks import CommandSink, FileSink, Sink
from .sounds import Sounds
from .wake import Wake, WakeDetector, WakeWordError, WakeWordSpec, parse_spec

SHUTDOWN_S = 2.0  # SIGTERM to exit, at most, whatever the clients do
_LOGGER = logging.getLogger("voicestack_satellite")


def main(argv: list[str] | None = None) -> None:
    """Parse the command line and run until SIGTERM/SIGINT."""
    try:
        settings = load(argv)
        specs = (
            []  # the service's names are its own
            if settings.wake_uri
            else [
                parse_spec(word, settings.wake_threshold)
                for word in settings.wake_words
            ]
        )
        mic = _make_mic(settings)
        sounds = Sounds.load(
            awake=settings.awake_sound,
            done=settings.done_sound,
            timer=settings.timer_sound,
            feedback=settings.feedback_sounds,
        )
        echo, enhancer = _make_mic_processing(settings)
    except (
        SettingsError,
        WakeWordError,
        AudioFormatError,
        EchoCancelError,
        EnhanceError,
    ) as err:
        print(f"voicestack-satellite: error: {err}", file=sys.stderr)  # noqa: T201
        sys.exit(2)
    logging.basicConfig(
        level=logging.DEBUG if settings.debug else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    wake = _make_wake(settings, specs)
    try:
        code = asyncio.run(_run(settings, mic, wake, sounds, (echo, enhancer)))
    except AnnounceSocketError as err:
        _LOGGER.error("%s", err)
        sys.exit(1)
    except OSError as err:
        _LOGGER.error(
            "Cannot listen on %s:%s: %s", settings.host, settings.port, err.strerror
        )
        sys.exit(1)
    finally:
        wake.close()
    sys.exit(code)


def _make_wake(settings: Settings, specs: list[WakeWordSpec]) -> Wake:
    """The in-process openWakeWord, or the ``--wake-uri`` service."""
    refractory = round(settings.wake_refractory_s * 16000)
    if settings.wake_uri is None:
        return WakeDetector(
            specs,
            trigger_level=settings.wake_trigger_level,
            refractory_samples=refractory,
        )
    return RemoteWake(
        compat.parse_tcp_uri(settings.wake_uri, "wake-uri"),
        settings.wake_word_names or settings.wake_words,
        refractory_samples=refractory,
        write_timeout_s=settings.write_timeout_s,
    )


def _make_mic(settings: Settings) -> FileMic | CommandMic | StdinMic:
    if settings.mic_file is not None:
        return FileMic(settings.mic_file, settings.mic_volume)
    fmt = MicFormat(
        settings.mic_rate,
        settings.mic_width,
        settings.mic_channels,
        settings.mic_channel,
    )
    if settings.mic_command is not None:
        return CommandMic(settings.mic_command, settings.mic_volume, fmt)
    return StdinMic(settings.mic_volume, fmt)


def _make_mic_processing(settings: Settings) -> tuple[EchoPath, MicEnhancer | None]:
    """The echo path for barge-in, and speex if asked for (errors: exit 2)."""
    mode = settings.echo_cancel
    if mode is None:
        mode = "aec" if echo_cancel_available() else "gate"
        if mode == "gate":
            print(  # noqa: T201 - before logging is set up
                "voicestack-satellite: no echo canceller is installed (pywebrtc-audio, "
                "livekit or aec-audio-processing): barge-in gates the mic while the "
                "speaker is loud (--echo-cancel gate)",
                file=sys.stderr,
            )
    enhancer = None
    if settings.auto_gain or settings.noise_suppression:
        enhancer = MicEnhancer(settings.auto_gain, settings.noise_suppression)
    return EchoPath(mode, settings.snd_rate), enhancer


def _make_sink(settings: Settings) -> Sink:
    if settings.snd_file is not None:
        return FileSink(settings.snd_file, settings.snd_rate)
    assert settings.snd_command is not None
    return CommandSink(settings.snd_command, settings.snd_width, settings.snd_channels)


async def _run(
    settings: Settings,
    mic: FileMic | CommandMic | StdinMic,
    wake: Wake,
    sounds: Sounds,
    processing: tuple[EchoPath, MicEnhancer | None],
) -> int:
    """Serve until SIGTERM/SIGINT or the mic ends; the exit code."""
    hooks = EventCommand(settings.event_command) if settings.event_command else None
    player = Player(
        _make_sink(settings),
        settings.snd_rate,
        settings.snd_volume,
        latency_s=settings.snd_latency_s or 0.0,  # load() always sets it
    )
    # It subscribes to the player's reports and starts a mic file when run.
    echo, enhancer = processing
    coordinator = SatelliteCoordinator(
        settings,
        wake,
        player,
        sounds=sounds,
        echo=echo,
        hooks=hooks,
        enhancer=enhancer,
        on_run=mic.start,
    )

    connections = ConnectionLimit(settings.max_connections)
    events = _event_hooks(settings, coordinator)

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = Peer(
            reader,
            writer,
            write_timeout_s=settings.write_timeout_s,
            observer=None if events is None else events.observe,
        )
        if not connections.admit(peer):
            return
        try:
            await coordinator.handle_peer(peer)
        finally:
            # Bounded: a peer that does not read is cut after --write-timeout.
            await peer.wait_closed()
            connections.remove(peer)

    server = await asyncio.start_server(
        serve, settings.host, settings.port, limit=MAX_HEADER_BYTES
    )
    announce = None
    if settings.announce_socket is not None:
        announce = AnnounceSocket(
            settings.announce_socket,
            coordinator.session.forward_announcement,
            clock=time.monotonic,
            write_timeout_s=settings.write_timeout_s,
        )
        await announce.start()  # after the port: a failure leaves no file
    _LOGGER.info(
        "Satellite %r listening on tcp://%s:%s, wake words %s; barge-in echo "
        "handling: %s; voice gate: %s",
        settings.name,
        settings.host,
        settings.port,
        wake.active,
        echo.mode if echo.backend is None else f"{echo.mode} ({echo.backend})",
        "installed" if coordinator.gate.available else "not installed",
    )
    announcing = (
        announce_in_background(settings.name, settings.host, settings.port)
        if settings.zeroconf
        else None
    )
    player.start()
    if isinstance(wake, RemoteWake):
        wake.start()
    if events is not None:
        events.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    report_error = coordinator.report_error  # the mic's failures and the loop's
    mic_task = asyncio.create_task(
        run_mic_loop(mic.chunks(report_error), coordinator.process_mic, report_error),
        name="mic",
    )
    stop_task = asyncio.create_task(stop.wait())
    await asyncio.wait({mic_task, stop_task}, return_when=asyncio.FIRST_COMPLETED)
    code = 0
    if mic_task.done() and isinstance(failure := mic_task.exception(), MicLoopError):
        _LOGGER.error("%s; exiting so that the service restarts it", failure)
        code = 1
    _LOGGER.info("Stopping")
    for task in (mic_task, stop_task):
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError, MicLoopError):
            await task
    server.close()
    if announce is not None:
        await announce.close()
    # Whatever the clients do (idle, not reading), the process ends now: every
    # connection is cut at once, and waiting for the rest is bounded.
    connections.abort_all()
    try:
        async with asyncio.timeout(SHUTDOWN_S):
            await coordinator.close()
            await server.wait_closed()
    except TimeoutError:
        _LOGGER.warning("Connections still closing after %.0f s; exiting", SHUTDOWN_S)
    await player.close()
    if hooks is not None:
        await hooks.close()
    if events is not None:
        await events.close()
    if isinstance(wake, RemoteWake):
        await wake.aclose()
    if announcing is not None:
        await withdraw(announcing)
    return code


def _event_hooks(
    settings: Settings, coordinator: SatelliteCoordinator
) -> EventHooks | None:
    """wyoming-satellite's per-event commands and ``--event-uri``, if any is set."""
    if not settings.event_hooks and settings.event_uri is None:
        return None
    return EventHooks(
        settings.event_hooks,
        None
        if settings.event_uri is None
        else compat.parse_tcp_uri(settings.event_uri, "event-uri"),
        lambda: coordinator.session.owner,
        write_timeout_s=settings.write_timeout_s,
    )


if __name__ == "__main__":
    main()
