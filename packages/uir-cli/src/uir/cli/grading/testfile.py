"""Test files (uir.md section 12, spec/uir-week1.md section 12): the directives of the leading
comment block, and the program a compiler under test is given, which has those directives removed.

The leading comment block is the run of comment and blank lines before the first statement. In
it, these lines are directives:

    # expect: TEXT          one expected line of standard output, in order
    # expect-exit: N        the expected exit code (default 0)
    # tolerance: N ulp      float outputs may differ by N ulp of f32

Other comments are free text, and directive-shaped comments after the first statement are
ordinary comments. One strictness of the grader's own: a comment of the leading block that starts
with `expect:`, `expect-exit:` or `tolerance:` must be a well-formed directive, since a typo there
would otherwise silently weaken the test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

EXPECT = re.compile(r"expect:(.*)")
EXPECT_EXIT = re.compile(r"expect-exit:[ \t]*(\d+)", re.ASCII)
TOLERANCE = re.compile(r"tolerance:[ \t]*(\d+)[ \t]+ulp", re.ASCII)
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
class TestFile:
    """What one test expects, and the program text a compiler under test may see."""

    __test__ = False  # not a pytest test class

    path: str
    expected_lines: tuple[str, ...]
    expected_exit: int
    tolerance_ulp: int | None
    program: str  # the file's text with every directive line blanked, so line numbers stay

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
    tolerance: int | None = None
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
            if tolerance is not None:
                raise TestFileError("a second '# tolerance:'", number)
            tolerance = int(match.group(1))
        else:
            raise TestFileError(
                f"malformed directive '# {body}' (expected '# expect: TEXT', "
                "'# expect-exit: N' or '# tolerance: N ulp')",
                number,
            )
        program[number - 1] = ""
    exit_code = 0 if expected_exit is None else expected_exit
    if exit_code != 0 and expected:
        # uir.md section 11: on any error nothing is printed to standard output.
        raise TestFileError(f"a test expecting exit {exit_code} expects no '# expect:' lines")
    return TestFile(path, tuple(expected), exit_code, tolerance, "\n".join(program))


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
