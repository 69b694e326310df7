"""A stock Wyoming satellite under Home Assistant's ``wyoming`` integration, by ear.

Our satellite in stock mode (``devstack.satellite.satellite``) added to Home
Assistant's own ``wyoming`` integration. Home Assistant's announce on its
entity has ffmpeg fetch the message from Home Assistant's TTS proxy URL (so
Home Assistant must serve HTTP) and streams it to the satellite, which writes
each stream it played to a WAV next to its ``--snd-file``. This tells what a
listener heard there, and how long the entity stayed busy after the audio.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from homeassistant.components.assist_satellite.entity import AssistSatelliteState

from devstack import speech
from devstack.satellite import RunningSatellite, satellite
from devstack.state_log import SatelliteStateLog


@dataclass(slots=True)
class StockSatellite:
    """The satellite process, its entity, and a log of the entity's states."""

    entity_id: str
    process: RunningSatellite
    states: SatelliteStateLog

    def played(self) -> list[Path]:
        """The WAVs of the audio streams it played, in order."""
        snd = self.process.snd_file
        return sorted(
            snd.parent.glob(f"{snd.stem}.*{snd.suffix}"),
            key=lambda path: int(path.suffixes[0][1:]),
        )

    def heard(self) -> list[str]:
        """What a listener heard of each stream (transcribed)."""
        return [speech.transcribe(speech.read_wav_pcm(path)) for path in self.played()]

    def busy_after_played_s(self) -> float:
        """The longest its entity stayed busy after an announcement's last sample.

        The n-th time the entity went ``responding`` is the n-th stream; the
        satellite writes a stream's WAV when its last sample was played, and
        it and the state log keep wall-clock time. Negative when the entity was
        ``idle`` first: Home Assistant waits for the satellite's ``played`` at
        most the audio's length and 0.5 s after sending it, and a satellite
        slowed by a loaded machine plays later than that.
        """
        idle_after: list[float] = []
        busy = False
        for at, entity_id, state in self.states.changes:
            if entity_id != self.entity_id:
                continue
            if busy and state == AssistSatelliteState.IDLE:
                idle_after.append(at)
            busy = state == AssistSatelliteState.RESPONDING or (
                busy and state != AssistSatelliteState.IDLE
            )
        ended = [path.stat().st_mtime for path in self.played()]
        return max(idle - end for idle, end in zip(idle_after, ended, strict=True))


@asynccontextmanager
async def hearing_silence(
    folder: Path, name: str, port: int | None = None
) -> AsyncIterator[RunningSatellite]:
    """Our satellite named ``name`` hearing silence, its files in ``folder`` (new).

    Its own folder: another satellite in the same run writes the same names.
    ``port`` starts it where one listened before (back after an outage).
    """
    await asyncio.to_thread(folder.mkdir)
    mic = speech.write_wav(folder / "mic.wav", speech.silence(1.0))
    async with satellite(
        folder, "--mic-file", str(mic), "--name", name, port=port
    ) as process:
        yield process
