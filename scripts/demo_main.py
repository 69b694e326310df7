"""scripts/demo: one spoken command through the whole stack, as a timeline.

Piper speaks "Hey Jarvis." and, after the pause a user leaves for the chime, the
command (default "Turn on the kitchen lights."). Then, all on loopback with
nothing downloaded: wyoming-faster-whisper and wyoming-piper start, a real Home
Assistant starts with a small home (lights, a fan, areas), HA's wyoming entries for
the engines and an Assist pipeline of them are created through their config flows,
voicestack-satellite starts hearing the WAV, and VoiceStack is given the satellite.
The satellite hears the wake word, Home Assistant transcribes and acts, and the
answer is played into a WAV. The timeline shows when each step happened; the demo
fails (exit 1) when a step fails or times out, or when the default command did not
switch the kitchen light on. See ``devstack/`` for the stack.
"""

from __future__ import annotations

import argparse
import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
import os
from pathlib import Path
import shutil
import signal
import sys
import tempfile
import time
import traceback

from devstack import speech
from devstack.engines import Engines, start_engines, transcribe_with_server, warm_up
from devstack.errors import StackError
from devstack.home import HA_VERSION, Home, Owner
from devstack.home_config import KITCHEN_COMMAND, KITCHEN_LIGHT
from devstack.runner import child_stderr_to
from devstack.satellite import Satellite
from devstack.servers import VOICE
from devstack.spoken_request import MicAudio, prepare_mic, spoken_request
from devstack.voice_run import VoiceRun, run_voice_command
from voicestack_satellite.audio import AudioFormatError, read_wav
from voicestack_satellite.wake import BUILTIN_NAMES

DEFAULT_OUT = Path(".cache/demo")
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command line of scripts/demo."""
    parser = argparse.ArgumentParser(
        prog="scripts/demo",
        description=(
            "Run a spoken command through a real Home Assistant with VoiceStack and "
            "voicestack-satellite, on loopback, with real whisper and Piper servers; "
            "print a timeline and leave the spoken answer as a WAV."
        ),
        epilog=(
            "Exit status: 0 done, 1 a step failed or timed out (or the default "
            "command did not switch light.kitchen on), 2 bad arguments, "
            "130 interrupted."
        ),
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--text",
        default=KITCHEN_COMMAND,
        metavar="COMMAND",
        help=(
            "the command Piper says after the wake word and a 0.7 s pause "
            "(default: %(default)r; try 'Tell me about the house.')"
        ),
    )
    source.add_argument(
        "--wav",
        type=Path,
        help="your own WAV (any rate): wake word, then the command, then silence",
    )
    parser.add_argument(
        "--wake-word",
        default="hey_jarvis",
        choices=BUILTIN_NAMES,
        help="the satellite's wake word, also what Piper says (default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        help="where command.wav and response.wav go (default: %(default)s)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep the temporary dir (HA config and log, satellite log); "
        "it is always kept when the demo fails",
    )
    return parser.parse_args(argv)


@dataclass(slots=True)
class Timeline:
    """Lines stamped in seconds since the demo started, printed in time order."""

    start: float  # time.time()
    pending: list[tuple[float, str]] = field(default_factory=list)

    def note(self, at: float | None, text: str) -> None:
        """Queue a line for ``at`` (skipped when the moment is unknown)."""
        if at is not None:
            self.pending.append((at, text))

    def say(self, text: str, at: float | None = None) -> None:
        """Print what is queued, and this line."""
        self.note(time.time() if at is None else at, text)
        self.flush()

    def flush(self) -> None:
        """Print the queued lines in time order."""
        for at, text in sorted(self.pending, key=lambda item: item[0]):
            print(f"[{at - self.start:6.2f} s] {text}", flush=True)
        self.pending.clear()


def demo_start() -> float:
    """When the demo started: scripts/demo passes the moment before setup ran."""
    try:
        return float(os.environ["VOICESTACK_DEMO_T0"])
    except (KeyError, ValueError):
        return time.time()


def make_mic(args: argparse.Namespace) -> MicAudio:
    """The WAV the satellite hears: the user's, or Piper's (blocking)."""
    args.out.mkdir(parents=True, exist_ok=True)
    if args.wav is not None:
        pcm = read_wav(args.wav).tobytes()  # any format, as the satellite reads it
    else:
        pcm = spoken_request(args.text, args.wake_word)
    return prepare_mic(args.out / "command.wav", pcm)


async def start_stack(
    stack: AsyncExitStack, args: argparse.Namespace, workdir: Path, timeline: Timeline
) -> tuple[MicAudio, Engines, Home]:
    """The mic WAV, the engines and Home Assistant, all at once."""

    async def mic() -> MicAudio:
        audio = await asyncio.to_thread(make_mic, args)
        timeline.say(
            f"mic WAV {audio.path} ({audio.seconds:.1f} s, speech ends at "
            f"{audio.speech_end_s:.2f} s)"
        )
        return audio

    mic_task = asyncio.ensure_future(mic())

    async def engines() -> Engines:
        running = await start_engines(stack)
        timeline.say(
            f"speech engines up: faster-whisper tiny.en {running.whisper.uri}, "
            f"Piper {VOICE} {running.piper.uri}"
        )
        heard = await warm_up(running, (await mic_task).pcm)
        timeline.say(f"speech engines warmed up; whisper heard the WAV as {heard!r}")
        return running

    async def home() -> Home:
        running = await stack.enter_async_context(Home.running(workdir / "config"))
        timeline.say(
            f"Home Assistant {HA_VERSION} up: http://127.0.0.1:{running.http_port}, "
            f"config {running.config_dir}"
        )
        return running

    results = await asyncio.gather(mic_task, engines(), home(), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    audio, running_engines, running_home = results
    assert isinstance(audio, MicAudio)
    assert isinstance(running_engines, Engines)
    assert isinstance(running_home, Home)
    return audio, running_engines, running_home


def note_run(timeline: Timeline, run: VoiceRun, wake_word: str) -> None:
    """The voice command's steps, from the satellite's and Home Assistant's records."""
    timeline.note(run.wake, f"wake word {wake_word} detected by the satellite")
    timeline.note(
        run.end_of_speech,
        f"end of speech in the mic WAV ({run.mic.speech_end_s:.2f} s into it)",
    )
    timeline.note(
        run.vad_end, "Home Assistant's VAD: speech ended; the satellite stops streaming"
    )
    timeline.note(
        run.utterance_at, f"transcript (voicestack_utterance): {run.transcript!r}"
    )
    timeline.note(run.responding_at, f"agent answered: {run.answer!r}")
    timeline.note(
        run.first_audio,
        f"first response audio at the satellite, {run.latency:.2f} s after the "
        "end of speech",
    )
    seconds = f"{run.response_seconds:.1f} s" if run.response_seconds else "audio"
    plural = "s" if run.sentences != 1 else ""
    timeline.note(
        run.answered,
        f"played: {run.sentences} sentence{plural}, {seconds}; the satellite "
        "entity is idle again",
    )


