"""Recorded requests: the recorder, the library of every satellite, the API and the debug panel that shows them."""
