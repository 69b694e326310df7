"""Developer scripts that need Python (run through the bash wrappers)."""