def report_states(run: VoiceRun) -> None:
    """The demo devices before and after; changes marked."""
    for entity_id, before in run.states_before.items():
        after = run.states_after.get(entity_id, "?")
        change = f"{before} -> {after}" if after != before else f"{after} (unchanged)"
        print(f"  {entity_id}: {change}")


async def demo(args: argparse.Namespace, workdir: Path, timeline: Timeline) -> int:
    """Set everything up, run the command, report; raises StackError on failure."""
    async with AsyncExitStack() as stack:
        mic, engines, home = await start_stack(stack, args, workdir, timeline)
        pipeline = await home.set_up_assist(engines)
        devices = ", ".join(f"{e} {s}" for e, s in home.device_states().items())
        timeline.say(
            f"home ready: {devices}; wyoming entries for whisper and Piper; "
            f"Assist pipeline {pipeline!r} preferred"
        )
        satellite = await stack.enter_async_context(
            Satellite.running(workdir / "satellite", mic.path, wake_word=args.wake_word)
        )
        timeline.say(f"voicestack-satellite listening on {satellite.uri}")

        def on_step(step: str, at: float) -> None:
            if step == "connected":
                timeline.say(
                    "VoiceStack runs the satellite (run-satellite); "
                    "it hears the mic WAV now",
                    at,
                )

        try:
            run = await run_voice_command(
                home, satellite, Owner.VOICESTACK, mic, on_step=on_step
            )
        except StackError:
            seen = ", ".join(
                f"{s.state} at {s.at - timeline.start:.2f} s" for s in satellite.states
            )
            print(f"satellite states so far: {seen or 'none'}")
            raise
        note_run(timeline, run, args.wake_word)
        timeline.flush()
        response = args.out / "response.wav"
        await asyncio.to_thread(shutil.copyfile, satellite.response_wav, response)
        played = await asyncio.to_thread(speech.read_wav_pcm, response)
        heard = await transcribe_with_server(engines.whisper, played)
        timeline.say(f"whisper hears the played response WAV as {heard.strip()!r}")
    timeline.say("everything stopped: satellite, Home Assistant, speech engines")
    print("devices:")
    report_states(run)
    print(f"response WAV: {response}")
    if (
        args.wav is None
        and args.text == KITCHEN_COMMAND
        and (run.states_after.get(KITCHEN_LIGHT) != "on")
    ):
        raise StackError(f"{KITCHEN_LIGHT} was not switched on")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns the process exit code."""
    timeline = Timeline(demo_start())
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.wav is not None and not args.wav.is_file():
        print(f"scripts/demo: no such WAV: {args.wav}", file=sys.stderr)
        return EXIT_USAGE
    workdir = Path(tempfile.mkdtemp(prefix="voicestack-demo-"))
    print(f"VoiceStack demo (temporary dir {workdir})", flush=True)
    code = EXIT_FAILED
    try:
        with child_stderr_to(workdir / "engines.log"):
            code = asyncio.run(_run_until_signal(args, workdir, timeline))
    except AudioFormatError as err:
        print(f"scripts/demo: cannot read {args.wav}: {err}", file=sys.stderr)
        code = EXIT_USAGE
    except StackError as err:
        print(f"scripts/demo: FAILED: {err}", file=sys.stderr)
    except KeyboardInterrupt:
        print("scripts/demo: interrupted; everything stopped", file=sys.stderr)
        code = EXIT_INTERRUPTED
    except Exception:  # noqa: BLE001 - anything else: say so, keep the logs
        traceback.print_exc()
        print("scripts/demo: FAILED (unexpected error above)", file=sys.stderr)
    print(f"total: {time.time() - timeline.start:.1f} s", flush=True)
    if code == 0 and not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    else:
        print(
            f"kept {workdir}: config/home-assistant.log, satellite/satellite.log, "
            "engines.log",
            flush=True,
        )
    return code


async def _run_until_signal(
    args: argparse.Namespace, workdir: Path, timeline: Timeline
) -> int:
    """The demo, cancelled cleanly by SIGTERM as Ctrl-C cancels it."""
    task = asyncio.current_task()
    assert task is not None
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, task.cancel)
    try:
        return await demo(args, workdir, timeline)
    except asyncio.CancelledError:
        raise KeyboardInterrupt from None


if __name__ == "__main__":
    sys.exit(main())
