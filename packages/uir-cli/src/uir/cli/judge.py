"""Judging one run against its test: the verdicts of spec/grading.md.

Standard output is compared line by line, exactly, except that a test declaring `# tolerance: N ulp`
lets each float on a line differ from the expected one by up to N f32 units in the last place.
"""

from __future__ import annotations

import enum
import re
import signal
import struct
from dataclasses import dataclass

from .sandbox import Outcome, Status
from .testfile import TestFile

# A finite float or an infinity as uir.md section 11 prints it (`nan` matches only itself).
FLOAT_TOKEN = re.compile(r"-?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|inf)")


class Verdict(enum.Enum):
    PASS = "pass"
    FAIL = "fail"  # the right exit code, the wrong standard output
    WRONG_EXIT = "wrong-exit"  # the wrong exit code
    TIMEOUT = "timeout"  # past the wall-clock or CPU-time limit
    CRASH = "crash"  # killed by a signal
    OUTPUT_LIMIT = "output-limit"  # standard output or error over the cap
    CANNOT_START = "cannot-start"  # the compiler could not be started
    BAD_TEST = "bad-test"  # the test file itself is malformed; nothing ran


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    detail: str  # one line saying why, empty for a pass
    actual_lines: tuple[str, ...]


def output_lines(stdout: bytes) -> tuple[str, ...]:
    """Standard output as lines; a final newline ends the last line rather than starting one."""
    text = stdout.decode("utf-8", errors="replace")
    if not text:
        return ()
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return tuple(lines)


def _f32_bits(token: str) -> int | None:
    """The f32 bit pattern of an output token read as a float, or None when it is not one.

    Only the spellings of uir.md section 11 count (Python's float() also takes `1_0`, `Infinity`).
    """
    if not FLOAT_TOKEN.fullmatch(token):
        return None
    value = float(token)
    try:
        return struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:  # a finite decimal beyond f32's range: not an f32 output
        return None


def _ordered(bits: int) -> int:
    """f32 bit patterns mapped to integers in the order of their values, -0 just below +0."""
    return bits if bits < 0x80000000 else 0x7FFFFFFF - bits


def tokens_match(expected: str, actual: str, ulps: int) -> bool:
    """One whitespace-separated token: equal text, or floats at most `ulps` f32 ulps apart.

    `nan` matches only `nan` and an infinity only itself; tokens that are not floats (bools)
    must be equal.
    """
    if expected == actual:
        return True
    a, b = _f32_bits(expected), _f32_bits(actual)
    if a is None or b is None:
        return False
    infinite = {0x7F800000, 0xFF800000}
    if a in infinite or b in infinite:
        return False
    return abs(_ordered(a) - _ordered(b)) <= ulps


def lines_match(expected: str, actual: str, ulps: int | None) -> bool:
    if expected == actual:
        return True
    if ulps is None:
        return False
    want, got = expected.split(" "), actual.split(" ")
    return len(want) == len(got) and all(
        tokens_match(w, g, ulps) for w, g in zip(want, got, strict=True)
    )


def first_difference(
    expected: tuple[str, ...], actual: tuple[str, ...], ulps: int | None
) -> int | None:
    """The index of the first line that differs, or None when all match."""
    for i, (want, got) in enumerate(zip(expected, actual, strict=False)):
        if not lines_match(want, got, ulps):
            return i
    if len(expected) != len(actual):
        return min(len(expected), len(actual))
    return None


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def judge(test: TestFile, outcome: Outcome) -> Judgement:
    """The verdict on one run of `test`."""
    actual = output_lines(outcome.stdout)
    if outcome.status is Status.CANNOT_START:
        return Judgement(Verdict.CANNOT_START, outcome.message, actual)
    if outcome.status is Status.TIMEOUT:
        return Judgement(Verdict.TIMEOUT, "still running at the wall-clock limit: killed", actual)
    if outcome.status is Status.OUTPUT_LIMIT:
        return Judgement(Verdict.OUTPUT_LIMIT, "wrote more output than the limit: killed", actual)
    if outcome.status is Status.SIGNALED:
        assert outcome.signal is not None
        if outcome.signal == signal.SIGXCPU:
            return Judgement(Verdict.TIMEOUT, "past the CPU-time limit (SIGXCPU)", actual)
        return Judgement(Verdict.CRASH, f"killed by {signal_name(outcome.signal)}", actual)
    if outcome.exit_code != test.expected_exit:
        detail = f"exit code {outcome.exit_code}, expected {test.expected_exit}"
        return Judgement(Verdict.WRONG_EXIT, detail, actual)
    index = first_difference(test.expected_lines, actual, test.tolerance_ulp)
    if index is None:
        return Judgement(Verdict.PASS, "", actual)
    want = test.expected_lines[index] if index < len(test.expected_lines) else "(no line)"
    got = actual[index] if index < len(actual) else "(no line)"
    return Judgement(Verdict.FAIL, f"line {index + 1}: expected {want!r}, got {got!r}", actual)
