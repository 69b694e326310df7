"""What the built-in frames say, in one place (English defaults; replaceable).

Kept apart from the vocabulary: vocabularies are what the user says, replies what
the satellite answers. Fields with ``{placeholders}`` are formatted by the frame.
An empty reply says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Replies"]


@dataclass(frozen=True, slots=True)
class Replies:
    """Every sentence a built-in frame may speak."""

    # base
    wake_word_mode: str = "Wake word mode"
    always_listening_mode: str = "Always listening mode"
    mode: str = "{mode}."
    mode_in_frame: str = "{mode}, in {frame}."
    mode_set: str = "{mode}."
    mode_already: str = "{mode} already."
    mode_failed: str = "Could not switch the mode."
    shortcut_failed: str = "That shortcut did not work."
    # gathering frames
    cancelled: str = "Cancelled."
    nothing_yet: str = "Nothing yet."
    read_list: str = "{count}: {items}."
    dictation_started: str = "Dictation started."
    inventory_started: str = "Inventory. Say save when you are done."
    removed: str = "Removed {item}."
    list_empty: str = "The list is empty."
    delivery_failed: str = "Could not deliver to {target}; nothing was lost."
    # voice picker
    pick_voice: str = "Which voice? {voices}. Or say cancel."
    no_voices: str = "No other voices are available."
    voice_set: str = "This is {name}."
    voice_kept: str = "Keeping this voice."
    voice_failed: str = "Could not switch to {name}."
    say_a_voice: str = "Say a voice name, or cancel."
    # confirm
    say_yes_or_no: str = "Please say yes or no."
    confirm_expired: str = "Never mind then."
