"""Handshake: workers that never form a cluster."""
