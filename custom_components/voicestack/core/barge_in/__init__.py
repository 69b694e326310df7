"""Barge-in's decisions: pauses, verdicts, resumes, their limits and records."""
