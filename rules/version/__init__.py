"""Versions: workers that run different software."""
