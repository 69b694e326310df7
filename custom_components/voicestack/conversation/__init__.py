"""Follow-up conversations, Home Assistant's side: sessions, their options, answers streamed from the agent.

It is also the integration's ``conversation`` platform: an agent entry's entity
(``agent/entity.py``).
"""

from ..agent.entity import async_setup_agent_entity as async_setup_entry

__all__ = ["async_setup_entry"]
