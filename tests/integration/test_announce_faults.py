"""A satellite killed or frozen at any stage of an announcement says it once.

Real Home Assistant, real Piper, a real satellite subprocess. The satellite is
killed (SIGKILL, then started again on its port) or frozen (SIGSTOP, SIGCONT
after ``FREEZE_S``, longer than the link needs to notice) while the announcement
is synthesized (started, no audio sent yet), while its audio is sent (after the
first chunk) or while it plays (after ``audio-stop``, before ``played``). What
the satellites wrote with ``--snd-file`` must hold exactly one complete play of
it, and the events and metrics must say what happened: finished once, spoken
once, and at most a ``lost`` interruption on the way.

The link pings every 0.5 s here (10 s in production) so a freeze of 4 s is
noticed and the scenarios stay short.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
from functools import partial
import os
from pathlib import Path
import signal
from typing import Any

from homeassistant.const import CONF_HOST, CONF_PORT
from homeassistant.core import Event, HomeAssistant, callback
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from wyoming.event import Event as WyomingEvent
from wyoming.info import Info

from custom_components.voicestack import hub as hub_module
from custom_components.voicestack.const import DOMAIN
from custom_components.voicestack.core.backoff import Backoff
from custom_components.voicestack.core.identity import identify
from custom_components.voicestack.core.link import SatelliteLink
from custom_components.voicestack.hub import SatelliteHub
from devstack import speech
from devstack.satellite import RunningSatellite, satellite
from devstack.voicestack_entry import runtime_of
from devstack.waiting import wait_for
from tests.integration.assist import add_voicestack

# The link's and the announcer's, the same on every version: the newest Home
# Assistant only (scripts/test deselects newest_ha on the oldest; the CI's 45
# minutes).
pytestmark = [pytest.mark.e2e, pytest.mark.newest_ha]

SATELLITE = "assist_satellite.test_satellite"
MESSAGE = "The garage door has been open for ten minutes."
FREEZE_S = 4.0


def fast_link(*args: Any, **kwargs: Any) -> SatelliteLink:
    """The production link, noticing a silent satellite within 1.5 s."""
    return SatelliteLink(
        *args,
        **kwargs,
        ping_interval_s=0.5,
        pong_timeout_s=1.0,
        connect_timeout_s=2.0,
        backoff=Backoff(base_s=0.2, cap_s=1.0),
    )


class Stages:
    """Calls ``fault`` once, when the announcement reaches ``stage``.

    ``synthesizing``: its ``started`` event (no audio sent yet); ``streaming``:
    right after its first audio chunk was sent; ``playing``: right after its
    ``audio-stop`` was sent.
    """

    def __init__(self, hub: SatelliteHub, stage: str, fault: Callable[[], None]):
        """Watch ``hub``'s Speaker sending."""
        self._stage = stage
        self._fault = fault
        self.done = False
        send = hub.speaker._send

        async def watched(event: Any) -> bool:
            sent = await send(event)
            if (stage, event.type) in (
                ("streaming", "audio-chunk"),
                ("playing", "audio-stop"),
            ):
                self.fire()
            return sent

        hub.speaker._send = watched

    @callback
    def on_announcement(self, event: Event) -> None:
        """``voicestack_announcement`` listener."""
        if self._stage == "synthesizing" and event.data["status"] == "started":
            self.fire()

    def fire(self) -> None:
        """The fault, the first time only."""
        if not self.done:
            self.done = True
            self._fault()


def complete_plays(folders: list[Path], seconds: float) -> list[float]:
    """Lengths of the streams written that are as long as the whole message."""
    lengths = [
        speech.seconds(speech.read_wav_pcm(path))
        for folder in folders
        for path in folder.glob("played.*.wav")
    ]
    return [length for length in lengths if length >= seconds - 0.05]


def last_state(sat: RunningSatellite) -> str:
    """The satellite's state as it last logged it (``--debug``)."""
    states = [
        line.rsplit("State: ", 1)[1].strip()
        for line in sat.log_text().splitlines()
        if "State: " in line
    ]
    return states[-1] if states else ""


