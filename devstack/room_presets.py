"""The rooms a satellite is tested in: named presets, and their impulse responses.

A preset says what a room does to sound: its reverberation (RT60), where the
speaker, the user and another talker (a TV, a second person) stand from the mic,
how far the mic's clock drifts from the speaker's, how late and how unevenly the
mic's chunks arrive, whether the speaker clips, and the background noise. The
``seed`` places everything (mic, speaker, user and TV positions in the room)
and seeds the noise and the jitter, so a scenario that failed reproduces.

``simple`` is the room the tests used first (the answer back 40 ms late at
-10 dB, nothing else); every other preset is a shoebox whose impulse responses
come from pyroomacoustics' image-source method. Those take up to a few seconds
to compute, so they are cached under ``.cache/rooms`` by everything that
decides them.

Levels: the PCM the satellite plays is the speaker's level at 1 m
(``speaker_db`` below full scale), and PCM a voice says is that voice's level
at 1 m: distance lowers both as 1/r, reflections add to them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import hashlib
import importlib.metadata
import json
import os
from pathlib import Path

import numpy as np

RATE = 16000
SOUND_SPEED = 343.0  # m/s, as pyroomacoustics' constants
MARGIN_M = 0.4  # nobody stands closer to a wall than this
CACHE_DIR = Path(
    os.environ.get(
        "VOICESTACK_ROOM_CACHE",
        Path(__file__).resolve().parent.parent / ".cache" / "rooms",
    )
)
# Where the sound comes from, in the order the responses are kept.
SOURCES = ("speaker", "user", "other")


@dataclass(frozen=True, slots=True)
class Preset:
    """One room, its devices and its noise; see the module's docstring.

    ``drift_ppm``: how much faster the mic's clock runs than the speaker's.
    ``jitter_s``: each mic chunk arrives up to this much late (order kept).
    ``delay_s``: sound-card latency from the speaker's sample to the mic's
    (the sound's flight through the air comes on top, from the distance).
    ``clip_dbfs``: where the speaker starts to compress (tanh), None: clean.
    ``noise``: ``fan`` (filtered noise), ``babble`` (several voices, a TV at
    the ``other`` position) or None; ``snr_db`` against the user's speech as
    it reaches the mic (a voice at -20 dBFS RMS at 1 m).
    ``echo_db`` and ``simple`` only: the simple room's echo level (no
    distances, no reverberation).
    """

    name: str
    simple: bool = False
    echo_db: float | None = -10.0
    rt60_s: float = 0.25
    dimensions_m: tuple[float, float, float] = (5.0, 4.0, 2.6)
    speaker_m: float = 0.5
    user_m: float = 1.5
    other_m: float = 2.5
    speaker_db: float = -16.0
    delay_s: float = 0.04
    drift_ppm: float = 0.0
    jitter_s: float = 0.0
    clip_dbfs: float | None = None
    noise: str | None = None
    snr_db: float = 20.0
    seed: int = 0

    def with_seed(self, seed: int) -> Preset:
        """The same room with everything placed and seeded by ``seed``."""
        return replace(self, seed=seed)


PRESETS: dict[str, Preset] = {
    preset.name: preset
    for preset in (
        Preset("simple", simple=True),
        Preset(
            "quiet",
            rt60_s=0.25,
            dimensions_m=(4.5, 3.8, 2.5),
            speaker_m=0.5,
            user_m=1.5,
            drift_ppm=20.0,
            jitter_s=0.002,
            seed=1,
        ),
        Preset(
            "hard",
            rt60_s=0.55,
            dimensions_m=(6.0, 4.5, 2.8),
            speaker_m=1.0,
            user_m=3.0,
            speaker_db=-12.0,
            drift_ppm=-80.0,
            jitter_s=0.005,
            clip_dbfs=-6.0,
            noise="fan",
            snr_db=10.0,
            seed=2,
        ),
        Preset(
            "tv",
            rt60_s=0.55,
            dimensions_m=(6.0, 4.5, 2.8),
            speaker_m=1.0,
            user_m=3.0,
            other_m=3.0,
            speaker_db=-12.0,
            drift_ppm=60.0,
            jitter_s=0.005,
            clip_dbfs=-6.0,
            noise="babble",
            snr_db=10.0,
            seed=3,
        ),
    )
}


def preset(name: str | Preset, seed: int | None = None) -> Preset:
    """The preset called ``name`` (or ``name`` itself), reseeded if ``seed`` is given."""
    chosen = name if isinstance(name, Preset) else PRESETS.get(name)
    if chosen is None:
        raise ValueError(f"no room preset {name!r}; there are {sorted(PRESETS)}")
    return chosen if seed is None else chosen.with_seed(seed)


def positions(room: Preset) -> dict[str, np.ndarray]:
    """Where the mic and each source stand (metres), placed by the seed.

    The mic sits on a table (1 m high) away from the walls; each source is at
    its distance in a random direction, at a height of its own (a speaker on
    the table, a standing user, a TV), and never closer to a wall than
    ``MARGIN_M``.
    """
    rng = np.random.default_rng(room.seed)
    size = np.array(room.dimensions_m)
    heights = {"speaker": 1.0, "user": 1.6, "other": 1.1}
    distances = {"speaker": room.speaker_m, "user": room.user_m, "other": room.other_m}
    for _attempt in range(1000):
        mic = np.array([*rng.uniform(MARGIN_M, size[:2] - MARGIN_M), 1.0])
        placed = {"mic": mic}
        for source in SOURCES:
            height = heights[source] - mic[2]
            flat = np.sqrt(max(distances[source] ** 2 - height**2, 0.01))
            angle = rng.uniform(0, 2 * np.pi)
            offset = np.array([flat * np.cos(angle), flat * np.sin(angle), height])
            placed[source] = mic + offset
        inside = all(
            np.all(point >= MARGIN_M) and np.all(point <= size - MARGIN_M)
            for point in placed.values()
        )
        if inside:
            return placed
    raise ValueError(f"room {room.name!r}: its distances do not fit in the room")


def responses(room: Preset) -> dict[str, np.ndarray]:
    """Each source's impulse response to the mic (float32, 16 kHz), cached.

    The image-source method's global delay is removed, so the direct sound
    arrives after its flight through the air (distance / speed of sound), and
    each response is scaled to 1/r of the level at 1 m (the module's levels).
    """
    if room.simple:
        raise ValueError("the simple room has no impulse responses")
    key = _cache_key(room)
    cached = CACHE_DIR / f"{key}.npz"
    if cached.exists():
        with np.load(cached) as stored:
            return {source: stored[source] for source in SOURCES}
    computed = _compute(room)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(f".{os.getpid()}.tmp.npz")
    np.savez(partial, **computed)
    partial.replace(cached)  # atomic: parallel workers never read half a file
    return computed


def _cache_key(room: Preset) -> str:
    """Everything that decides the responses (not the devices, nor the noise)."""
    decisive = {
        "version": importlib.metadata.version("pyroomacoustics"),
        "rate": RATE,
        "rt60_s": room.rt60_s,
        "dimensions_m": room.dimensions_m,
        "distances_m": (room.speaker_m, room.user_m, room.other_m),
        "seed": room.seed,
    }
    text = json.dumps(decisive, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def _compute(room: Preset) -> dict[str, np.ndarray]:
    """The image-source responses, at the room's RT60 as measured (T30).

    Sabine's formula, which sets the walls' absorption, misjudges the RT60 the
    image sources then give by 10-20 %: one correction, by the ratio measured
    on the speaker's response, brings it within a few per cent.
    """
    from pyroomacoustics.experimental import measure_rt60

    placed = positions(room)
    first = _image_sources(room.rt60_s, room, placed)
    measured = measure_rt60(first["speaker"], fs=RATE, decay_db=30)
    return _image_sources(room.rt60_s**2 / measured, room, placed)


def _image_sources(
    rt60_s: float, room: Preset, placed: dict[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """Each source's response in the shoebox whose walls Sabine gives ``rt60_s``."""
    import pyroomacoustics as pra

    result: dict[str, np.ndarray] = {}
    for order in (0, None):  # the direct sound alone, then the room
        absorption, max_order = pra.inverse_sabine(rt60_s, list(room.dimensions_m))
        shoebox = pra.ShoeBox(
            list(room.dimensions_m),
            fs=RATE,
            materials=pra.Material(absorption),
            max_order=max_order if order is None else order,
            air_absorption=False,
        )
        for source in SOURCES:
            shoebox.add_source(list(placed[source]))
        shoebox.add_microphone(list(placed["mic"]))
        shoebox.compute_rir()
        if order == 0:
            direct = [np.asarray(shoebox.rir[0][i]) for i in range(len(SOURCES))]
            continue
        for index, source in enumerate(SOURCES):
            response = np.asarray(shoebox.rir[0][index], dtype=np.float64)
            distance = float(np.linalg.norm(placed[source] - placed["mic"]))
            # The direct sound's energy sets the scale: 1/r at the mic.
            response *= 1 / distance / np.sqrt(np.sum(direct[index] ** 2))
            # Cut the method's own delay: the direct sound comes after its flight.
            flight = round(distance / SOUND_SPEED * RATE)
            peak = int(np.argmax(np.abs(direct[index])))
            result[source] = response[max(0, peak - flight) :].astype(np.float32)
    return result
