"""Speech-to-text outside Home Assistant's pipeline, for follow-up fragments.

A request normally runs through the satellite entity's pipeline (its VAD, its
debug view). Fragments of one thought ("turn on the kitchen light" … "and the
living room lamp") can overlap: the next is already streaming while the last
is being transcribed, and the entity's pipeline cancels a running run when the
next one starts. So fragments go straight to the pipeline's speech-to-text
engine, one transcription each, and nothing is cancelled. The satellite ends
each fragment itself (its end-of-speech detection), so no VAD is needed here.
"""

from __future__ import annotations

from collections.abc import AsyncIterable

from homeassistant.components import stt
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError

from ..const import DOMAIN


async def transcribe(
    hass: HomeAssistant, pipeline: Pipeline, audio: AsyncIterable[bytes]
) -> str:
    """The pipeline's speech-to-text engine's text for ``audio`` ("" if none).

    Raises a translated ``HomeAssistantError`` when the pipeline has no engine.
    """
    engine = (
        stt.async_get_speech_to_text_engine(hass, pipeline.stt_engine)
        if pipeline.stt_engine
        else None
    )
    if engine is None:
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="no_stt_engine",
            translation_placeholders={"pipeline": pipeline.name},
        )
    # What satellites send (RequestAudio's format): 16 kHz, 16-bit, mono PCM.
    metadata = stt.SpeechMetadata(
        language=pipeline.stt_language or pipeline.language,
        format=stt.AudioFormats.WAV,
        codec=stt.AudioCodecs.PCM,
        bit_rate=stt.AudioBitRates.BITRATE_16,
        sample_rate=stt.AudioSampleRates.SAMPLERATE_16000,
        channel=stt.AudioChannels.CHANNEL_MONO,
    )
    if isinstance(engine, stt.SpeechToTextEntity):
        result = await engine.internal_async_process_audio_stream(metadata, audio)
    else:
        result = await engine.async_process_audio_stream(metadata, audio)
    if result.result is not stt.SpeechResultState.SUCCESS:
        return ""
    return result.text or ""
