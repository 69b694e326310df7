"""A simulated room: the satellite's own answer comes back into its mic.

The speaker sits next to the mic, so while the satellite plays an answer the
mic hears it again: a little later (the acoustic path and the sound card's
buffers), quieter, and smeared by the room's reflections. Someone else may talk
on top (the intruder) and the room has its own noise. This module builds that
mic signal from real speech so that echo handling (``echo_cancel``), the
barge-in benchmark and the tests all judge the same scene, and it keeps every
part apart (echo, intruder, noise) so a test can measure what survived of each.

Everything is 16 kHz mono int16 PCM (``voicestack_satellite.audio.RATE``). The
played answer is Piper's joe voice (``devstack.speech``, cached, no download);
the intruder is a different voice, espeak-ng from Debian.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from voicestack_satellite.audio import RATE

__all__ = [
    "ANSWER",
    "FRAME",
    "INTRUSION",
    "RATE",
    "Room",
    "Scene",
    "active_frames",
    "db",
    "espeak",
    "piper",
    "power",
    "simulate",
]

FRAME = 160  # 10 ms: what every echo canceller here processes at a time
# The answer the satellite plays: three sentences, as the tests use.
ANSWER = (
    "The kitchen light is on and the oven has reached two hundred degrees. "
    "Tomorrow will be cloudy in the morning, with light rain after three. "
    "Your next meeting is with the building manager at half past four."
)
INTRUSION = "Hey, can you turn that down, I am on the phone right now."
# A frame of one part counts as active above this RMS (-45 dBFS): Piper's pauses
# are digital silence, and a reverberation tail that quiet is below any VAD.
ACTIVE_DBFS = -45.0


@dataclass(frozen=True, slots=True)
class Room:
    """How the played audio comes back into the mic.

    ``delay_s``: from the sample reaching the speaker to the mic hearing it.
    ``attenuation_db``: level of the direct path at the mic (the issue's -10 dB).
    ``reverb_db``: energy of the reflections relative to the direct path, in a
    tail that decays exponentially with time constant ``decay_s`` over
    ``tail_s``. ``noise_dbfs``: white room noise (RMS), None for none.
    ``seed`` makes the reflections and the noise the same on every run.
    """

    delay_s: float = 0.04
    attenuation_db: float = -10.0
    reverb_db: float = -12.0
    decay_s: float = 0.03
    tail_s: float = 0.12
    noise_dbfs: float | None = None
    seed: int = 0

    def impulse_response(self) -> np.ndarray:
        """The speaker-to-mic response: a delayed direct path, then reflections."""
        delay = round(self.delay_s * RATE)
        tail = round(self.tail_s * RATE)
        rng = np.random.default_rng(self.seed)
        t = np.arange(1, tail + 1) / RATE
        reflections = rng.normal(0.0, 1.0, tail) * np.exp(-t / self.decay_s)
        # Scale the reflections' energy to ``reverb_db`` below the direct path's (1.0).
        reflections *= np.sqrt(10 ** (self.reverb_db / 10) / np.sum(reflections**2))
        response = np.zeros(delay + 1 + tail)
        response[delay] = 1.0
        response[delay + 1 :] = reflections
        return response * 10 ** (self.attenuation_db / 20)


@dataclass(frozen=True, slots=True)
class Scene:
    """One mic recording and its parts, all the same length, as float samples.

    ``reference`` is what the speaker played, on the mic's timeline (sample i
    left the speaker when the mic recorded sample i): the echo canceller's
    reference. ``mic`` is the sum of ``echo``, ``intruder`` and ``noise`` as
    the sound card delivers it (int16, clipped).
    """

    reference: np.ndarray
    echo: np.ndarray
    intruder: np.ndarray
    noise: np.ndarray
    mic: np.ndarray = field(repr=False)

    @property
    def frames(self) -> int:
        """Whole 10 ms frames in the recording."""
        return len(self.mic) // FRAME

    def echo_only(self) -> np.ndarray:
        """Per 10 ms frame: the echo is heard and the intruder is silent."""
        return active_frames(self.echo) & ~active_frames(self.intruder)

    def double_talk(self) -> np.ndarray:
        """Per 10 ms frame: the intruder talks while the echo is heard."""
        return active_frames(self.echo) & active_frames(self.intruder)

    def intruder_alone(self) -> np.ndarray:
        """Per 10 ms frame: the intruder talks and no echo is heard."""
        return ~active_frames(self.echo) & active_frames(self.intruder)


def power(samples: np.ndarray) -> float:
    """Mean square of ``samples`` (0 for none)."""
    values = np.asarray(samples, dtype=np.float64)
    return float(np.mean(values**2)) if len(values) else 0.0


def db(ratio: float) -> float:
    """A power ratio in dB (-inf for 0)."""
    return 10 * np.log10(ratio) if ratio > 0 else float("-inf")


def active_frames(samples: np.ndarray, level_dbfs: float = ACTIVE_DBFS) -> np.ndarray:
    """Per whole 10 ms frame: its RMS is above ``level_dbfs``."""
    whole = len(samples) // FRAME * FRAME
    frames = np.asarray(samples[:whole], dtype=np.float64).reshape(-1, FRAME)
    threshold = 32768.0 * 10 ** (level_dbfs / 20)
    return np.sqrt(np.mean(frames**2, axis=1)) > threshold


def _voiced_power(samples: np.ndarray) -> float:
    """Power over the active frames only, so pauses do not lower it."""
    whole = len(samples) // FRAME * FRAME
    frames = np.asarray(samples[:whole], dtype=np.float64).reshape(-1, FRAME)
    active = active_frames(samples)
    if not active.any():
        raise ValueError("no speech to measure a level against")
    return float(np.mean(frames[active] ** 2))


def simulate(
    played: np.ndarray,
    room: Room | None = None,
    *,
    intruder: np.ndarray | None = None,
    onset_s: float = 0.0,
    intruder_db: float = 0.0,
    lead_s: float = 0.5,
) -> Scene:
    """The mic while ``played`` (int16) plays through ``room``.

    ``intruder`` (int16) starts ``onset_s`` after the answer, scaled so its
    voiced level is ``intruder_db`` above the echo's voiced level. ``lead_s``
    of silence comes before the answer (a canceller hears the room idle first)
    and the recording lasts until the answer's echo and the intruder are over.
    """
    room = room or Room()
    lead = round(lead_s * RATE)
    response = room.impulse_response()
    end = lead + len(played) + len(response)
    start = lead + round(onset_s * RATE)
    if intruder is not None:
        end = max(end, start + len(intruder))
    end += -end % FRAME  # whole frames
    reference = np.zeros(end)
    reference[lead : lead + len(played)] = played
    echo = np.convolve(reference, response)[:end]
    voice = np.zeros(end)
    if intruder is not None:
        voice[start : start + len(intruder)] = intruder
        voice *= np.sqrt(
            _voiced_power(echo) / _voiced_power(voice) * 10 ** (intruder_db / 10)
        )
    noise = np.zeros(end)
    if room.noise_dbfs is not None:
        rms = 32768.0 * 10 ** (room.noise_dbfs / 20)
        noise = np.random.default_rng(room.seed + 1).normal(0.0, rms, end)
    mic = np.clip(np.rint(echo + voice + noise), -32768, 32767).astype(np.int16)
    return Scene(reference, echo, voice, noise, mic)


def piper(text: str = ANSWER) -> np.ndarray:
    """``text`` in Piper's joe voice, 16 kHz int16 (cached by ``devstack.speech``)."""
    from devstack import speech

    return np.frombuffer(speech.speak(text), dtype=np.int16)


def espeak(
    text: str = INTRUSION, voice: str = "en-us+f3", wpm: int = 165
) -> np.ndarray:
    """``text`` spoken by espeak-ng (another voice than joe), 16 kHz int16."""
    from devstack import speech

    return np.frombuffer(speech.espeak(text, voice, wpm), dtype=np.int16)
