"""Judging one run against its test: the verdicts of spec/grading.md.

Standard output must equal the expected lines, each ended by a line feed, byte for byte
(spec/uir-week1.md section 12). A test declaring a tolerance instead compares line by line and
token by token, each pair of tokens of a float output as f32 values at most N ulp apart
(`N ulp`), or as numbers with |got - want| <= A + R * |want| (`R rel`, `A abs`, uir.md 10.3).
"""

from __future__ import annotations

import enum
import math
import re
import signal
import struct
from dataclasses import dataclass

from .sandbox import Outcome, RunStatus
from .testfile import TestFile, Tolerance

# A finite float or an infinity as uir.md section 11 prints it (`nan` matches only itself).
FLOAT_TOKEN = re.compile(r"-?(?:(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?|inf)", re.ASCII)


class Verdict(enum.Enum):
    PASS = "pass"
    FAIL = "fail"  # the right exit code, the wrong standard output
    WRONG_EXIT = "wrong-exit"  # the wrong exit code
    TIMEOUT = "timeout"  # past the wall-clock or CPU-time limit
    CRASH = "crash"  # killed by a signal
    OUTPUT_LIMIT = "output-limit"  # standard output or error over the cap
    CANNOT_START = "cannot-start"  # the compiler could not be started
    BAD_TEST = "bad-test"  # the test file itself is malformed; nothing ran
    UNDEFINED = "undefined-behaviour"  # --render: the sanitizers caught the C misbehaving


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    detail: str  # one line saying why, empty for a pass
    actual_lines: tuple[str, ...]


def output_lines(stdout: bytes) -> tuple[str, ...]:
    """Standard output as lines; a final line feed ends the last line rather than starting one."""
    text = stdout.decode("utf-8", errors="replace")
    if not text:
        return ()
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return tuple(lines)


def expected_output(lines: tuple[str, ...]) -> bytes:
    return "".join(line + "\n" for line in lines).encode("utf-8")


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


def _position(bits: int) -> int:
    """The place of an f32 in the ordered sequence of all non-NaN f32 values, -0 and +0 sharing
    one (spec/uir-week1.md section 12): the largest finite value and inf are neighbours."""
    magnitude = bits & 0x7FFFFFFF
    return -magnitude if bits >> 31 else magnitude


def _number(token: str) -> float | None:
    """An output token read as a number, in the spellings of uir.md section 11, or None."""
    return float(token) if FLOAT_TOKEN.fullmatch(token) else None


def tokens_match(expected: str, actual: str, tolerance: Tolerance) -> bool:
    """One space-separated token: equal text, or numbers within `tolerance`.

    `nan` matches only `nan` and an infinity only itself; tokens that are not numbers (bools)
    must be equal.
    """
    if expected == actual:
        return True
    if tolerance.ulp is not None:
        a, b = _f32_bits(expected), _f32_bits(actual)
        return a is not None and b is not None and abs(_position(a) - _position(b)) <= tolerance.ulp
    want, got = _number(expected), _number(actual)
    if want is None or got is None or math.isinf(want) or math.isinf(got):
        return False
    return abs(got - want) <= (tolerance.abs or 0.0) + (tolerance.rel or 0.0) * abs(want)


def lines_match(expected: str, actual: str, tolerance: Tolerance | None, line: int = 0) -> bool:
    """Output line number `line` (from 0) against its expected text."""
    if expected == actual:
        return True
    if tolerance is None or not tolerance.applies_to(line):
        return False
    want, got = expected.split(" "), actual.split(" ")
    return len(want) == len(got) and all(
        tokens_match(w, g, tolerance) for w, g in zip(want, got, strict=True)
    )


def first_difference(
    expected: tuple[str, ...], actual: tuple[str, ...], tolerance: Tolerance | None
) -> int | None:
    """The index of the first line that differs, or None when all match."""
    for i, (want, got) in enumerate(zip(expected, actual, strict=False)):
        if not lines_match(want, got, tolerance, i):
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
    if outcome.status is RunStatus.CANNOT_START:
        return Judgement(Verdict.CANNOT_START, outcome.message, actual)
    if outcome.status is RunStatus.TIMEOUT:
        return Judgement(Verdict.TIMEOUT, "still running at the wall-clock limit: killed", actual)
    if outcome.status is RunStatus.OUTPUT_LIMIT:
        return Judgement(Verdict.OUTPUT_LIMIT, "wrote more output than the limit: killed", actual)
    if outcome.status is RunStatus.SIGNALED:
        assert outcome.signal is not None
        if outcome.signal == signal.SIGXCPU:
            return Judgement(Verdict.TIMEOUT, "past the CPU-time limit (SIGXCPU)", actual)
        return Judgement(Verdict.CRASH, f"killed by {signal_name(outcome.signal)}", actual)
    if outcome.exit_code != test.expected_exit:
        detail = f"exit code {outcome.exit_code}, expected {test.expected_exit}"
        return Judgement(Verdict.WRONG_EXIT, detail, actual)
    if not test.tolerance and outcome.stdout == expected_output(test.expected_lines):
        return Judgement(Verdict.PASS, "", actual)
    index = first_difference(test.expected_lines, actual, test.tolerance)
    if index is None:
        if outcome.stdout and not outcome.stdout.endswith(b"\n"):
            return Judgement(Verdict.FAIL, "the last line does not end with a line feed", actual)
        if test.tolerance:
            return Judgement(Verdict.PASS, "", actual)
        # Equal lines, unequal bytes: what differs is invisible once split into lines.
        return Judgement(Verdict.FAIL, "the output differs in bytes the lines do not show", actual)
    want = test.expected_lines[index] if index < len(test.expected_lines) else "(no line)"
    got = actual[index] if index < len(actual) else "(no line)"
    return Judgement(Verdict.FAIL, f"line {index + 1}: expected {want!r}, got {got!r}", actual)
