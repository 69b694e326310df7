"""VoiceStack tests."""
