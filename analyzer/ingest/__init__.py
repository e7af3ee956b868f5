"""Ingest: a job's discovered files → the Arrow tables of ``tables.py``.

Ingesters know nothing of rules: they say what was printed, where and when.
"""
