"""Reading a program named on the command line: a path, or `-` for standard input."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from uir.core import Program, UsageError, parse, verify
from uir.core.errors import ParseError, UIRError


@dataclass(frozen=True)
class Source:
    path: str  # as shown in messages
    text: str


def read_source(name: str) -> Source:
    """The text of `name`; a file that is not UTF-8 is a parse error on its first bad line."""
    try:
        data = sys.stdin.buffer.read() if name == "-" else open(name, "rb").read()  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from exc
    path = "<stdin>" if name == "-" else name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError("the file is not valid UTF-8", line) from exc
    return Source(path, text)


def load_program(source: Source, check: bool = True) -> Program:
    """Parse, and verify unless told not to. An error keeps the text it blames a line of
    (`error.source`), so that the CLI can show the line under the message."""
    try:
        program = parse(source.text, source.path)
        if check:
            verify(program)
    except UIRError as error:
        error.source = source.text
        raise
    return program
