"""voicestack-client: announce through VoiceStack from outside Home Assistant.

``VoiceClient`` queues announcements and delivers them over Home Assistant's
websocket API (``voicestack.announce``), reconnecting with backoff and merging
what piled up while Home Assistant was away. See docs/client.md.
"""

from .backoff import Backoff
from .client import CloseReport, VoiceClient
from .clock import Clock, EventLoopClock
from .coalesce import summary
from .connection import HomeAssistantConnection, websocket_url
from .errors import (
    AuthenticationError,
    ClientClosedError,
    ConnectionLostError,
    ServiceCallError,
    ServiceNotFoundError,
    ServiceValidationError,
    VoiceStackClientError,
)
from .model import PRIORITIES, Announcement, Delivery, Receipt
from .outbox import OverflowPolicy
from .stats import ClientStats, DropReason

__all__ = [
    "PRIORITIES",
    "Announcement",
    "AuthenticationError",
    "Backoff",
    "ClientClosedError",
    "ClientStats",
    "Clock",
    "CloseReport",
    "ConnectionLostError",
    "Delivery",
    "DropReason",
    "EventLoopClock",
    "HomeAssistantConnection",
    "OverflowPolicy",
    "Receipt",
    "ServiceCallError",
    "ServiceNotFoundError",
    "ServiceValidationError",
    "VoiceClient",
    "VoiceStackClientError",
    "summary",
    "websocket_url",
]
