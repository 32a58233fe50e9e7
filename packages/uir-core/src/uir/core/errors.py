"""One exception family; each kind carries the line it blames and its exit code (uir.md 11)."""

from __future__ import annotations

# A source line longer than this is shown as a window around the place an error blames.
EXCERPT_WIDTH = 100


class UIRError(Exception):
    """Base of every error the compiler reports to a user.

    `column` and `width` say where on its line the error is (0-based, in characters of the
    line as written): the offending token. Without them the whole statement is blamed."""

    exit_code = 4

    def __init__(
        self,
        message: str,
        line: int | None = None,
        column: int | None = None,
        width: int = 1,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.width = max(width, 1)

    def render(self, path: str) -> str:
        """`FILE:LINE: error: message`, or `FILE: error: message` when no line applies."""
        where = f"{path}:{self.line}" if self.line is not None else path
        return f"{where}: error: {self.message}"

    def excerpt(self, text: str) -> str:
        """The line the error blames and a caret under its place, as clang shows them
        (`  3 | %c = AD i32 %a %b` over `    |      ^~`), for the lines after `render`'s; ""
        when the error has no line in `text`."""
        lines = text.split("\n")
        if self.line is None or not 1 <= self.line <= len(lines):
            return ""
        source = lines[self.line - 1].removesuffix("\r")
        code = source.split("#", 1)[0].rstrip(" \t")
        if self.column is not None:
            start, end = self.column, min(self.column + self.width, max(len(source), 1))
        else:  # the whole statement
            start = len(code) - len(code.lstrip(" \t"))
            end = max(len(code), start + 1)
        shown, start, end = _window(source, start, end)
        # Tabs before the caret stay tabs, so that it lines up under any tab width.
        pad = "".join(c if c == "\t" else " " for c in shown[:start])
        number = str(self.line)
        gutter = " " * len(number)
        marks = "^" + "~" * (end - start - 1)
        return f" {number} | {shown}\n {gutter} | {pad}{marks}\n"


def _window(source: str, start: int, end: int) -> tuple[str, int, int]:
    """At most EXCERPT_WIDTH characters of `source` around [start, end), with `...` where cut,
    and the span's place in them."""
    if len(source) <= EXCERPT_WIDTH:
        return source, start, min(end, max(len(source), start + 1))
    end = min(end, start + EXCERPT_WIDTH // 2)
    left = max(0, start - EXCERPT_WIDTH // 4)
    right = min(len(source), left + EXCERPT_WIDTH)
    head = "..." if left > 0 else ""
    tail = "..." if right < len(source) else ""
    shown = head + source[left:right] + tail
    return shown, start - left + len(head), end - left + len(head)


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
