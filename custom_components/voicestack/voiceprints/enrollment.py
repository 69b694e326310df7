"""Enroll a voice: a few phrases said on a satellite, kept as a voiceprint.

For each phrase the satellite says what to read ("Phrase 1 of 3. Please say: …"),
then records the next thing said (``voicestack-enroll``) and answers with its
GE2E embedding (``voicestack-voiceprint``); no audio leaves the satellite, and
no agent, LLM or cloud service takes part. The embeddings are kept per person
in ``library.py``, and every satellite's voice gate gets the new
voiceprint at once.

One enrollment runs at a time per satellite; a phrase that fails (nothing said,
too short, the satellite gone) ends it with a translated error naming the
phrase and why, and nothing is stored. One that succeeds comes with how it
was heard; the enrollment's quality (``core/enrollment_quality.py``: phrases
too short, too quiet, too noisy, unlike the others, and the margin over the
gate's cohort) is returned with the voice, for the options step and the
action's response to show.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
import logging
import uuid

from homeassistant.core import callback
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from wyoming.event import Event

from voicestack_protocol import (
    ENROLL,
    VOICEPRINT,
    PhraseHeard,
    VoiceprintReport,
    enroll_event,
    parse_voiceprint,
)

from ..const import DOMAIN
from ..core.enrollment_quality import EnrollmentQuality, assess
from ..runtime import SatelliteRuntime
from .library import EnrolledVoice, VoiceprintLibrary

_LOGGER = logging.getLogger(__name__)

DEFAULT_PHRASES = (
    "The quick brown fox jumps over the lazy dog.",
    "Turn on the kitchen lights and set the heating to twenty degrees.",
    "What will the weather be like tomorrow morning?",
)
PHRASE_MAX_S = 10.0  # the longest one phrase may take, once the prompt was said
ANSWER_GRACE_S = 5.0  # beyond that, for the satellite's embedding to arrive
# Why a phrase failed, in words (the error's placeholder).
FAILURES = {
    "no_speech": "nothing was said",
    "too_short": "it was too short: say the whole phrase",
    "unavailable": "the satellite's voice gate is not installed",
    "cancelled": "it was cancelled (a wake word, or the satellite went away)",
    "timeout": "the satellite did not answer",
}


@dataclass(frozen=True, slots=True)
class Enrollment:
    """An enrollment done: the voice kept, each phrase's seconds, its quality."""

    voice: EnrolledVoice
    seconds: list[float]
    quality: EnrollmentQuality


async def async_enroll(
    runtime: SatelliteRuntime,
    library: VoiceprintLibrary,
    person: str,
    phrases: Sequence[str] = DEFAULT_PHRASES,
) -> Enrollment:
    """Record ``phrases`` of ``person`` on the satellite; the voice and how good.

    ``HomeAssistantError`` (translated) when the satellite cannot enroll or a
    phrase fails; nothing is kept then.
    """
    hub, control = runtime.hub, runtime.barge_in
    if not (hub.connected and hub.link.supports(ENROLL) and control.gate_available):
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="voice_gate_unavailable",
            translation_placeholders={"name": hub.entry.title},
        )
    if control.enrolling.locked():
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key="enrollment_running",
            translation_placeholders={"name": hub.entry.title},
        )
    async with control.enrolling:
        embeddings: list[tuple[float, ...]] = []
        seconds: list[float] = []
        heard: list[PhraseHeard] = []
        for number, phrase in enumerate(phrases, 1):
            await runtime.speech.say(
                f"Phrase {number} of {len(phrases)}. Please say: {phrase}"
            )
            report = await _record_phrase(runtime)
            if report.embedding is None:
                raise HomeAssistantError(
                    translation_domain=DOMAIN,
                    translation_key="enroll_phrase_failed",
                    translation_placeholders={
                        "number": str(number),
                        "reason": FAILURES.get(report.error or "", "unknown"),
                    },
                )
            _LOGGER.info(
                "%s: phrase %d of %s enrolled (%.1f s)",
                hub.entry.title,
                number,
                person,
                report.seconds or 0.0,
            )
            embeddings.append(report.embedding)
            seconds.append(report.seconds or 0.0)
            heard.append(report.heard)
        await runtime.speech.say("Thank you. Your voice is enrolled.")
        voice = await library.async_enroll(person, embeddings, hub.entry.title)
    quality = assess(embeddings, seconds, heard)
    _LOGGER.info(
        "%s: %s enrolled, quality %s (margin %s), warnings %s",
        hub.entry.title,
        person,
        quality.rating,
        quality.margin,
        quality.warnings,
    )
    return Enrollment(voice, seconds, quality)


async def _record_phrase(runtime: SatelliteRuntime) -> VoiceprintReport:
    """Ask the satellite for one phrase's voiceprint and wait for it."""
    hub = runtime.hub
    enroll_id = uuid.uuid4().hex[:16]
    answer: asyncio.Future[VoiceprintReport] = hub.hass.loop.create_future()

    @callback
    def on_event(event: Event) -> None:
        if event.type != VOICEPRINT or answer.done():
            return
        try:
            report = parse_voiceprint(event)
        except ValueError as err:
            _LOGGER.warning("%s: ignoring %s", hub.entry.title, err)
            return
        if report.id == enroll_id:
            answer.set_result(report)

    unsubscribe = hub.async_subscribe_events(on_event)
    try:
        if not await hub.link.send(enroll_event(enroll_id, PHRASE_MAX_S)):
            return VoiceprintReport(enroll_id, None, None, "cancelled")
        async with asyncio.timeout(PHRASE_MAX_S + ANSWER_GRACE_S):
            return await answer
    except TimeoutError:
        return VoiceprintReport(enroll_id, None, None, "timeout")
    finally:
        unsubscribe()
