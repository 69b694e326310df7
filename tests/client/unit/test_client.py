"""VoiceClient against a fake Home Assistant on loopback, on a manual clock.

Backoff sleeps, the close deadline and ttl accounting run on the manual clock,
so every delay asserted here is exact and nothing really sleeps; the network
I/O is real (loopback websockets).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from devstack.waiting import wait_for
from tests.client.loopback_site import LoopbackSite
from tests.client.recording_clock import RecordingClock
from tests.client.unit.fake_home_assistant import (
    LOGIN,
    FakeHomeAssistant,
    fake_home_assistant,
)
from voicestack_client import (
    Announcement,
    AuthenticationError,
    Backoff,
    ClientClosedError,
    Delivery,
    DropReason,
    Receipt,
    ServiceValidationError,
    VoiceClient,
)

# random() always 0.5 with jitter 0.5: each delay is 3/4 of its ceiling.
DELAYS = [0.75, 1.5, 3.0, 6.0]


class Harness:
    """A fake Home Assistant, a manual clock, and clients with their deliveries."""

    def __init__(self, fake: FakeHomeAssistant, site: LoopbackSite) -> None:
        """Nothing delivered yet."""
        self.fake = fake
        self.site = site
        self.clock = RecordingClock()
        self.deliveries: list[Delivery] = []

    def client(self, token: str = LOGIN, **kwargs: object) -> VoiceClient:
        """A client of the fake on the manual clock; ``kwargs`` override."""
        options: dict[str, object] = {
            "clock": self.clock,
            "backoff": Backoff(initial_s=1, max_s=8, jitter=0.5, random=lambda: 0.5),
            "on_delivery": self.deliveries.append,
        }
        return VoiceClient(self.site.url, token, **(options | kwargs))  # type: ignore[arg-type]

    async def reconnect(self, client: VoiceClient) -> None:
        """Let the first backoff delay pass; wait until the queue is sent."""
        self.clock.advance(DELAYS[0])
        await wait_for(lambda: client.pending == 0, 5, "queue sent")

    async def sleeping(self, count: int, timers: int = 1) -> None:
        """Wait until the clock was asked for ``count`` delays and ``timers`` run."""
        await wait_for(
            lambda: len(self.clock.delays) == count and self.clock.pending == timers,
            5,
            f"delay {count}",
        )


@pytest.fixture
async def home() -> AsyncIterator[Harness]:
    async with fake_home_assistant() as (fake, site):
        yield Harness(fake, site)


async def test_a_message_is_sent_with_its_fields_and_receipts_come_back(
    home: Harness,
) -> None:
    async with home.client(source="doorbell") as client:
        await client.announce(
            "Someone is at the door.",
            priority="high",
            category="warning",
            target="assist_satellite.hall",
            dedup_key="door",
            ttl=30,
        )
        await wait_for(lambda: home.deliveries, 5, "delivered")

    assert home.fake.calls == [
        {
            "message": "Someone is at the door.",
            "priority": "high",
            "category": "warning",
            "source": "doorbell",
            "entity_id": ["assist_satellite.hall"],
            "dedup_key": "door",
            "ttl": 30,
        }
    ]
    (delivery,) = home.deliveries
    assert delivery.receipts == (Receipt("kitchen", "fake-1", "queued"),)
    assert delivery.error is None
    assert (client.stats.queued, client.stats.sent, client.stats.calls) == (1, 1, 1)


async def test_a_refused_token_stops_the_client_and_is_never_retried(
    home: Harness,
) -> None:
    client = home.client("not-the-token")
    await client.announce("Hello.")
    client.start()
    await wait_for(lambda: client.failure is not None, 5, "the refusal")
    home.clock.advance(3600)  # an hour later: still no second try
    with pytest.raises(AuthenticationError) as refused:
        await client.announce("Again.")
    report = await client.close()

    assert home.fake.logins == 1
    assert client.stats.connect_attempts == 1
    assert home.clock.delays == []  # no backoff: nothing scheduled
    assert "Invalid access token or password" in str(refused.value)
    assert report.error is client.failure
    assert report.unsent == (Announcement("Hello."),)


async def test_the_context_manager_raises_a_refused_token(home: Harness) -> None:
    with pytest.raises(AuthenticationError):
        async with home.client("not-the-token") as client:
            await wait_for(lambda: client.failure is not None, 5, "the refusal")


async def test_a_validation_error_comes_back_with_home_assistants_message(
    home: Harness,
) -> None:
    async with home.client() as client:
        await wait_for(lambda: client.connected, 5, "connected")
        await client.announce("Nobody hears this.", priority="urgent")
        await client.announce("This one is fine.")
        await wait_for(lambda: len(home.deliveries) == 2, 5, "both answered")

    refused, accepted = home.deliveries
    assert isinstance(refused.error, ServiceValidationError)
    assert refused.error.message == "Validation error: Unknown priority: 'urgent'"
    assert refused.error.translation_key == "announce_invalid_priority"
    assert accepted.error is None
    assert home.fake.messages() == ["This one is fine."]
    assert client.stats.dropped == {DropReason.REJECTED: 1}


async def test_while_down_it_backs_off_then_sends_the_backlog_merged_once(
    home: Harness,
) -> None:
    await home.site.stop()
    client = home.client()
    client.start()
    await client.announce("Backup started.", source="backup", priority="low")
    await client.announce("Someone is at the door.", source="doorbell")
    await client.announce("Disk almost full.", source="backup", priority="high")
    await client.announce("Backup finished.", source="backup")
    await home.sleeping(1)
    home.clock.advance(DELAYS[0])
    await home.sleeping(2)
    await home.site.start()
    home.clock.advance(DELAYS[1])
    await wait_for(lambda: client.pending == 0, 5, "backlog sent")
    sent = [(c["message"], c["priority"]) for c in home.fake.calls]
    await home.site.stop()  # a success resets the backoff
    await home.sleeping(3)
    await client.close()

    assert sent == [
        ("3 messages from backup. The latest: Backup finished.", "high"),
        ("Someone is at the door.", "normal"),
    ]
    assert home.clock.delays == [*DELAYS[:2], DELAYS[0]]
    assert client.stats.connect_attempts == 3
    assert (client.stats.sent, client.stats.coalesced, client.stats.calls) == (4, 2, 2)


async def test_a_restart_while_idle_reconnects_and_sends_the_queue_once(
    home: Harness,
) -> None:
    async with home.client(source="backup") as client:
        await client.announce("Backup started.")
        await wait_for(lambda: home.fake.calls, 5, "first sent")
        await home.site.stop()
        await home.sleeping(1)
        assert not client.connected
        await client.announce("Backup running.")
        await client.announce("Backup finished.")
        await home.site.start()
        await home.reconnect(client)

    assert home.fake.messages() == [
        "Backup started.",
        "2 messages from backup. The latest: Backup finished.",
    ]
    assert client.stats.connects == 2
    assert home.fake.logins == 2


async def test_a_message_in_flight_when_the_connection_drops_is_sent_again(
    home: Harness,
) -> None:
    home.fake.hold_answers = True
    async with home.client() as client:
        await client.announce("Garage open.")
        await wait_for(lambda: home.fake.calls, 5, "in flight")
        await home.site.stop()
        await home.sleeping(1)
        home.fake.hold_answers = False
        await home.site.start()
        await home.reconnect(client)

    assert home.fake.messages() == ["Garage open.", "Garage open."]  # at least once
    assert client.stats.sent == 1


async def test_voicestack_not_loaded_yet_is_retried_like_a_lost_connection(
    home: Harness,
) -> None:
    home.fake.announce_loaded = False
    async with home.client() as client:
        await client.announce("Hello.")
        await home.sleeping(1)
        assert "is VoiceStack loaded?" in str(client.last_error)
        home.fake.announce_loaded = True
        await home.reconnect(client)

    assert home.fake.messages() == ["Hello."]
    assert client.stats.dropped_total == 0


async def test_ttl_counts_the_time_spent_waiting(home: Harness) -> None:
    await home.site.stop()
    client = home.client(backoff=Backoff(initial_s=10, jitter=0))
    client.start()
    await client.announce("Stale.", source="a", ttl=5)
    await client.announce("Fresh.", source="b", ttl=60)
    await client.announce("Forever.", source="c")
    await home.sleeping(1)
    await home.site.start()
    home.clock.advance(10)
    await wait_for(lambda: client.pending == 0, 5, "sent")
    await client.close()

    assert [(c["message"], c.get("ttl")) for c in home.fake.calls] == [
        ("Fresh.", 50),
        ("Forever.", None),
    ]
    assert client.stats.dropped == {DropReason.EXPIRED: 1}


async def test_close_sends_what_is_queued_when_connected(home: Harness) -> None:
    client = home.client()
    client.start()
    for n in range(3):
        await client.announce(f"Message {n}.", source=f"s{n}")
    report = await client.close(deadline_s=5)

    assert report.complete
    assert home.fake.messages() == ["Message 0.", "Message 1.", "Message 2."]
    with pytest.raises(ClientClosedError):
        await client.announce("Too late.")


async def test_close_reports_what_it_could_not_send_by_its_deadline(
    home: Harness,
) -> None:
    await home.site.stop()
    client = home.client()
    client.start()
    await client.announce("One.", source="a")
    await client.announce("Two.", source="b")
    await home.sleeping(1)
    closing = asyncio.ensure_future(client.close(deadline_s=5))
    await home.sleeping(2, timers=2)  # the backoff and the deadline
    home.clock.advance(4)  # the backoff's 0.75 s pass: one more failed attempt
    await home.sleeping(3, timers=2)
    not_yet = closing.done()
    home.clock.advance(1)
    report = await closing

    assert not not_yet
    assert home.clock.delays == [DELAYS[0], 5, DELAYS[1]]
    assert report.unsent == (
        Announcement("One.", source="a"),
        Announcement("Two.", source="b"),
    )
    assert report.error is None
    assert client.stats.dropped == {DropReason.CLOSED: 2}
    assert home.fake.calls == []


@pytest.mark.parametrize(
    ("url", "token", "error"),
    [
        ("ftp://ha.local", LOGIN, "not a Home Assistant address"),
        ("http://", LOGIN, "not a Home Assistant address"),
        ("http://ha.local:8123", "  ", "token must not be empty"),
    ],
)
def test_bad_arguments_fail_at_once(url: str, token: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        VoiceClient(url, token)


async def test_a_call_without_an_answer_counts_as_a_lost_connection(
    home: Harness,
) -> None:
    home.fake.hold_answers = True  # Home Assistant vanished without closing
    async with home.client(answer_timeout_s=0.2) as client:
        await client.announce("Anyone there?")
        await home.sleeping(1)
        error = str(client.last_error)
        home.fake.hold_answers = False
        await home.reconnect(client)

    assert error == "no answer from Home Assistant within 0.2 s"
    assert home.fake.messages() == ["Anyone there?", "Anyone there?"]
