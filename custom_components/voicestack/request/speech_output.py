"""Say text on a satellite, synthesized sentence by sentence.

Sentence n+1 is already being synthesized while sentence n is sent and played,
so the first audio comes as soon as the first sentence is ready; text that is
still being written (``say_stream``: an agent streaming its answer) is spoken
from its first complete sentence on. Each sentence is its own TTS request, so
its audio's place in the stream (resume at a sentence) and its length (the
speaker's busy time) are known exactly. Home Assistant's TTS streams each
request from the engine (Wyoming ``synthesize-start``/``-chunk``/``-stop`` when
the server supports it); wyoming-piper sends a sentence's audio only once the
sentence is synthesized, so reading a sentence whole costs about 5 ms here.

``SpeechOutput`` is the one way text becomes sound on a satellite: voice
responses and announcements alike go through its ``say``, and so through the
satellite's one Speaker. Whoever shows that the satellite is talking (the
assist satellite entity's "responding" state) subscribes to it.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from enum import StrEnum
import logging

from homeassistant.components import tts
from homeassistant.components.assist_pipeline import Pipeline
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError

from ..barge_in.control import BargeInControl
from ..const import DOMAIN
from ..core.sentences import SentenceSplitter, split_sentences
from ..core.speaker import Playback, PlaybackOutcome
from ..core.wav import NotWavError, Pcm, read_wav
from ..hub import SatelliteHub
from ..subscriptions import Subscribers

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
    sentences: Iterable[str] | AsyncIterable[str],
    voice: str | None = None,
) -> AsyncIterator[tuple[str, Pcm]]:
    """Yield ``(sentence, audio)`` in order, synthesizing one sentence ahead.

    ``sentences`` may still be coming (an agent writing its answer): each is
    sent to the engine as soon as it is known and the one before it is being
    read, so the first sentence is heard while the agent writes the rest.

    A sentence the engine cannot say (wyoming-piper answers '… and 2 more.'
    with an error, or says nothing) is skipped with a warning: the rest of the
    utterance is still worth saying. Only when no sentence could be said does
    the first error reach the caller (the engine is down).
    """
    started: asyncio.Queue[tuple[str, tts.ResultStream] | Exception | None] = (
        asyncio.Queue()
    )
    ahead = asyncio.Semaphore(2)  # the sentence being read and the next one

    async def start_each() -> None:
        try:
            async for sentence in _aiter(sentences):
                await ahead.acquire()
                stream = start_synthesis(hass, pipeline, sentence, voice)
                started.put_nowait((sentence, stream))
        except Exception as err:  # noqa: BLE001 - handed to the reader below
            started.put_nowait(err)
        else:
            started.put_nowait(None)

    starter = hass.async_create_background_task(
        start_each(), "voicestack synthesis", eager_start=True
    )
    skipped: list[tuple[str, str]] = []  # not yet reported
    first_error: HomeAssistantError | None = None
    spoke = False
    try:
        while (item := await started.get()) is not None:
            if isinstance(item, Exception):
                raise item
            sentence, stream = item
            try:
                pcm = await read_stream(stream)
            except HomeAssistantError as err:
                first_error = first_error or err
                skipped.append((sentence, str(err)))
                continue
            finally:
                ahead.release()
            if not pcm.audio:
                skipped.append((sentence, "no audio"))
                continue
            _report_skipped(skipped)
            spoke = True
            yield sentence, pcm
    finally:
        starter.cancel()
    if spoke:
        _report_skipped(skipped)
    elif first_error is not None:
        raise first_error


async def _aiter[T](items: Iterable[T] | AsyncIterable[T]) -> AsyncIterator[T]:
    """``items`` as an async iterator, whichever they are."""
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


async def sentences_of(pieces: AsyncIterable[str]) -> AsyncIterator[str]:
    """The sentences of text that comes in ``pieces``, each as soon as it is complete."""
    splitter = SentenceSplitter()
    async for piece in pieces:
        for sentence in splitter.add(piece):
            yield sentence
    for sentence in splitter.finish():
        yield sentence


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


class Speaking(StrEnum):
    """What ``SpeechOutput`` tells its subscribers."""

    STARTED = "started"  # audio for a text is on its way
    FINISHED = "finished"  # the text was said (or there was nothing to say)


class SpeechOutput:
    """Says text on one satellite, through its Speaker, in its chosen voice."""

    def __init__(
        self, hass: HomeAssistant, hub: SatelliteHub, barge_in: BargeInControl
    ) -> None:
        """The pipeline and the TTS voice are looked up at each ``say``.

        ``barge_in`` tracks the responses speech may interrupt.
        """
        self._hass = hass
        self._hub = hub
        self.barge_in = barge_in
        self._subscribers = Subscribers[Callable[[Speaking], None]]()

    @callback
    def async_subscribe(self, listener: Callable[[Speaking], None]) -> CALLBACK_TYPE:
        """Hear when saying starts and finishes; the remover."""
        return self._subscribers.add(listener)

    async def say(
        self, text: str, preamble: Pcm | None = None, *, response: bool = False
    ) -> Playback:
        """Say ``text``; ``preamble`` (a preannounce sound) plays first, same turn.

        ``response``: a voice response, which speech may interrupt (barge-in,
        when the satellite can and its switch is on). Returns how the playback
        ended. Raises ``HomeAssistantError`` when the pipeline has no TTS
        engine, or the engine said nothing at all.
        """
        sentences = split_sentences(text)
        if not sentences:
            self._tell(Speaking.FINISHED)
            return Playback(outcome=PlaybackOutcome.EMPTY)
        return await self._say(sentences, text, preamble, response)

    async def say_stream(
        self, pieces: AsyncIterable[str], *, response: bool = False
    ) -> Playback:
        """Say text that is still being written, sentence by sentence as it comes.

        An agent that streams its answer is heard from its first sentence on,
        while it writes the rest. Otherwise as ``say``.
        """
        sentences = sentences_of(pieces)
        first = await anext(sentences, None)
        if first is None:
            self._tell(Speaking.FINISHED)
            return Playback(outcome=PlaybackOutcome.EMPTY)
        return await self._say(_after(first, sentences), None, None, response)

    async def _say(
        self,
        sentences: Iterable[str] | AsyncIterable[str],
        text: str | None,
        preamble: Pcm | None,
        response: bool,
    ) -> Playback:
        """Say ``sentences`` of ``text`` (None: still being written)."""
        self._tell(Speaking.STARTED)
        speech = synthesize_sentences(
            self._hass, self._hub.pipeline(), sentences, self._hub.tts_voice
        )
        parts = speech if preamble is None else after_preamble(preamble, speech)
        interruptible = response and self.barge_in.enabled
        if interruptible:
            parts = self.barge_in.respond(text, parts)
        try:
            playback = await self._hub.speaker.play(parts, interruptible=interruptible)
        finally:
            if interruptible:
                self.barge_in.response_over()
            self._tell(Speaking.FINISHED)
        _LOGGER.debug(
            "%s: said %d sentence(s), %.1f s, %s",
            self._hub.entry.title,
            len(playback.sentences),
            playback.seconds,
            playback.outcome,
        )
        return playback

    async def play(
        self, text: str, media: Pcm, preamble: Pcm | None = None
    ) -> Playback:
        """Play ``media`` (shown as ``text``, if any) when it is its turn.

        Media announcements wait for the Speaker like everything else: never
        "busy". ``preamble`` (a preannounce sound) plays first, same turn.
        """

        async def parts() -> AsyncIterator[tuple[str, Pcm]]:
            yield text, media

        self._tell(Speaking.STARTED)
        try:
            return await self._hub.speaker.play(
                parts() if preamble is None else after_preamble(preamble, parts())
            )
        finally:
            self._tell(Speaking.FINISHED)

    def prefetch(self, text: str) -> None:
        """Synthesize the first sentence of ``text`` ahead of time.

        It lands in Home Assistant's TTS cache: a lone announcement waits out
        the merge window anyway, and is then said at once.
        """
        if sentences := split_sentences(text):
            try:
                start_synthesis(
                    self._hass, self._hub.pipeline(), sentences[0], self._hub.tts_voice
                )
            except HomeAssistantError as err:
                _LOGGER.debug("No prefetch: %s", err)

    def _tell(self, news: Speaking) -> None:
        for listener in self._subscribers:
            listener(news)


async def after_preamble(
    preamble: Pcm, parts: AsyncIterator[tuple[str, Pcm]]
) -> AsyncIterator[tuple[str, Pcm]]:
    """``preamble`` (no text), then ``parts``."""
    yield "", preamble
    async for part in parts:
        yield part


async def _after[T](first: T, rest: AsyncIterator[T]) -> AsyncIterator[T]:
    """``first``, then ``rest``."""
    yield first
    async for item in rest:
        yield item
