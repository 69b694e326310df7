"""Tests: e2e."""
