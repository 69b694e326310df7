"""Tests: core/router."""
