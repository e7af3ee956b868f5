"""Data: what each worker reads, and when it runs out."""
