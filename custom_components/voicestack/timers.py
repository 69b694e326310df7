"""Home Assistant's timer events as the Wyoming events a satellite shows and rings.

The same mapping as HA's own wyoming integration: started (with the name and the
duration as said), updated (paused, resumed, time added), cancelled, finished.
"""

from __future__ import annotations

from homeassistant.components import intent
from wyoming.event import Event
from wyoming.timer import TimerCancelled, TimerFinished, TimerStarted, TimerUpdated


def timer_event(event_type: intent.TimerEventType, timer: intent.TimerInfo) -> Event:
    """The Wyoming event for ``event_type`` of ``timer``."""
    if event_type is intent.TimerEventType.STARTED:
        return TimerStarted(
            id=timer.id,
            total_seconds=timer.seconds,
            name=timer.name,
            start_hours=timer.start_hours,
            start_minutes=timer.start_minutes,
            start_seconds=timer.start_seconds,
        ).event()
    if event_type is intent.TimerEventType.UPDATED:
        return TimerUpdated(
            id=timer.id, is_active=timer.is_active, total_seconds=timer.seconds
        ).event()
    if event_type is intent.TimerEventType.CANCELLED:
        return TimerCancelled(id=timer.id).event()
    return TimerFinished(id=timer.id).event()
