"""Benchmarks of the satellite: each script prints figures with their anchors."""
