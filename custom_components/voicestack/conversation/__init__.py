"""Follow-up conversations, Home Assistant's side: sessions, their options, answers streamed from the agent."""
