"""One request's audio on its way to the owner: run-pipeline to audio-stop.

The request starts shortly before its cut (the wake word, or the speech onset)
with audio from the mic buffer, then carries every live chunk, timestamped by
the samples sent so far, until the listener stops it.
"""

from __future__ import annotations

from enum import Enum

import numpy as np
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event
from wyoming.pipeline import PipelineStage, RunPipeline

import voicestack_protocol as protocol

from .audio import RATE
from .echo import EchoTail
from .endpoint import Endpointer
from .mic_format import CHUNK_SAMPLES
from .peer import Peer
from .preroll import PrerollBuffer


class Ending(Enum):
    """Why a request's live audio says it is over (``Request.live``)."""

    SPEECH_ENDED = "end of speech"  # the room went quiet after speech
    NO_SPEECH = "no speech"  # nobody spoke after the wake word (--no-speech-timeout)


class Request:
    """The audio of one request, sent to ``peer`` (the owner when it began)."""

    def __init__(self, peer: Peer, mic: PrerollBuffer, chime: str | None) -> None:
        """``chime``: the awake sound's stream id; the mic is silenced until it ends."""
        self._peer = peer
        self._mic = mic
        self._chime = chime
        # After the chime: the chunk being recorded when it ended still holds it.
        self._mute_until = -1  # absolute mic sample
        # ... and the room rings with it for the echo tail: audio the
        # endpointer must not take for the start of a request (absolute).
        self._ringing_until = -1
        self._echo_tail = 0  # samples: ``--echo-tail``
        self._streamed = 0  # samples sent (for timestamps)
        self._endpointer: Endpointer | None = None  # when the owner asked for it

    def start_captured(self, audio: np.ndarray, start: int, onset: int) -> None:
        """Send a request whose audio so far is ``audio`` (barge-in's capture).

        ``audio`` began at mic sample ``start``, the speech at ``onset``; it is
        sent at once, and live chunks follow it. The room before the onset
        measures the noise floor for the end of speech, which has heard the
        speech already.
        """
        self._peer.send(
            RunPipeline(
                start_stage=PipelineStage.ASR, end_stage=PipelineStage.TTS
            ).event()
        )
        self._send_extension(protocol.preroll_event(len(audio), RATE, onset, start))
        self._peer.send(AudioStart(rate=RATE, width=2, channels=1, timestamp=0).event())
        if (silence := self._peer.end_of_speech_s) is not None:
            self._endpointer = Endpointer(silence)
            self._endpointer.start(audio[: max(0, onset - start)])
            self._endpointer.process(audio[max(0, onset - start) :])
        self.stream(audio)

    def start(
        self,
        wake_word: str | None,
        cut: int,
        preroll_s: float,
        echo: EchoTail,
        no_speech_s: float = 0.0,
    ) -> np.ndarray:
        """Send run-pipeline, the preroll's size and audio-start; return the preroll.

        ``cut`` is the wake word detection or the speech onset; ``preroll_s``
        is ``--wake-preroll`` or ``--preroll`` respectively. The preroll it
        returns goes out with ``stream`` once the caller has reported the state.
        ``no_speech_s``: after a wake word, how long speech may take to start
        (0: until the peer or ``--max-request`` ends the request); a request
        a speech onset started has its speech.
        """
        self._peer.send(
            RunPipeline(
                start_stage=PipelineStage.ASR,
                end_stage=PipelineStage.TTS,
                wake_word_name=wake_word,
            ).event()
        )
        # Never audio an earlier request sent: a fragment said right after one
        # starts where that one ended (``PrerollBuffer.sent``).
        preroll_start = max(0, self._mic.sent, cut - round(preroll_s * RATE))
        # Audio since playback, for a request started by speech: none of the
        # reply's echo goes to speech-to-text or into the room's noise floor.
        room_from = 0
        if wake_word is None:
            preroll_start = max(preroll_start, min(cut, echo.until))
            room_from = echo.ended_at
        self._echo_tail = echo.tail
        preroll = self._mic.since(preroll_start)
        start = self._mic.end - len(preroll)  # what ``since`` could hold
        self._send_extension(protocol.preroll_event(len(preroll), RATE, cut, start))
        self._peer.send(AudioStart(rate=RATE, width=2, channels=1, timestamp=0).event())
        if (silence := self._peer.end_of_speech_s) is not None:
            waits = no_speech_s if wake_word is not None else 0.0
            self._endpointer = Endpointer(silence, no_speech_s=waits)
            self._endpointer.start(self._mic.since(room_from))
            if wake_word is None:
                # The onset came before the VAD said so: its speech is in the
                # preroll, and a short fragment may be mostly there.
                self._endpointer.process(preroll)
        return preroll

    def stream(self, samples: np.ndarray) -> None:
        """Send ``samples`` as audio-chunks of at most one mic chunk each."""
        for start in range(0, len(samples), CHUNK_SAMPLES):
            part = samples[start : start + CHUNK_SAMPLES]
            self._peer.send(
                AudioChunk(
                    rate=RATE,
                    width=2,
                    channels=1,
                    audio=part.tobytes(),
                    timestamp=round(self._streamed * 1000 / RATE),
                ).event()
            )
            self._streamed += len(part)

    def live(self, samples: np.ndarray, end: int) -> Ending | None:
        """Send a live mic chunk ending at sample ``end``; whether the request is over.

        While the awake chime plays (and one chunk after), silence goes instead,
        so the request does not contain the chime. The endpointer hears
        silence for the echo tail after that too: the chime and the wake
        word's end ring in the room (+35 dB over a quiet room's floor, about
        0.2 s in a room with 0.25 s of reverberation), and taken for speech
        they end a false wake's request as if someone had spoken.
        """
        muted = self._chime is not None or end <= self._mute_until
        live = np.zeros_like(samples) if muted else samples
        self.stream(live)
        if (endpointer := self._endpointer) is None:
            return None
        ringing = muted or end <= self._ringing_until
        if endpointer.process(np.zeros_like(samples) if ringing else live):
            return Ending.SPEECH_ENDED
        return Ending.NO_SPEECH if endpointer.unheard else None

    def sound_ended(self, stream_id: str) -> None:
        """One of our sounds ended: if it was the chime, the mic counts again."""
        if stream_id == self._chime:
            self._chime = None
            self._mute_until = self._mic.end + CHUNK_SAMPLES
            self._ringing_until = self._mute_until + self._echo_tail

    @property
    def nobody_spoke(self) -> bool:
        """The endpointer (if asked for) heard no speech at all."""
        return self._endpointer is not None and not self._endpointer.heard_speech

    def no_speech(self) -> None:
        """Tell the peer to drop the request: speech-to-text would make words up."""
        self._send_extension(protocol.no_speech_event())

    def stop(self) -> None:
        """audio-stop, timestamped after the last sample sent.

        The mic buffer remembers where: the next request starts there at the
        earliest.
        """
        self._mic.sent = self._mic.end
        self._peer.send(
            AudioStop(timestamp=round(self._streamed * 1000 / RATE)).event()
        )

    def _send_extension(self, event: Event) -> None:
        """Only peers that said ``voicestack-hello`` get our own events."""
        if self._peer.extensions:
            self._peer.send(event)
