"""One exception family; each kind carries the line it blames and its exit code (uir.md 11)."""

from __future__ import annotations


class UIRError(Exception):
    """Base of every error the compiler reports to a user."""

    exit_code = 4

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def render(self, path: str) -> str:
        """`FILE:LINE: error: message`, or `FILE: error: message` when no line applies."""
        where = f"{path}:{self.line}" if self.line is not None else path
        return f"{where}: error: {self.message}"


class UsageError(UIRError):
    """Bad command line or unreadable input."""

    exit_code = 1


class ParseError(UIRError):
    """Everything the grammar and name resolution reject."""

    exit_code = 2


class VerifyError(UIRError):
    """Everything checked on a parsed graph: types, arguments, shapes, bounds, memory order."""

    exit_code = 3


class BackendError(UIRError):
    """A backend or pass failed on a verified program: an internal failure."""

    exit_code = 4
