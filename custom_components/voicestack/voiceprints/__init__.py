"""Voiceprints (who talks): enrolled voices, their actions, enrollment and its options step."""
