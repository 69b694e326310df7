"""Dispatch targets and the confirmation policy, Home Assistant-free."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
import logging
from pathlib import Path
from typing import Any

import pytest

from custom_components.voicestack.core.router import (
    AgentTarget,
    ConfirmPolicy,
    Delivery,
    EventTarget,
    NotesFileTarget,
    QueueTarget,
    Submission,
    TodoTarget,
    Touched,
    sensitive_entities,
)
from custom_components.voicestack.core.router.sensitive import mentions_sensitive
from custom_components.voicestack.core.router.targets import PartialDeliveryError
from devstack.manual_clock import ManualClock

NOON = datetime(2025, 6, 7, 12, 0, 5, tzinfo=UTC)
DICTATION = Submission(
    "dictation", ("Dear Anna,", "zero zero zero\nbye"), reason="said 'end dictation'"
)
LIST = Submission("inventory", ("milk", "eggs"), as_list=True, reason="said 'save'")


def test_submission_lines() -> None:
    assert DICTATION.text == "Dear Anna, zero zero zero\nbye"
    assert DICTATION.lines() == (DICTATION.text,)
    assert LIST.lines() == ("milk", "eggs")
    assert LIST.as_dict() == {
        "frame": "inventory",
        "text": "milk, eggs",
        "items": ["milk", "eggs"],
        "as_list": True,
        "reason": "said 'save'",
    }


async def test_notes_file_appends_timestamped_lines(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "notes.txt"
    target = NotesFileTarget(path, now=lambda: NOON)

    assert await target.deliver(DICTATION) == Delivery(speak="Saved to your notes.")
    await target.deliver(LIST)

    assert path.read_text(encoding="utf-8").splitlines() == [
        "2025-06-07T12:00:05+00:00\tdictation\tDear Anna, zero zero zero bye",
        "2025-06-07T12:00:05+00:00\tinventory\tmilk",
        "2025-06-07T12:00:05+00:00\tinventory\teggs",
    ]


async def test_event_target_fires_one_event() -> None:
    fired: list[tuple[str, dict[str, Any]]] = []
    target = EventTarget(lambda kind, data: fired.append((kind, data)))

    assert (await target.deliver(LIST)).speak == "Sent."
    assert fired == [("voicestack_dictation", LIST.as_dict())]


async def test_queue_target_keeps_an_entry_for_later() -> None:
    class Queue:
        def __init__(self) -> None:
            self.entries: list[dict[str, Any]] = []

        async def put(self, entry: dict[str, Any]) -> int:
            self.entries.append(entry)
            return len(self.entries)

    queue = Queue()
    target = QueueTarget(queue, now=lambda: NOON)

    assert (await target.deliver(LIST)).speak == "Saved for later; 1 waiting."
    assert queue.entries == [LIST.as_dict() | {"at": "2025-06-07T12:00:05+00:00"}]


async def test_todo_target_adds_one_item_per_line() -> None:
    added: list[str] = []

    async def add(text: str) -> None:
        added.append(text)

    assert (await TodoTarget(add).deliver(LIST)).speak == "Added 2 items to the list."
    assert (
        await TodoTarget(add).deliver(DICTATION)
    ).speak == "Added 1 item to the list."
    assert added == ["milk", "eggs", DICTATION.text]


async def test_todo_target_failures_say_how_far_they_got() -> None:
    async def add(text: str) -> None:
        if text == "eggs":
            raise ConnectionError("gone")

    with pytest.raises(PartialDeliveryError) as partial:
        await TodoTarget(add).deliver(LIST)
    assert partial.value.delivered == 1
    with pytest.raises(ConnectionError):
        await TodoTarget(add).deliver(Submission("inventory", ("eggs",), as_list=True))


async def test_agent_target_without_a_resolver_never_asks() -> None:
    assert await AgentTarget().deliver(
        Submission("base", ("unlock the door",))
    ) == Delivery(agent_text="unlock the door")


async def test_agent_target_asks_before_a_sensitive_request() -> None:
    async def resolve(text: str) -> list[Touched | str]:
        return (
            [Touched("cover.garage", "garage")] if "garage" in text else ["light.hall"]
        )

    target = AgentTarget(resolve)

    assert await target.deliver(Submission("base", ("Open the garage.",))) == Delivery(
        agent_text="Open the garage.",
        confirm="Should I open the garage? Say yes or no.",
    )
    assert (
        await target.deliver(Submission("base", ("hall light on",)))
    ).confirm is None


class BlockedCheck:
    """A resolver that answers only when the test says so (a check under load)."""

    def __init__(self, answer: list[Touched | str] | None = None) -> None:
        """It will answer ``answer`` once released."""
        self.answer = answer or []
        self.release = asyncio.Event()
        self.started: list[str] = []
        self.cancelled = 0

    async def __call__(self, text: str) -> list[Touched | str]:
        """Wait for the release; count a cancellation."""
        self.started.append(text)
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        return self.answer


async def settle() -> None:
    """Let every ready task run until it waits (no time passes)."""
    for _ in range(10):
        await asyncio.sleep(0)


async def deliver_late(target: AgentTarget, clock: ManualClock, text: str) -> Delivery:
    """Deliver ``text`` while the check never answers, up to the deadline."""
    task = asyncio.create_task(target.deliver(Submission("base", (text,))))
    await settle()
    clock.advance(target.resolve_timeout_s - 0.001)
    await settle()
    assert not task.done()  # the check still has time
    clock.advance(0.001)
    await settle()
    assert task.done()
    return task.result()


async def test_a_late_check_lets_a_plain_command_through_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock, check = ManualClock(), BlockedCheck()
    target = AgentTarget(check, clock=clock)

    with caplog.at_level(logging.WARNING):
        delivery = await deliver_late(target, clock, "Turn on the kitchen lights.")

    assert delivery == Delivery(agent_text="Turn on the kitchen lights.")
    assert check.cancelled == 1  # the late check is dropped, not left running
    assert clock.pending == 0
    assert "Could not tell within 2 s what 'Turn on the kitchen lights.'" in (
        caplog.text
    )
    assert "goes to the agent unasked" in caplog.text


@pytest.mark.parametrize(
    "text",
    [
        "Unlock the front door.",
        "lock up",
        "Disarm the alarm",
        "open the garage",
        "Close the gates!",
        "turn off the server",  # listed: switch.server
        "Schließ die Haustür auf",  # a sensitive entity's own name
        "öffne das Tor",  # an alias of it
    ],
)
async def test_a_late_check_still_asks_when_the_text_names_something_sensitive(
    text: str, caplog: pytest.LogCaptureFixture
) -> None:
    clock, check = ManualClock(), BlockedCheck()
    known = [
        Touched("lock.entrance", names=("Haustür",)),
        Touched("cover.yard", "gate", names=("Hoftor", "Tor")),
        Touched("light.flur", names=("Flur",)),
    ]
    target = AgentTarget(
        check,
        ConfirmPolicy(entities=frozenset({"switch.server"})),
        known=lambda: known,
        clock=clock,
    )

    with caplog.at_level(logging.WARNING):
        delivery = await deliver_late(target, clock, text)

    assert delivery.confirm is not None
    assert delivery.agent_text == text
    assert "needs a yes, so asking first" in caplog.text


async def test_a_late_check_asks_when_the_names_cannot_be_read() -> None:
    def broken() -> list[Touched]:
        raise RuntimeError("registry gone")

    clock = ManualClock()
    target = AgentTarget(BlockedCheck(), known=broken, clock=clock)

    delivery = await deliver_late(target, clock, "turn on the porch light")

    assert delivery.confirm == "Should I turn on the porch light? Say yes or no."


@pytest.mark.parametrize(
    ("answer", "confirm"),
    [
        (["lock.front_door"], "Should I unlock the front door? Say yes or no."),
        (["light.porch"], None),
    ],
)
async def test_a_check_the_agent_reuses_is_awaited_past_the_deadline(
    answer: list[Touched | str], confirm: str | None
) -> None:
    clock, check = ManualClock(), BlockedCheck(answer)
    target = AgentTarget(check, clock=clock, reused=lambda: True)
    task = asyncio.create_task(
        target.deliver(Submission("base", ("unlock the front door",)))
    )
    await settle()

    clock.advance(60.0)
    await settle()
    waited = not task.done()
    check.release.set()
    delivery = await task

    assert waited
    assert check.started == ["unlock the front door"]
    assert delivery == Delivery(agent_text="unlock the front door", confirm=confirm)


async def test_a_check_in_time_decides_even_when_the_text_names_a_door() -> None:
    clock, check = ManualClock(), BlockedCheck(["light.front_door_lamp"])
    target = AgentTarget(check, clock=clock)
    task = asyncio.create_task(
        target.deliver(Submission("base", ("turn on the front door lamp",)))
    )
    await settle()
    clock.advance(1.9)
    check.release.set()
    await settle()

    assert task.done()
    assert task.result() == Delivery(agent_text="turn on the front door lamp")
    assert clock.pending == 0


async def test_a_failing_check_asks(caplog: pytest.LogCaptureFixture) -> None:
    async def broken(text: str) -> list[str]:
        raise RuntimeError("recognizer crashed")

    delivery = await AgentTarget(broken).deliver(Submission("base", ("open sesame",)))

    assert delivery.confirm == "Should I open sesame? Say yes or no."
    assert "Could not tell what 'open sesame' would act on" in caplog.text


async def test_cancelling_a_delivery_cancels_its_check() -> None:
    clock, check = ManualClock(), BlockedCheck()
    target = AgentTarget(check, clock=clock)
    task = asyncio.create_task(target.deliver(Submission("base", ("lights on",))))
    await settle()

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert check.cancelled == 1
    assert clock.pending == 0


@pytest.mark.parametrize(
    ("text", "mentions"),
    [
        ("unlock the front door", True),
        ("is the back door locked?", True),
        ("arm the alarm", True),
        ("open the garages", True),
        ("turn on the kitchen light", False),
        ("open the blinds", False),
        ("switch on the doorbell light", False),  # "doorbell" is not "door"
        ("turn on the tv", False),
    ],
)
def test_the_first_pass_reads_action_and_cover_words(text: str, mentions: bool) -> None:
    assert mentions_sensitive(text, ConfirmPolicy()) is mentions


def test_the_first_pass_follows_the_policy() -> None:
    off = ConfirmPolicy(enabled=False)
    valves = ConfirmPolicy(domains=frozenset({"valve"}), cover_classes=frozenset())
    blind = [Touched("cover.patio", "blind", names=("Patio door",))]
    garage = [Touched("cover.patio", "garage", names=("Patio",))]

    assert not mentions_sensitive("unlock the front door", off)
    assert mentions_sensitive("close the water valve", valves)
    assert not mentions_sensitive("unlock the front door", valves)
    assert not mentions_sensitive("open the patio", valves, garage)
    assert mentions_sensitive("open the patio", ConfirmPolicy(), garage)
    # A blind named "Patio door" needs no yes, but "door" alone is a cover word.
    assert not mentions_sensitive("open patio", ConfirmPolicy(), blind)
    assert not mentions_sensitive("", ConfirmPolicy(), [Touched("lock.x", names=("",))])


@pytest.mark.parametrize(
    ("touched", "sensitive"),
    [
        (["lock.front_door"], ("lock.front_door",)),
        (["alarm_control_panel.home"], ("alarm_control_panel.home",)),
        ([Touched("cover.shed", "garage")], ("cover.shed",)),
        ([Touched("cover.patio", "door")], ("cover.patio",)),
        ([Touched("cover.front_gate", "blind")], ()),  # the device class decides
        (["cover.garage_door"], ("cover.garage_door",)),  # no class: by name
        (["cover.back_gate"], ("cover.back_gate",)),
        (["cover.living_room_blinds"], ()),
        (["cover.doormat_heater"], ()),
        (["light.kitchen", "switch.kettle"], ()),
        (["light.kitchen", "lock.shed"], ("lock.shed",)),
    ],
)
def test_sensitive_entities_by_default(
    touched: list[Any], sensitive: tuple[str, ...]
) -> None:
    assert sensitive_entities(touched, ConfirmPolicy()) == sensitive


def test_sensitive_entities_policy_is_configurable() -> None:
    mine = ConfirmPolicy(
        entities=frozenset({"switch.server"}), domains=frozenset({"lock"})
    )

    assert sensitive_entities(["switch.server", "alarm_control_panel.home"], mine) == (
        "switch.server",
    )
    assert sensitive_entities(["lock.front_door"], ConfirmPolicy(enabled=False)) == ()


def test_the_question_reads_naturally() -> None:
    policy = ConfirmPolicy()

    assert (
        policy.ask("Unlock the front door.")
        == "Should I unlock the front door? Say yes or no."
    )
    assert policy.ask("TV off!") == "Should I TV off? Say yes or no."
    assert policy.ask("Please unlock the front door.") == policy.ask(
        "unlock the front door, please"
    )
    assert policy.ask("Please unlock it") == "Should I unlock it? Say yes or no."
    assert ConfirmPolicy(question="Really {text}?").ask("open it") == "Really open it?"
