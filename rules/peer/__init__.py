"""Peers: a worker that vanished while the others were running."""
