"""A living room around a real satellite: its speaker comes back into its mic.

The satellite runs with ``--snd-command`` set to ``Room.speaker_command`` (the
player's PCM reaches the room as the speaker would play it, in real time) and
``--mic-stdin`` fed by the room (``attach``). What the mic hears is the room
preset's (``devstack.room_presets``, ``devstack.room_air``): in ``simple``, each
speaker sample ``delay_s`` after it played, ``echo_db`` quieter, and voices
(``say``) on top; in the others, the echo and the voices through the room's
impulse responses, the mic on a drifting clock, a clipping speaker and noise.
Time is the event loop's: mic sample ``n`` is heard at ``start + n / rate``
(16000, or off by the preset's drift), and the room writes each 80 ms chunk
when it is over (plus the preset's jitter), as a sound card would deliver it.

What the speaker played is kept with the time it arrived, so a test can
transcribe it (``played``) and find when it went quiet and when it started
again (``pause_after``, ``resume_after``). The speaker must run at the mic's
rate (``--snd-rate 16000``). Memory: the speaker's samples (32 kB per second
played) and the mic still to be written; a test is minutes long at most.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterator
import contextlib
from dataclasses import dataclass
import itertools
from pathlib import Path
import shlex
from typing import IO, Self

import numpy as np

from devstack import room_presets, servers
from devstack.room_air import CHUNK, Air, ShoeboxAir, SimpleAir
from devstack.room_presets import RATE, Preset

GAP_S = 0.06  # no speaker audio this long: the speaker went quiet (not jitter)
SPEECH_LEVEL = 500  # a sample this loud (int16) is speech, not its leading silence


@dataclass(frozen=True, slots=True)
class Heard:
    """Where a voice's speech starts in the mic (its first loud sample), and when."""

    sample: int
    at: float  # loop time


