"""Stand-ins for the Speaker's two callables, and small helpers for announcer tests.

The announcer's logic needs no satellite: ``SayRecorder`` records what it is
asked to say and ends each call when the test says so (or at once), so windows,
interrupts and fates are checked exactly with a ``ManualClock``. The Speaker
itself is tested against a real satellite elsewhere.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from custom_components.voicestack.core.announce import (
    AnnouncementEvent,
    AnnounceOptions,
    SpeakerAnnouncer,
    Spoken,
    Status,
)
from devstack.manual_clock import ManualClock


@dataclass
class Call:
    """One ``say`` call."""

    text: str
    ids: tuple[str, ...]
    at: float
    result: asyncio.Future[Spoken]
    cancelled: bool = False


@dataclass
class SayRecorder:
    """``say`` and ``stop`` for one satellite.

    ``hold``: each ``say`` waits for ``finish``; otherwise it returns "played" at
    once with the first audio "now". ``stop_gate``: ``stop`` waits for it.
    """

    clock: ManualClock
    hold: bool = False
    calls: list[Call] = field(default_factory=list)
    stop_times: list[float] = field(default_factory=list)
    stop_gate: asyncio.Future[None] | None = None
    prefetched: list[str] = field(default_factory=list)  # texts synthesized early

    async def say(self, text: str, ids: tuple[str, ...]) -> Spoken:
        """Record the call; end it now, or when the test says (``hold``)."""
        call = Call(
            text, ids, self.clock.now(), asyncio.get_running_loop().create_future()
        )
        self.calls.append(call)
        if not self.hold:
            return Spoken("played", self.clock.now())
        try:
            return await call.result
        except asyncio.CancelledError:
            call.cancelled = True
            raise

    async def stop(self) -> bool:
        """Record the stop; wait for ``stop_gate`` if set."""
        self.stop_times.append(self.clock.now())
        if self.stop_gate is not None:
            await self.stop_gate
        return True

    @property
    def texts(self) -> list[str]:
        """What was said, in order."""
        return [call.text for call in self.calls]

    @property
    def waiting(self) -> list[Call]:
        """Calls not ended yet (neither finished nor cancelled)."""
        return [c for c in self.calls if not c.result.done() and not c.cancelled]

    @property
    def active(self) -> Call:
        """The one call waiting for ``finish``."""
        waiting = self.waiting
        assert len(waiting) == 1, f"{len(waiting)} calls in progress"
        return waiting[0]

    def finish(self, outcome: str = "played", first_audio_delay_s: float = 0.0) -> Call:
        """End the call in progress; its first audio came ``delay`` after it began."""
        call = self.active
        call.result.set_result(Spoken(outcome, call.at + first_audio_delay_s))
        return call

    async def finish_all(self) -> None:
        """Let every call end (a test must not leave tasks behind)."""
        while waiting := self.waiting:
            for call in waiting:
                call.result.set_result(Spoken("played", call.at))
            await settle()

    def fail(self, error: Exception) -> Call:
        """The call in progress raises ``error``."""
        call = self.active
        call.result.set_exception(error)
        return call


@dataclass
class Events:
    """Collects ``AnnouncementEvent``s."""

    items: list[AnnouncementEvent] = field(default_factory=list)

    def __call__(self, event: AnnouncementEvent) -> None:
        """Keep ``event``."""
        self.items.append(event)

    def of(self, status: Status) -> list[AnnouncementEvent]:
        """The events with ``status``."""
        return [e for e in self.items if e.status is status]


async def settle(rounds: int = 20) -> None:
    """Let tasks run (no time passes on the manual clock)."""
    for _ in range(rounds):
        await asyncio.sleep(0)


def satellite(
    clock: ManualClock,
    *,
    hold: bool = False,
    online: bool = True,
    **options: object,
) -> tuple[SpeakerAnnouncer, SayRecorder, Events]:
    """A satellite announcer on ``clock`` with a recorder and an event list."""
    recorder = SayRecorder(clock, hold=hold)
    events = Events()
    announcer = SpeakerAnnouncer(
        "kitchen",
        recorder.say,
        recorder.stop,
        clock=clock,
        options=AnnounceOptions(**options),  # type: ignore[arg-type]
        on_event=events,
        online=online,
        wall=clock.now,
        prefetch=recorder.prefetched.append,
    )
    return announcer, recorder, events


def assert_balanced(announcer: SpeakerAnnouncer) -> None:
    """The invariant: received = spoken + coalesced + dropped + queued."""
    snap = announcer.snapshot()
    assert snap.balanced, snap
