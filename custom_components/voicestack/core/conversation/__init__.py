"""Follow-up conversations: sessions and their policy, phrases that end them, the debounce of fragments, turns."""