class Room:
    """The speaker's echo and people's voices, in one mic, in real time."""

    def __init__(
        self,
        folder: Path,
        preset: str | Preset = "simple",
        *,
        seed: int | None = None,
        echo_db: float | None = -10.0,
        delay_s: float = 0.04,
    ) -> None:
        """A room of ``preset`` (``seed``: the preset's own unless given).

        ``echo_db`` and ``delay_s`` are the simple room's (None: the mic does not
        hear the speaker at all).
        """
        self.socket_path = folder / "room.sock"
        self.preset = room_presets.preset(preset, seed)
        # A shoebox's air is built on entering, off the loop (its impulse
        # responses and babble take seconds the first time).
        self._air: Air = SimpleAir(echo_db, delay_s)
        self._start: float | None = None  # loop time of mic sample 0
        self.speaker: list[tuple[float, np.ndarray]] = []  # (arrival, samples)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._progress = asyncio.Event()

    @property
    def speaker_command(self) -> str:
        """The satellite's ``--snd-command``."""
        python = servers.engines_python()
        return shlex.join(
            [python, "-m", "devstack.room_speaker", str(self.socket_path)]
        )

    async def __aenter__(self) -> Self:
        """Build the room's air and listen for the speaker."""
        if not self.preset.simple:
            self._air = await asyncio.to_thread(ShoeboxAir, self.preset)
        self._server = await asyncio.start_unix_server(
            self._speaker_connected, str(self.socket_path)
        )
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Stop feeding the mic and listening."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            self._server.close()

    def attach(self, mic: IO[bytes]) -> None:
        """Feed the satellite's stdin from now on."""
        self._spawn(self._feed(mic))

    def now_sample(self) -> int:
        """The mic sample sounding now."""
        assert self._start is not None, "attach the mic first"
        loop = asyncio.get_running_loop()
        now = round((loop.time() - self._start) * self._air.rate)
        return max(self._air.written, now)

    def say_now(self, pcm: bytes, gain_db: float = 0.0, source: str = "user") -> Heard:
        """Mix 16 kHz ``pcm`` into the mic from now on; where it starts.

        ``source``: where the voice stands, ``user`` or ``other`` (the simple
        room has no places). Its start is where the mic hears its first loud
        sample's direct sound.
        """
        samples = np.frombuffer(pcm, dtype=np.int16).astype(np.float32)
        start = self.now_sample()
        delay = self._air.voice(start, samples * 10 ** (gain_db / 20), source)
        assert self._start is not None
        loud = np.flatnonzero(np.abs(samples) > SPEECH_LEVEL)
        onset = start + delay + (int(loud[0]) if len(loud) else 0)
        return Heard(onset, self._start + onset / self._air.rate)

    async def say(
        self, pcm: bytes, gain_db: float = 0.0, source: str = "user"
    ) -> Heard:
        """``say_now``, returning once the mic has heard all of it."""
        end = self.now_sample() + len(pcm) // 2
        heard = self.say_now(pcm, gain_db, source)
        while self._air.written < end:
            self._progress.clear()
            await self._progress.wait()
        return heard

    async def quiet(
        self, after: float, quiet_s: float = 0.5, timeout_s: float = 30
    ) -> float:
        """When the speaker went quiet for ``quiet_s`` after playing after ``after``.

        Waits for it; TimeoutError after ``timeout_s``.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while loop.time() < deadline:
            if self.speaker and self.speaker[-1][0] >= after:
                arrived, samples = self.speaker[-1]
                ended = arrived + len(samples) / RATE
                if loop.time() - ended >= quiet_s:
                    return ended
            await asyncio.sleep(0.05)
        raise TimeoutError(f"the speaker did not go quiet within {timeout_s} s")

    def played(self, since: float = 0.0) -> bytes:
        """What the speaker played (arriving after loop time ``since``), as PCM."""
        parts = [s for at, s in self.speaker if at >= since]
        return np.concatenate(parts).tobytes() if parts else b""

    def pause_after(self, at: float, lasting: float = GAP_S) -> float | None:
        """When the speaker went quiet (for ``lasting`` at least) after loop time ``at``."""
        return next((ended for ended, _again in self._gaps(at, lasting)), None)

    def resume_after(self, at: float, lasting: float = GAP_S) -> float | None:
        """When the speaker played again after a quiet spell (``lasting``) after ``at``."""
        return next((again for _ended, again in self._gaps(at, lasting) if again), None)

    def playing_after(self, at: float) -> float | None:
        """When the speaker played the first time after loop time ``at``."""
        return next((arrived for arrived, _ in self.speaker if arrived >= at), None)

    def _gaps(self, at: float, lasting: float) -> Iterator[tuple[float, float | None]]:
        """(went quiet, played again) of each quiet spell after loop time ``at``.

        Only spells of ``lasting`` or more (``GAP_S`` at least); one still going on
        plays again at None.
        """
        lasting = max(lasting, GAP_S)
        for (arrived, samples), (following, _) in itertools.pairwise(self.speaker):
            ended = arrived + len(samples) / RATE
            if arrived >= at and following - ended >= lasting:
                yield ended, following
        if self.speaker:
            arrived, samples = self.speaker[-1]
            ended = arrived + len(samples) / RATE
            now = asyncio.get_running_loop().time()
            if arrived >= at and now - ended >= lasting:
                yield ended, None

    # -- internals -----------------------------------------------------------------

    def _spawn(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _speaker_connected(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        loop = asyncio.get_running_loop()
        leftover = b""
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(4096):
                data, leftover = leftover + data, b""
                if len(data) % 2:
                    data, leftover = data[:-1], data[-1:]
                samples = np.frombuffer(data, dtype=np.int16).copy()
                arrived = loop.time()
                self.speaker.append((arrived, samples))
                if self._start is not None:
                    at = (arrived - self._start) * RATE
                    self._air.play(at, samples.astype(np.float32))
        writer.close()

    async def _feed(self, mic: IO[bytes]) -> None:
        """Write each 80 ms chunk when it is over (on the mic's clock), in order.

        The write waits in a thread: a satellite that reads late (a loaded
        CPU) fills the pipe, and a write on the loop would stall everything
        on it (Home Assistant, the speaker's arrival times) until it reads.
        """
        loop = asyncio.get_running_loop()
        self._start = loop.time()
        due = self._start
        while True:
            due += CHUNK / self._air.rate
            late = self._air.jitter()
            await asyncio.sleep(max(0.0, due + late - loop.time()))
            pcm = self._air.take().tobytes()
            try:
                await asyncio.to_thread(_write, mic, pcm)
            except (BrokenPipeError, ValueError):
                return
            self._progress.set()


def _write(mic: IO[bytes], pcm: bytes) -> None:
    mic.write(pcm)
    mic.flush()
