"""scripts/demo: speak a command, find the wake word, transcribe what follows.

Until the voice loop lands, the demo shows the satellite's front half on a generated
WAV: Piper speaks the command, the satellite's wake detector (openWakeWord) finds the
wake word, faster-whisper transcribes the audio after it. Every engine is real and loads its model from a
PyPI package.
"""

from __future__ import annotations

import argparse
from pathlib import Path
import sys
import time

import numpy as np

from tests import speech
from voicestack_satellite.audio import AudioFormatError, read_wav
from voicestack_satellite.mic import CHUNK_SAMPLES
from voicestack_satellite.wake import BUILTIN_NAMES, WakeDetector, parse_spec

OUTPUT_DIR = Path("demo-output")


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Command line of scripts/demo."""
    parser = argparse.ArgumentParser(
        prog="scripts/demo",
        description="Run VoiceStack's voice chain on a spoken command.",
    )
    source = parser.add_mutually_exclusive_group()
    source.add_argument(
        "--text",
        default="Hey Jarvis. Turn on the kitchen lights.",
        help="what Piper says (default: %(default)r)",
    )
    source.add_argument("--wav", type=Path, help="use your own WAV instead of Piper")
    parser.add_argument(
        "--wake-word",
        default="hey_jarvis",
        choices=BUILTIN_NAMES,
        help="built-in openWakeWord model (default: %(default)s)",
    )
    parser.add_argument(
        "--threshold", type=float, default=0.5, help="detection probability"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns the process exit code."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    started = time.monotonic()

    def log(message: str) -> None:
        print(f"[{time.monotonic() - started:6.2f} s] {message}", flush=True)

    OUTPUT_DIR.mkdir(exist_ok=True)
    if args.wav:
        try:
            pcm = read_wav(args.wav).tobytes()
        except (AudioFormatError, OSError) as err:
            print(f"scripts/demo: cannot read {args.wav}: {err}", file=sys.stderr)
            return 2
        log(f"read {args.wav} ({speech.seconds(pcm):.2f} s of audio)")
    else:
        pcm = speech.pad(speech.speak(args.text), 0.5, 0.5)
        wav = speech.write_wav(OUTPUT_DIR / "command.wav", pcm)
        log(f"Piper spoke {args.text!r} -> {wav} ({speech.seconds(pcm):.2f} s)")

    # The satellite's own detector, as voicestack-satellite runs it.
    detector = WakeDetector([parse_spec(args.wake_word, args.threshold)])
    samples = np.frombuffer(pcm, dtype=np.int16)
    detected_at = None
    try:
        for start in range(0, len(samples), CHUNK_SAMPLES):
            end = start + CHUNK_SAMPLES
            if detector.process(samples[start:end], end) is not None:
                detected_at = end
                log(
                    f"wake word {args.wake_word} at {end / speech.RATE:.2f} s "
                    "into the audio"
                )
                break
    finally:
        detector.close()
    if detected_at is None:
        log(f"no wake word {args.wake_word} in the audio")
        return 1

    transcript = speech.transcribe(pcm[detected_at * 2 :])
    log(f"transcript after the wake word: {transcript!r}")
    log("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
