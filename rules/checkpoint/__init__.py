"""Checkpoints: workers that overwrite each other's files."""
