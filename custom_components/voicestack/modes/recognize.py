"""Which entities a request would act on, found without acting.

The confirm policy needs to know, before the agent runs, whether "unlock the
front door" touches a lock. Home Assistant's default agent recognizes the
sentence (intent and slots: name, area, floor, domain, device class) without
running it; ``intent.async_match_targets`` then finds the entities, as the
intent handler would. A request the default agent does not recognize (free-form
speech for an LLM agent) touches nothing as far as this check can tell.

Recognized once: the check passes the same text, language, satellite and device
as the voice loop's call to the agent, so when the pipeline's agent is the
default agent it finds the check's result in its intent cache (``reused``) and
does not recognize the text again. An LLM agent does not use the recognizer:
for it the check is extra work, bounded by ``AgentTarget``'s deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hassil.recognize import RecognizeResult
from homeassistant.components import conversation
from homeassistant.components.conversation.default_agent import DefaultAgent
from homeassistant.components.homeassistant.exposed_entities import (
    async_should_expose,
)
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import entity_registry as er, intent

from .. import compat
from ..core.router import Touched


class EntityResolver:
    """``AgentTarget``'s ``resolve`` for one satellite."""

    def __init__(
        self,
        hass: HomeAssistant,
        language: Callable[[], str],
        device_id: Callable[[], str | None],
        satellite_id: Callable[[], str | None],
        agent_id: Callable[[], str | None] = lambda: None,
    ) -> None:
        """``language``, ``device_id``, ``satellite_id``, ``agent_id``: per request.

        ``agent_id`` is the pipeline's conversation agent (None: the default).
        """
        self.hass = hass
        self._language = language
        self._device_id = device_id
        self._satellite_id = satellite_id
        self._agent_id = agent_id

    def reused(self) -> bool:
        """The request's agent finds this check's recognition in its cache."""
        agent = conversation.async_get_agent(self.hass, self._agent_id())
        return isinstance(agent, DefaultAgent) and compat.caches_recognition(agent)

    def known(self) -> list[Touched]:
        """Every entity exposed to Assist, with its name and aliases.

        For the first pass on the text when the check runs late.
        """
        registry = er.async_get(self.hass)
        known: list[Touched] = []
        for state in self.hass.states.async_all():
            if not async_should_expose(self.hass, conversation.DOMAIN, state.entity_id):
                continue
            entry = registry.async_get(state.entity_id)
            aliases = [a for a in entry.aliases if isinstance(a, str)] if entry else []
            known.append(
                Touched(
                    state.entity_id,
                    state.attributes.get("device_class"),
                    names=(state.name, *aliases),
                )
            )
        return known

    async def is_command(self, text: str) -> bool:
        """Whether the default agent recognizes ``text`` as a command for this home.

        Used when the voice gate was not sure who spoke over an answer: a
        sentence the home understands is taken as the user's request.
        """
        return await self._recognize(text) is not None

    async def _recognize(self, text: str) -> RecognizeResult | None:
        """The default agent's intent and slots for ``text``; None: unrecognized."""
        agent = conversation.async_get_agent(self.hass)
        if not isinstance(agent, DefaultAgent):
            return None
        user_input = conversation.ConversationInput(
            text=text,
            context=Context(),
            conversation_id=None,
            device_id=self._device_id(),
            satellite_id=self._satellite_id(),
            language=self._language(),
            agent_id=conversation.HOME_ASSISTANT_AGENT,
        )
        result = await agent.async_recognize_intent(user_input)
        return None if result is None or result.unmatched_entities else result

    async def __call__(self, text: str) -> Sequence[Touched]:
        """The entities ``text`` would act on (empty: none recognized)."""
        result = await self._recognize(text)
        if result is None:
            return ()
        slots = {name: entity.value for name, entity in result.entities.items()}
        constraints = intent.MatchTargetsConstraints(
            name=_text(slots.get("name")),
            area_name=_text(slots.get("area")),
            floor_name=_text(slots.get("floor")),
            domains=_many(slots.get("domain")),
            device_classes=_many(slots.get("device_class")),
            assistant=conversation.DOMAIN,
            allow_duplicate_names=True,
        )
        if not constraints.has_constraints:
            return ()
        match = intent.async_match_targets(self.hass, constraints)
        return tuple(
            Touched(state.entity_id, state.attributes.get("device_class"))
            for state in match.states
            if async_should_expose(self.hass, conversation.DOMAIN, state.entity_id)
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def _many(value: object) -> list[str] | None:
    if isinstance(value, str) and value:
        return [value]
    if isinstance(value, list | tuple):
        return [str(item) for item in value] or None
    return None
