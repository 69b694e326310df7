"""Tests: the dev stack's listening harness (rooms, voices, the ear)."""
