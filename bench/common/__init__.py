"""Helpers the bench/*.py topic scripts share (not a topic: bench/run runs only bench/*.py)."""
