"""Synthesize a response sentence by sentence through the pipeline's TTS engine.

Stock Home Assistant synthesizes the whole response before the first sample is
sent. Here sentence n+1 is already being synthesized while sentence n is sent
and played, so the first audio comes as soon as the first sentence is ready.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
import logging

from homeassistant.components import tts
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError

from .const import DOMAIN
from .core.wav import NotWavError, Pcm, read_wav

_LOGGER = logging.getLogger(__name__)

# WAV keeps the engine's own rate: no ffmpeg conversion per sentence (the
# satellite resamples).
TTS_OPTIONS = {tts.ATTR_PREFERRED_FORMAT: "wav"}


def tts_options(pipeline: Pipeline, voice: str | None = None) -> dict[str, str]:
    """Options for the pipeline's engine: WAV, and the voice if one is set.

    ``voice`` (picked on the satellite) wins over the pipeline's.
    """
    options = dict(TTS_OPTIONS)
    if voice := voice or pipeline.tts_voice:
        options[tts.ATTR_VOICE] = voice
    return options


def _engine(hass: HomeAssistant, pipeline: Pipeline) -> str:
    engine = pipeline.tts_engine
    if engine is None or tts.async_resolve_engine(hass, engine) is None:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="no_tts_engine",
            translation_placeholders={"pipeline": pipeline.name},
        )
    return engine


def start_synthesis(
    hass: HomeAssistant, pipeline: Pipeline, text: str, voice: str | None = None
) -> tts.ResultStream:
    """Start synthesizing ``text`` now.

    Home Assistant's TTS cache keeps the result (keyed by text, engine and
    options), so asking for the same text again later is instant.
    """
    stream = tts.async_create_stream(
        hass,
        _engine(hass, pipeline),
        pipeline.tts_language,
        tts_options(pipeline, voice),
    )
    stream.async_set_message(text)
    return stream


async def synthesize_sentences(
    hass: HomeAssistant,
    pipeline: Pipeline,
    sentences: list[str],
    voice: str | None = None,
) -> AsyncIterator[tuple[str, Pcm]]:
    """Yield ``(sentence, audio)`` in order, synthesizing one sentence ahead.

    A sentence the engine cannot say (wyoming-piper answers '… and 2 more.'
    with an error, or says nothing) is skipped with a warning: the rest of the
    utterance is still worth saying. Only when no sentence could be said does
    the first error reach the caller (the engine is down).
    """
    pending = [start_synthesis(hass, pipeline, s, voice) for s in sentences[:1]]
    skipped: list[tuple[str, str]] = []  # not yet reported
    first_error: HomeAssistantError | None = None
    spoke = False
    for index, sentence in enumerate(sentences):
        stream = pending.pop(0)
        if index + 1 < len(sentences):
            pending.append(start_synthesis(hass, pipeline, sentences[index + 1], voice))
        try:
            pcm = await read_stream(stream)
        except HomeAssistantError as err:
            first_error = first_error or err
            skipped.append((sentence, str(err)))
            continue
        if not pcm.audio:
            skipped.append((sentence, "no audio"))
            continue
        _report_skipped(skipped)
        spoke = True
        yield sentence, pcm
    if spoke:
        _report_skipped(skipped)
    elif first_error is not None:
        raise first_error


def _report_skipped(skipped: list[tuple[str, str]]) -> None:
    for sentence, why in skipped:
        _LOGGER.warning(
            "No speech for %r (%s); skipped, the rest is said", sentence, why
        )
    skipped.clear()


async def read_stream(stream: tts.ResultStream) -> Pcm:
    """The PCM of a finished TTS result.

    Home Assistant (2026.x) streams TTS: an engine that fails (a Wyoming server
    that is down refuses the connection) raises its own error out of the stream,
    whatever it is. It becomes the one error a request can fail with.
    """
    try:
        data = b"".join([chunk async for chunk in stream.async_stream_result()])
    except HomeAssistantError:
        raise
    except Exception as err:  # any engine's own failure
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="tts_failed",
            translation_placeholders={"error": str(err) or type(err).__name__},
        ) from err
    try:
        return read_wav(data)
    except NotWavError as err:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="tts_not_wav",
            translation_placeholders={"error": str(err)},
        ) from err
