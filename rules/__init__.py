"""The rule catalogue: one module per rule, grouped in families.

A rule module defines ``CODE``, ``NAME`` (the failure observed, not the fix),
``CLASS`` (a verdict class id of the JSON schema), ``SEVERITY``, ``REQUIRES``
(the tables it reads) and ``check(tables) -> Iterable[Hit]``. Its docstring is
its documentation: a title line and the sections ``## What it means``,
``## Why it happens``, ``## What to do``. Rules read tables; they never format
HTML and never decide what is root cause: the engine does.
"""