@pytest.mark.parametrize("stage", ["synthesizing", "streaming", "playing"])
@pytest.mark.parametrize("fault", ["kill", "freeze"])
async def test_a_fault_at_any_stage_is_heard_once(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    pipeline: object,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    stage: str,
) -> None:
    monkeypatch.setattr(hub_module, "SatelliteLink", fast_link)
    mic = speech.write_wav(tmp_path / "mic.wav", speech.silence(1.0))
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    first_dir.mkdir()
    second_dir.mkdir()
    first = await stack.enter_async_context(
        satellite(first_dir, "--mic-file", str(mic))
    )
    entry = await add_voicestack(hass, stack, first)
    runtime = runtime_of(entry)
    await wait_for(lambda: hass.states.get(SATELLITE).state == "idle", 10, "up")
    events: list[dict[str, Any]] = []
    stack.callback(
        hass.bus.async_listen(
            "voicestack_announcement", callback(lambda e: events.append(e.data))
        )
    )
    pid = first.process.pid
    if fault == "kill":
        act: Callable[[], None] = partial(os.kill, pid, signal.SIGKILL)
    else:

        def act() -> None:
            os.kill(pid, signal.SIGSTOP)
            timer = hass.loop.call_later(FREEZE_S, os.kill, pid, signal.SIGCONT)
            stack.callback(timer.cancel)

        def thaw() -> None:
            if first.process.poll() is None:
                os.kill(pid, signal.SIGCONT)

        stack.callback(thaw)
    stages = Stages(runtime.hub, stage, act)
    stack.callback(
        hass.bus.async_listen("voicestack_announcement", stages.on_announcement)
    )

    await hass.services.async_call(
        "voicestack",
        "announce",
        {"message": MESSAGE, "priority": "high", "category": "warning"},
        blocking=True,
    )
    await wait_for(lambda: stages.done, 30, f"the {stage} stage")
    now = first
    if fault == "kill":
        await wait_for(lambda: first.process.poll() is not None, 10, "killed")
        now = await stack.enter_async_context(
            satellite(second_dir, "--mic-file", str(mic), port=first.port)
        )
    await wait_for(lambda: any(e["status"] == "finished" for e in events), 60, "said")
    await wait_for(lambda: last_state(now) == "idle", 20, "the satellite idle")
    finished = [e for e in events if e["status"] == "finished"]
    last = runtime.hub.speaker.last
    seconds = last.seconds if last else 0.0
    snapshot = runtime.announcements.announcer.snapshot()
    plays = complete_plays([first_dir, second_dir], seconds)

    assert [e["text"] for e in finished] == [MESSAGE]
    assert finished[0]["outcome"] == "played"
    interrupted = [e["reason"] for e in events if e["status"] == "interrupted"]
    if stage == "synthesizing":
        # Lost if the first sentence was ready before the satellite was back;
        # otherwise its audio simply went to the satellite that is back.
        assert interrupted in ([], ["lost"])
    else:  # audio went out on the connection that broke
        assert interrupted == ["lost"]
    assert snapshot.spoken == 1
    assert snapshot.dropped_total == 0
    assert snapshot.balanced
    assert seconds > 2.0
    assert len(plays) == 1, plays


async def test_a_played_with_a_stream_id_that_is_no_string_is_ignored(
    hass: HomeAssistant, caplog: pytest.LogCaptureFixture
) -> None:
    """The hub hands the Speaker only a string id (or none, a stock satellite)."""
    entry = MockConfigEntry(
        domain=DOMAIN, title="kitchen", data={CONF_HOST: "127.0.0.1", CONF_PORT: 1}
    )
    entry.add_to_hass(hass)
    hub = SatelliteHub(hass, entry, identify("127.0.0.1", 1, Info().event()))
    ended: list[tuple[str | None, str | None]] = []
    hub.speaker.played = lambda stream, state: ended.append((stream, state))  # type: ignore[method-assign]
    forwarded: list[str] = []
    hub.async_subscribe_events(lambda event: forwarded.append(event.type))

    hub.link_event(WyomingEvent("played", {"stream": 5, "state": "played"}))
    hub.link_event(WyomingEvent("played", {"stream": "a-1", "state": 7}))
    hub.link_event(WyomingEvent("played", {"stream": "a-2", "state": "flushed"}))
    hub.link_event(WyomingEvent("played"))

    assert ended == [("a-1", None), ("a-2", "flushed"), (None, None)]
    assert "kitchen: ignoring 'played' with stream id 5 (not a string)" in caplog.text
    assert forwarded == ["played"] * 4
