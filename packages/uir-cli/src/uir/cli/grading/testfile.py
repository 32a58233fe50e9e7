"""Test files (uir.md section 12, spec/uir-week1.md section 12): the directives of the leading
comment block, and the program a compiler under test is given, which has those directives removed.

The leading comment block is the run of comment and blank lines before the first statement. In
it, these lines are directives:

    # expect: TEXT          one expected line of standard output, in order
    # expect-exit: N        the expected exit code (default 0)
    # tolerance: N ulp      float outputs may differ by N ulp of f32
    # tolerance: R rel      float outputs may differ by R times the expected value...
    # tolerance: A abs      ...plus A (uir.md section 10.3): |got - want| <= A + R * |want|

Other comments are free text, and directive-shaped comments after the first statement are
ordinary comments. One strictness of the grader's own: a comment of the leading block that starts
with `expect:`, `expect-exit:` or `tolerance:` must be a well-formed directive, since a typo there
would otherwise silently weaken the test.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from uir.core.errors import UIRError
from uir.core.parse import parse

EXPECT = re.compile(r"expect:(.*)")
EXPECT_EXIT = re.compile(r"expect-exit:[ \t]*(\d+)", re.ASCII)
# `N ulp`, or a decimal `R rel` / `A abs` (1e-5, 0.001, 2): never negative, never nan.
TOLERANCE = re.compile(
    r"tolerance:[ \t]*(?:(\d+)[ \t]+(ulp)|((?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)[ \t]+(rel|abs))",
    re.ASCII,
)
# The start of a comment that is meant to be a directive.
DIRECTIVE_WORD = re.compile(r"(?:expect|expect-exit|tolerance):")
# Exit codes a test may expect (uir.md section 11).
EXIT_CODES = (0, 1, 2, 3, 4)


class TestFileError(Exception):
    """A test file that does not follow uir.md section 12; it is reported, never run."""

    __test__ = False  # not a pytest test class

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line

    def __str__(self) -> str:
        return self.message if self.line is None else f"line {self.line}: {self.message}"


@dataclass(frozen=True)
class Tolerance:
    """How far a float output may be from the expected one: N ulp of f32, or `|got - want| <=
    abs + rel * |want|` (uir.md section 10.3). `float_lines`, when known, says which output
    lines are of a float type (one line per SINK source): only their tokens are compared within
    the tolerance, every other token exactly."""

    ulp: int | None = None
    rel: float | None = None
    abs: float | None = None
    float_lines: tuple[bool, ...] | None = field(default=None, compare=False)

    def __bool__(self) -> bool:
        return self.ulp is not None or self.rel is not None or self.abs is not None

    def applies_to(self, line: int) -> bool:
        """Whether the tokens of output line `line` (from 0) are compared within it."""
        lines = self.float_lines
        return bool(self) and (lines is None or line >= len(lines) or lines[line])

    def __str__(self) -> str:
        if self.ulp is not None:
            return f"{self.ulp} ulp"
        return " + ".join(
            text
            for text in (
                f"{self.abs:g} abs" if self.abs is not None else "",
                f"{self.rel:g} rel" if self.rel is not None else "",
            )
            if text
        )

    def as_dict(self) -> dict[str, float | int | None]:
        return {"ulp": self.ulp, "rel": self.rel, "abs": self.abs}


NO_TOLERANCE = Tolerance()


@dataclass(frozen=True)
class TestFile:
    """What one test expects, and the program text a compiler under test may see."""

    __test__ = False  # not a pytest test class

    path: str
    expected_lines: tuple[str, ...]
    expected_exit: int
    tolerance: Tolerance
    program: str  # the file's text with every directive line blanked, so line numbers stay

    @property
    def tolerance_ulp(self) -> int | None:
        return self.tolerance.ulp

    @property
    def name(self) -> str:
        return Path(self.path).stem

    @property
    def program_bytes(self) -> bytes:
        """The program as the compiler gets it, any bytes that are not UTF-8 included."""
        return self.program.encode("utf-8", errors="surrogateescape")


def comment_body(line: str) -> str | None:
    """The text after `#` of a line without a statement (empty for a blank line), None for a line
    that holds a statement. Lines are split as the parser splits them: at LF, a CR before it
    dropped, blanks being spaces and tabs."""
    code, hash_, comment = line.removesuffix("\r").partition("#")
    if code.strip(" \t"):
        return None
    return comment.strip(" \t") if hash_ else ""


def parse_test(text: str, path: str) -> TestFile:
    """Read the directives of one test file. Raises TestFileError when they are malformed."""
    lines = text.split("\n")
    expected: list[str] = []
    expected_exit: int | None = None
    tolerance: dict[str, float] = {}
    program = list(lines)
    leading = True
    for number, line in enumerate(lines, start=1):
        body = comment_body(line)
        if body is None:
            leading = False
            continue
        if not leading or DIRECTIVE_WORD.match(body) is None:
            continue  # free text
        if match := EXPECT.fullmatch(body):
            expected.append(match.group(1).strip(" \t"))
        elif match := EXPECT_EXIT.fullmatch(body):
            if expected_exit is not None:
                raise TestFileError("a second '# expect-exit:'", number)
            expected_exit = int(match.group(1))
            if expected_exit not in EXIT_CODES:
                raise TestFileError(f"expect-exit {expected_exit} is not an exit code", number)
        elif match := TOLERANCE.fullmatch(body):
            kind = match.group(2) or match.group(4)
            value = float(match.group(1) or match.group(3))
            if kind in tolerance:
                raise TestFileError(f"a second '# tolerance: ... {kind}'", number)
            if not math.isfinite(value):
                raise TestFileError(
                    f"tolerance {match.group(3)} {kind} is not a finite number", number
                )
            tolerance[kind] = value
            if "ulp" in tolerance and len(tolerance) > 1:
                raise TestFileError(
                    "a tolerance in ulp and one in rel/abs: give one or the other", number
                )
        else:
            raise TestFileError(
                f"malformed directive '# {body}' (expected '# expect: TEXT', "
                "'# expect-exit: N', '# tolerance: N ulp', '# tolerance: R rel' or "
                "'# tolerance: A abs')",
                number,
            )
        program[number - 1] = ""
    exit_code = 0 if expected_exit is None else expected_exit
    if exit_code != 0 and expected:
        # uir.md section 11: on any error nothing is printed to standard output.
        raise TestFileError(f"a test expecting exit {exit_code} expects no '# expect:' lines")
    text_seen = "\n".join(program)
    ulp = tolerance.get("ulp")
    declared = Tolerance(
        None if ulp is None else int(ulp), tolerance.get("rel"), tolerance.get("abs")
    )
    if declared:
        declared = replace(declared, float_lines=float_lines(text_seen))
    return TestFile(path, tuple(expected), exit_code, declared, text_seen)


def float_lines(program: str) -> tuple[bool, ...] | None:
    """For each output line of `program` (each SINK source), whether its type is a float; None
    when the program does not parse (a tolerance then applies to every line)."""
    try:
        sink = parse(program).sink
    except UIRError:
        return None
    dtypes = [getattr(source.type, "dtype", None) for source in sink.src]
    return tuple(dtype is None or dtype.is_float for dtype in dtypes)


def read_test(path: str) -> TestFile:
    """Read and parse one test file; an unreadable file is a TestFileError too.

    Bytes that are not UTF-8 are kept as they are (a test may check that they are rejected):
    `program_bytes` gives them back.
    """
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise TestFileError(f"cannot read the test: {exc.strerror or exc}") from exc
    return parse_test(data.decode("utf-8", errors="surrogateescape"), path)


def collect_tests(paths: Iterable[str]) -> list[str]:
    """The test files named by `paths`: files as given, directories searched for `*.uir`.

    Directories are searched recursively and their tests sorted, so a suite always runs, and
    reports, in the same order. Raises FileNotFoundError for a path that does not exist.
    """
    found: list[str] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            found.extend(str(p) for p in sorted(path.rglob("*.uir")) if p.is_file())
        elif path.exists():
            found.append(name)
        else:
            raise FileNotFoundError(name)
    return list(dict.fromkeys(found))  # a test named twice runs once


def file_digest(path: str) -> str:
    """The SHA-256 of a file's bytes, for a fingerprint; "" for a file that cannot be read."""
    try:
        with open(path, "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return ""
