"""A real satellite refuses bad extension data: it logs it and carries on."""

from __future__ import annotations

from pathlib import Path

from wyoming.event import Event

from devstack import speech
from devstack.satellite import read_until, run_satellite, satellite
from tests.satellite.owner import send_stream
import voicestack_protocol as protocol


async def test_a_satellite_logs_bad_extension_data_and_carries_on(
    tmp_path: Path,
) -> None:
    """A bad listen opens nothing; a bad resume offset still resumes."""
    wav = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    reply = speech.silence(0.3)
    async with (
        satellite(tmp_path, "--mic-file", str(wav)) as sat,
        sat.connect() as client,
    ):
        await run_satellite(client)
        await client.write_event(Event(protocol.LISTEN, {"timeout": 90}))
        await client.write_event(Event(protocol.PAUSE, {}))
        await send_stream(client, reply)
        await client.write_event(Event(protocol.RESUME, {"offset": "start"}))
        played, seen = await read_until(client, "played", 10)
        log = sat.log_text()

    assert played.data["state"] == protocol.PLAYED
    assert "run-pipeline" not in [event.type for event in seen]
    assert "Ignoring voicestack-listen: timeout 90 is not 0 to 60 s" in log
    assert "Ignoring voicestack-resume: offset 'start' is not a sample offset" in log
