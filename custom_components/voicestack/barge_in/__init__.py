"""Barge-in, Home Assistant's side: a satellite's settings, the gate's verdicts and what they do."""
