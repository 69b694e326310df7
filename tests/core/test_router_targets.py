"""Dispatch targets and the confirmation policy, Home Assistant-free."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
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
from custom_components.voicestack.core.router.targets import PartialDeliveryError

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


async def test_agent_target_asks_when_the_check_hangs() -> None:
    async def hang(text: str) -> list[str]:
        await asyncio.sleep(10)
        return []

    target = AgentTarget(hang, resolve_timeout_s=0.01)

    delivery = await target.deliver(Submission("base", ("open sesame",)))

    assert delivery.confirm == "Should I open sesame? Say yes or no."


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
