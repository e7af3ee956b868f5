"""Errors meant for the user: a clear message naming the path, and a hint."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or usage. The CLI prints it on one line and exits with 2."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} (hint: {self.hint})" if self.hint else self.message
