"""The sensitive-entity check under CPU load, end to end through a real satellite.

Real satellite subprocess with a live mic, whisper, Piper, Home Assistant and
its default conversation agent. Under load, the default agent's recognizer is
slow; here Home Assistant's own matcher (``hassil.recognize_best`` as the
default agent calls it) runs behind a 0.5 s pause in its executor thread, and
the check's deadline is 0.05 s, so every check runs out of time, as it did on
a loaded machine. Nothing is mocked away: the matcher still decides, and each
of its runs is counted.

- With the default agent, the check's recognition is the agent's: a plain
  command is recognized once and carried out unasked; a lock is still asked about.
- With an LLM agent (scripted: none can run here), the check is cut at its
  deadline: a plain command goes to the agent unasked with a warning, a command
  that names a lock is asked about from its words alone.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AsyncExitStack
import logging
from pathlib import Path
import threading
import time
from typing import Any

from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.components.conversation import default_agent
from homeassistant.components.lock import LockState
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant
import pytest

from tests.integration.agents import use_agent
from tests.integration.assist import FRONT_DOOR, LIGHT, record_unlocks, words
from tests.integration.dialog import Dialog, open_dialog

pytestmark = pytest.mark.e2e

RECOGNIZE_DELAY_S = 0.5  # Home Assistant's matcher on a loaded machine
DEADLINE_S = 0.05  # the check's deadline: no recognition meets it
QUESTION = "Should I unlock the front door? Say yes or no."


class SlowRecognizer:
    """The default agent's real matcher behind a pause; counts what it matches."""

    def __init__(self, real: Callable[..., Any]) -> None:
        """Wrap ``real`` (``hassil.recognize_best``)."""
        self.real = real
        self.texts: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, text: str, *args: Any, **kwargs: Any) -> Any:
        """Wait as a loaded CPU would, then match for real (executor thread)."""
        with self._lock:
            self.texts.append(text)
        time.sleep(RECOGNIZE_DELAY_S)
        return self.real(text, *args, **kwargs)


@pytest.fixture
def recognizer(monkeypatch: pytest.MonkeyPatch) -> SlowRecognizer:
    """Slow down (and count) the default agent's matcher."""
    slow = SlowRecognizer(default_agent.recognize_best)
    monkeypatch.setattr(default_agent, "recognize_best", slow)
    return slow


async def loaded_dialog(
    hass: HomeAssistant, stack: AsyncExitStack, tmp_path: Path
) -> Dialog:
    """A satellite whose sensitive check has a deadline nothing meets."""
    dialog = await open_dialog(hass, stack, tmp_path)
    dialog.runtime.modes.router.kit.hooks.agent.resolve_timeout_s = DEADLINE_S
    return dialog


async def test_the_default_agent_recognizes_a_command_once_and_does_not_ask(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    recognizer: SlowRecognizer,
) -> None:
    dialog = await loaded_dialog(hass, stack, tmp_path)

    said = await dialog.wake_and_say("Turn on the kitchen light.")

    assert said.data["sent_to_agent"], dialog.heard()
    assert hass.states.get(LIGHT).state == STATE_ON
    # The check's recognition is the one the agent used: the text matched once.
    assert recognizer.texts == [said.data["text"].strip()]
    (reply,) = dialog.replies()
    assert "should" not in words(reply)


async def test_the_default_agent_still_asks_about_a_lock_under_load(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    recognizer: SlowRecognizer,
) -> None:
    unlocks = record_unlocks(hass)
    dialog = await loaded_dialog(hass, stack, tmp_path)

    asked = await dialog.wake_and_say("Please unlock the front door.")

    assert not asked.data["sent_to_agent"], dialog.heard()
    assert asked.data["listen"]
    assert recognizer.texts == [asked.data["text"].strip()]
    assert hass.states.get(FRONT_DOOR).state == LockState.LOCKED
    assert unlocks == []
    (question,) = dialog.replies()
    assert words(question) == words(QUESTION)


async def test_an_llm_agent_gets_plain_commands_unasked_and_locks_asked(
    hass: HomeAssistant,
    tmp_path: Path,
    stack: AsyncExitStack,
    pipeline: Pipeline,
    recognizer: SlowRecognizer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    agent = await use_agent(hass, stack, pipeline, lambda _input: ("Okay.", False))
    dialog = await loaded_dialog(hass, stack, tmp_path)

    with caplog.at_level(logging.WARNING):
        plain = await dialog.wake_and_say("Turn on the kitchen light.")
        lock = await dialog.wake_and_say("Please unlock the front door.")

    assert plain.data["sent_to_agent"], dialog.heard()
    assert agent.texts == [plain.data["text"].strip()]  # the lock never did
    assert not lock.data["sent_to_agent"]
    assert hass.states.get(LIGHT).state == STATE_OFF  # the scripted agent acts not
    assert "it names nothing that needs a yes, so it goes to the agent" in caplog.text
    assert "it names something that needs a yes, so asking first" in caplog.text
    okay, question = dialog.replies()
    assert words(okay) == ["okay"]
    assert words(question) == words(QUESTION)
