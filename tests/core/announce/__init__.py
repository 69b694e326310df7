"""Tests: core/announce."""
