"""Recorded requests: what a recording holds, and where recordings are kept."""
