"""The follow-up loop's default phrases, per language (Home Assistant-free).

Stop words, the politeness that may follow one ("Stop, please"), the
phrases that never wait in the post-action buffer, and the closing said when
the turn limit ends a conversation the answer wanted to go on, for the
languages Home Assistant users most often run. A user's own lists (the options) always win;
these are what a satellite starts with in Home Assistant's language. A language
not listed falls back to English, and ``language_of`` reduces a tag ("de-CH")
to its language ("de").

Every phrase is compared as spoken words (``follow_up_policy.spoken``: case,
punctuation and apostrophes folded), so "c'est tout" and "C'est tout !" are one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

FALLBACK: Final = "en"

STOP_WORDS: Final[Mapping[str, tuple[str, ...]]] = {
    "en": (
        *("stop", "that's all", "that is all", "thanks bye", "thank you bye", "bye"),
        *("goodbye", "never mind", "nevermind", "cancel", "no thanks", "nothing"),
    ),
    "de": (
        *("stopp", "stop", "das war's", "das ist alles", "danke tschüss"),
        *("tschüss", "auf wiedersehen", "vergiss es", "abbrechen", "nein danke"),
        "nichts",
    ),
    "fr": (
        *("stop", "arrête", "c'est tout", "merci au revoir", "au revoir"),
        *("laisse tomber", "annuler", "non merci", "rien"),
    ),
    "es": (
        *("para", "basta", "eso es todo", "gracias adiós", "adiós", "olvídalo"),
        *("cancelar", "no gracias", "nada"),
    ),
    "nl": (
        *("stop", "dat is alles", "dat was het", "bedankt doei", "doei", "tot ziens"),
        *("laat maar", "annuleren", "nee dank je", "niets"),
    ),
    "it": (
        *("stop", "basta", "è tutto", "grazie ciao", "ciao", "arrivederci"),
        *("lascia perdere", "annulla", "no grazie", "niente"),
    ),
}

POLITENESS: Final[Mapping[str, tuple[str, ...]]] = {
    "en": ("please", "thanks", "thank you"),
    "de": ("bitte", "danke", "danke schön"),
    "fr": ("merci", "s'il te plaît", "s'il vous plaît"),
    "es": ("gracias", "por favor"),
    "nl": ("alsjeblieft", "alstublieft", "dank je", "bedankt"),
    "it": ("grazie", "per favore"),
}

EMERGENCY_PHRASES: Final[Mapping[str, tuple[str, ...]]] = {
    "en": ("help", "stop", "fire", "call"),
    "de": ("hilfe", "stopp", "feuer", "ruf", "anrufen"),
    "fr": ("au secours", "à l'aide", "stop", "au feu", "appelle"),
    "es": ("ayuda", "socorro", "para", "fuego", "llama"),
    "nl": ("help", "stop", "brand", "bel"),
    "it": ("aiuto", "stop", "al fuoco", "chiama"),
}


# Said after an answer that asks something back when nobody will listen any
# more (the turn limit): the user is told how to go on.
CLOSINGS: Final[Mapping[str, str]] = {
    "en": "Say the wake word to go on.",
    "de": "Sag das Aktivierungswort, um weiterzumachen.",
    "fr": "Dites le mot d'activation pour continuer.",
    "es": "Di la palabra de activación para continuar.",
    "nl": "Zeg het activeringswoord om verder te gaan.",
    "it": "Di' la parola di attivazione per continuare.",
}


def language_of(tag: str | None) -> str:
    """The language of a tag that has phrases here ("de-CH" -> "de"), else English."""
    language = (tag or FALLBACK).replace("_", "-").split("-")[0].lower()
    return language if language in STOP_WORDS else FALLBACK
