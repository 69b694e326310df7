"""Tests of the release tooling (scripts/version, scripts/release), run on the host."""
