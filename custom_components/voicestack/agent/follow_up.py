"""Follow-up sessions for the agent's devices: the satellite's rules, HA's mechanism.

A VoiceStack satellite bounds its follow-up turns with ``FollowUpLoop``
(``core/conversation/follow_up.py``); the agent runs the same loop per device,
with the entry's *Conversations* options, so a Voice PE or the companion app
gets the same turn limit, stop words and memory policy:

- Home Assistant does not tell an agent whether a wake word started a request.
  A request is the next turn of its device's session when that session is open
  (the last answer went on, and its window has not passed) and it continues
  the conversation that answer was given in (the ``conversation_id`` Home
  Assistant passes); anything else starts a new session.
- The window counts from when the device finished saying the answer: through
  an assist satellite it waits while that entity is ``responding`` and starts
  when it leaves (a text client's counts from the answer).
- The wrapped agent's conversation follows the memory policy (``conversation_id``
  of the loop: the session's, or a new one every turn). The first turn after
  Home Assistant's ``start_conversation`` (it passes the extra system prompt
  once) continues the conversation Home Assistant opened for it, as on a
  satellite.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from homeassistant.components import conversation
from homeassistant.components.assist_satellite.entity import AssistSatelliteState
from homeassistant.config_entries import ConfigEntry
from homeassistant.core import (
    CALLBACK_TYPE,
    Event,
    EventStateChangedData,
    HomeAssistant,
    State,
    callback,
)
from homeassistant.helpers.event import async_track_state_change_event

from ..core.clock import Clock, LoopClock
from ..core.conversation.follow_up import EndReason, FollowUpLoop, Session
from ..core.conversation.policy import FollowUpPolicy
from ..follow_up_shared import fire_session_ended, follow_up_policy


class DeviceFollowUp:
    """One device's follow-up sessions, driven request by request."""

    def __init__(
        self,
        hass: HomeAssistant,
        policy: FollowUpPolicy,
        on_end: Callable[[DeviceFollowUp, Session, EndReason], None],
        clock: Clock | None = None,
    ) -> None:
        """No session yet; ``on_end`` hears each one end, once.

        ``clock`` runs the window (Home Assistant's loop unless a test's).
        """
        self._hass = hass
        self.loop = FollowUpLoop(
            policy, clock or LoopClock(hass.loop), lambda s, r: on_end(self, s, r)
        )
        self.device_id: str | None = None
        self.satellite_id: str | None = None
        self._continues: str | None = None  # the conversation a next turn comes in
        self._watch: CALLBACK_TYPE | None = None

    def begin(self, user_input: conversation.ConversationInput) -> Session:
        """A request from this device: the open session's next turn, or a new one."""
        self._stop_watching()
        self.device_id, self.satellite_id = (
            user_input.device_id,
            user_input.satellite_id,
        )
        goes_on = (
            self.loop.status.open
            and user_input.conversation_id is not None
            and user_input.conversation_id == self._continues
        )
        return self.loop.begin_turn(woken=not goes_on)

    def is_stop(self, session: Session, text: str) -> bool:
        """A stop phrase said in a follow-up turn (never right after a wake word)."""
        return session.turn > 1 and self.loop.is_stop(text)

    def wrapped_conversation(
        self, session: Session, user_input: conversation.ConversationInput
    ) -> str | None:
        """The conversation the wrapped agent continues (None: a new one)."""
        if session.turn == 1 and user_input.extra_system_prompt is not None:
            return user_input.conversation_id
        return self.loop.conversation_id()

    def answered(self, conversation_id: str, agent_asked_back: bool) -> float | None:
        """The answer is given in ``conversation_id``: the window, or None (ended)."""
        window = self.loop.answered(agent_asked_back)
        self._continues = conversation_id if window is not None else None
        if window is not None and self.satellite_id is not None:
            self._restart_when_said(self.satellite_id, agent_asked_back)
        return window

    def close(self) -> None:
        """The entry unloads or the device's router went: an open session is cancelled."""
        self._stop_watching()
        self.loop.cancel()

    def _restart_when_said(self, satellite_id: str, agent_asked_back: bool) -> None:
        """The window waits while the satellite says the answer, and opens after.

        While the entity is ``responding`` the session is held (no silence
        timer: Home Assistant's ``wyoming`` integration stays there for the
        audio's length plus its own margins); when it leaves, the window starts
        afresh. An answer with nothing to say never responds: the window then
        runs from the answer.
        """
        session = self.loop.status.session_id

        def saying(state: State | None) -> bool:
            return state is not None and state.state == AssistSatelliteState.RESPONDING

        @callback
        def state_changed(event: Event[EventStateChangedData]) -> None:
            if self.loop.status.session_id != session:
                self._stop_watching()
            elif saying(event.data["new_state"]):
                self.loop.hold()
            elif saying(event.data["old_state"]):
                self._stop_watching()
                self.loop.answered(agent_asked_back)  # the window opens now

        self._watch = async_track_state_change_event(
            self._hass, [satellite_id], state_changed
        )
        if saying(self._hass.states.get(satellite_id)):
            self.loop.hold()

    def _stop_watching(self) -> None:
        if self._watch is not None:
            self._watch()
            self._watch = None


class AgentFollowUps:
    """The follow-up sessions of an agent entry's devices, by device key."""

    def __init__(self, hass: HomeAssistant, entry: ConfigEntry) -> None:
        """The entry's policy (Home Assistant's language for default phrases)."""
        self._hass = hass
        self._policy = follow_up_policy(
            entry.options, hass.config.language, entry.title
        )
        self._devices: dict[str, DeviceFollowUp] = {}

    def for_device(self, key: str, live: Collection[str]) -> DeviceFollowUp:
        """``key``'s sessions; those of devices without a router now (``live``) go."""
        for gone in [k for k in self._devices if k != key and k not in live]:
            self._devices.pop(gone).close()
        found = self._devices.get(key)
        if found is None:
            found = self._devices[key] = DeviceFollowUp(
                self._hass, self._policy, self._ended
            )
        return found

    def close(self) -> None:
        """Unload: every open session ends as cancelled."""
        devices = list(self._devices.values())
        self._devices.clear()
        for device in devices:
            device.close()

    def _ended(
        self, device: DeviceFollowUp, session: Session, reason: EndReason
    ) -> None:
        fire_session_ended(
            self._hass, device.satellite_id, device.device_id, session, reason
        )
