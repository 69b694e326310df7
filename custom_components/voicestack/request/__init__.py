"""One request's way through a satellite: the loop, speech in and out, what it changed, its events."""
