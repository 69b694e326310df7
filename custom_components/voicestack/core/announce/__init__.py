"""Announcements that never overlap: collect, merge, prioritize, say, count.

Home Assistant-free (only a ``Clock`` and two callables per speaker), so every
window, limit and fate is tested exactly with a manual clock.

Wiring (what the Home Assistant glue does)::

    announcer = Announcer(LoopClock(), options=AnnounceOptions.from_dict(options),
                          on_event=lambda e: hass.bus.async_fire(
                              "voicestack_announcement", e.as_dict()))
    # per satellite (config entry): its Speaker, the pipeline's TTS
    async def say(text: str, ids: tuple[str, ...]) -> Playback:
        sentences = split_sentences(text)
        return await hub.speaker.play(synthesize_sentences(hass, pipeline, sentences))
    speaker = announcer.add_speaker(entry.entry_id, say, hub.speaker.stop,
                                    online=hub.connected)
    speaker.set_online(True)   # in link_connected;  False in link_lost
    # any other speaker (a media player): the same rules, named by its key
    announcer.add_speaker("media_player.kitchen", player_say, player_stop,
                          kind=SpeakerKind.MEDIA_PLAYER)
    receipts = announcer.announce("Door open", priority="high", category="warning",
                                  source="automation.doors", targets=[entry_id, ...])
    # targets=None: every speaker of kind satellite (media players only when named)
    announcer.metrics().as_dict()             # HTTP view, diagnostics, sensors
    await announcer.remove_speaker(entry.entry_id)     # entry unload
    await announcer.shutdown(goodbye=True)             # Home Assistant stops

``say`` must be cancellable (``Speaker.play`` is: it flushes what it opened)
and report ``first_audio_at`` on the clock's time base (``Playback`` uses
``time.monotonic``, which is ``loop.time()``). Bad input raises ``AnnounceError``
with a ``code`` (and ``field``) to translate.

Modules: ``model`` (priorities, categories, events, receipts), ``options``
(defaults, validation), ``limits`` (token buckets, dedup), ``collector`` (bounded
waiting room), ``coalescer`` (windows, summaries, supersession), ``metrics``,
``orchestrator`` (one speaker: critical path, offline, shutdown) and
``announcer`` (all speakers, thread-safe entry point).
"""

from .announcer import Announcer, AnnouncerMetrics, warn_cut
from .metrics import MetricsSnapshot
from .model import (
    CATEGORIES,
    CATEGORY_PRIORITY,
    MAX_MESSAGE_LENGTH,
    AnnounceError,
    Announcement,
    AnnouncementEvent,
    AnnounceRequest,
    DropReason,
    InterruptReason,
    Priority,
    Receipt,
    ReceiptStatus,
    SayResult,
    SpeakerKind,
    Spoken,
    Status,
)
from .options import DEFAULT_TEMPLATES, AnnounceOptions
from .orchestrator import SpeakerAnnouncer

__all__ = [
    "CATEGORIES",
    "CATEGORY_PRIORITY",
    "DEFAULT_TEMPLATES",
    "MAX_MESSAGE_LENGTH",
    "AnnounceError",
    "AnnounceOptions",
    "AnnounceRequest",
    "Announcement",
    "AnnouncementEvent",
    "Announcer",
    "AnnouncerMetrics",
    "DropReason",
    "InterruptReason",
    "MetricsSnapshot",
    "Priority",
    "Receipt",
    "ReceiptStatus",
    "SayResult",
    "SpeakerAnnouncer",
    "SpeakerKind",
    "Spoken",
    "Status",
    "warn_cut",
]
