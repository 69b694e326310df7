"""Tests: satellite."""
