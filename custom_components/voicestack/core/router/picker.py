"""The voice picker: say a voice name (or cancel); the satellite speaks in it.

The voices come from the glue (the pipeline's TTS engine); each is known by its
full name ("lessac medium") and by its first word ("lessac"; shared by several
voices, it means the first of them in the engine's order), alone or inside a
sentence ("use lessac please").
Anything else with real words gets "Say a voice name, or cancel."; the frame is
exclusive and closes by itself after ``timeout_s``.
"""

from __future__ import annotations

from collections.abc import Sequence
import logging
from typing import cast

from .frames import Frame, Plan
from .hooks import Voice, VoiceSetter
from .replies import Replies
from .rules import (
    CatchAllRule,
    ExactRule,
    Hit,
    Outcome,
    PhraseRule,
    Rule,
    Split,
    frame_action,
    phrase_key,
    phrase_rules,
)
from .vocabulary import Vocabulary

__all__ = ["VoicePickerFrame"]

_LOGGER = logging.getLogger(__name__)
_SPOKEN_VOICES = 6  # how many names the prompt reads out


def _aliases(voices: Sequence[Voice]) -> dict[str, Voice]:
    """Normalized full names, then first words (first voice wins), to voices."""
    names = {
        voice: phrase_key(voice.name.replace("(", " ").replace(")", " "))
        for voice in voices
    }
    aliases: dict[str, Voice] = {}
    for voice, name in names.items():
        if name:
            aliases.setdefault(name, voice)
    for voice, name in names.items():
        if name:
            aliases.setdefault(name.split()[0], voice)
    return aliases


def _spoken_list(names: Sequence[str]) -> str:
    """The names as spoken: A, B or C."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} or {names[-1]}"


class VoicePickerFrame(Frame):
    """Offers voices; the one named is set and speaks its confirmation."""

    def __init__(
        self,
        voices: Sequence[Voice],
        *,
        cancel: Sequence[Rule],
        set_voice: VoiceSetter | None,
        replies: Replies,
        timeout_s: float | None,
    ) -> None:
        """``cancel`` from ``cancel_rules`` (shared); the rest is per picker."""
        aliases = _aliases(voices)
        choose = frame_action(VoicePickerFrame.on_choose)
        plan = Plan(
            [
                *cancel,
                ExactRule("voice", aliases, choose),
                PhraseRule("voice", aliases, choose, at="anywhere"),
                CatchAllRule("reprompt", frame_action(VoicePickerFrame.on_other)),
            ]
        )
        super().__init__("voice_picker", plan, expects_speech=True, timeout_s=timeout_s)
        self.voices = tuple(voices)
        self.set_voice = set_voice
        self.replies = replies

    @staticmethod
    def cancel_rules(vocabulary: Vocabulary) -> list[Rule]:
        """The cancel rules every picker shares."""
        return phrase_rules(
            "cancel",
            vocabulary["common.cancel"],
            frame_action(VoicePickerFrame.on_cancel),
        )

    def prompt(self) -> str:
        """What to say when the picker opens."""
        names = [voice.name for voice in self.voices[:_SPOKEN_VOICES]]
        return self.replies.pick_voice.format(voices=_spoken_list(names))

    async def on_choose(self, hit: Hit[VoicePickerFrame]) -> Outcome:
        """A voice was named: set it, close, confirm (in the new voice)."""
        # The plan's alias tables map every spoken name to its Voice.
        voice = cast(
            "Voice",
            hit.payload.value if isinstance(hit.payload, Split) else hit.payload,
        )
        self.stack.pop(self)
        if self.set_voice is not None:
            try:
                await self.set_voice(voice)
            except Exception as err:
                _LOGGER.exception("Setting voice %s failed", voice.voice_id)
                return Outcome(
                    speak=self.replies.voice_failed.format(name=voice.name) or None,
                    reason=f"setting {voice.voice_id} failed: {err}",
                )
        return Outcome(
            speak=self.replies.voice_set.format(name=voice.name) or None,
            reason=f"voice set to {voice.voice_id}",
        )

    def on_cancel(self, hit: Hit[VoicePickerFrame]) -> Outcome:
        """Keep the current voice."""
        self.stack.pop(self)
        return Outcome(speak=self.replies.voice_kept or None, reason="voice unchanged")

    def on_other(self, hit: Hit[VoicePickerFrame]) -> Outcome:
        """Not a voice name: ask again."""
        return Outcome(
            speak=self.replies.say_a_voice or None, reason="not a voice name"
        )
