"""Voice modes: the frame-stack router plugged into Home Assistant, the actions that drive it, what a request would touch."""
