"""Collectives: all-reduces whose members disagree, and the libraries that run them (NCCL)."""
