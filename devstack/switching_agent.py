"""A conversation agent that turns on what a request names (stands in for an LLM).

No LLM agent can run here; the follow-on journey ("Turn on the kitchen light."
… "and the fan too.") needs one that acts on both fragments joined, in the
request's context, as an LLM agent's tools do. Used by
tests/integration/test_follow_on.py and ``bench/follow_on.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
import re
from typing import Literal

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.helpers import intent


class SwitchingAgent(conversation.AbstractConversationAgent):
    """Turns on every device the request names, as an LLM agent's tool would.

    ``devices`` maps a word ("kitchen", "fan") to the entity it turns on
    (``homeassistant.turn_on``, in the request's context, so VoiceStack sees
    the turn changed something); "Turned on the kitchen and the fan." names
    them back. Every request is recorded (``texts``). With ``asks_back`` every
    answer ends in "Anything else?" and asks to go on, as a talkative LLM agent
    does: the session stays open until its turn limit.
    """

    def __init__(
        self,
        hass: HomeAssistant,
        devices: Mapping[str, str],
        *,
        asks_back: bool = False,
    ) -> None:
        """Acting in ``hass`` on ``devices``."""
        self.hass = hass
        self.devices = devices
        self.asks_back = asks_back
        self.texts: list[str] = []

    @property
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Any language."""
        return "*"

    async def async_process(
        self, user_input: conversation.ConversationInput
    ) -> conversation.ConversationResult:
        """Turn on what ``user_input`` names; say which."""
        self.texts.append(user_input.text)
        said = set(speech_words(user_input.text))
        named = [name for name in self.devices if name in said]
        if named:
            await self.hass.services.async_call(
                "homeassistant",
                "turn_on",
                {"entity_id": [self.devices[name] for name in named]},
                blocking=True,
                context=user_input.context,
            )
        response = intent.IntentResponse(language=user_input.language)
        response.async_set_results(
            [
                intent.IntentResponseTarget(
                    type=intent.IntentResponseTargetType.ENTITY,
                    name=name,
                    id=self.devices[name],
                )
                for name in named
            ]
        )
        things = " and the ".join(named)
        said = f"Turned on the {things}." if named else "Okay."
        response.async_set_speech(f"{said} Anything else?" if self.asks_back else said)
        return conversation.ConversationResult(
            response=response,
            conversation_id=user_input.conversation_id,
            continue_conversation=self.asks_back,
        )


def speech_words(text: str) -> list[str]:
    """Lower-case words without punctuation."""
    return re.findall(r"[a-z']+", text.lower())
