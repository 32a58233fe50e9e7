"""Judging a run: exact lines, the ulp and rel/abs tolerances, and the verdict for each way a run
ends."""

from __future__ import annotations

import signal

import pytest

from uir.cli.grading.judge import Verdict, judge, lines_match, output_lines, tokens_match
from uir.cli.grading.sandbox import Outcome, RunStatus
from uir.cli.grading.testfile import Tolerance, parse_test

PROGRAM = "%a = CONST i32 5\n%out = SINK void %a\n"


def _exited(stdout: bytes, code: int = 0) -> Outcome:
    return Outcome(RunStatus.EXITED, code, None, stdout, b"", 0.1)


def test_output_must_match_byte_for_byte() -> None:
    test = parse_test("# expect: 1 2\n# expect: 3\n" + PROGRAM, "t")
    assert judge(test, _exited(b"1 2\n3\n")).verdict is Verdict.PASS
    missing_newline = judge(test, _exited(b"1 2\n3"))
    assert missing_newline.verdict is Verdict.FAIL
    assert "line feed" in missing_newline.detail
    assert judge(test, _exited(b"1 2\r\n3\r\n")).verdict is Verdict.FAIL
    assert judge(test, _exited(b"1 2\n3\n\n")).verdict is Verdict.FAIL


def test_a_final_newline_ends_the_last_line() -> None:
    assert output_lines(b"1\n2\n") == ("1", "2")
    assert output_lines(b"1\n2") == ("1", "2")
    assert output_lines(b"") == ()
    assert output_lines(b"\n") == ("",)


def test_without_a_tolerance_lines_compare_exactly() -> None:
    assert lines_match("1 2", "1 2", None)
    assert not lines_match("1 2", "1  2", None)
    assert not lines_match("1", "1.0", None)
    assert not lines_match("5", "5 ", None)


# f32 neighbours worked out from their bit patterns: 1.0 is 0x3F800000, the next up 0x3F800001
# is 1 + 2**-23 = 1.00000012, the next down 0x3F7FFFFF is 1 - 2**-24 = 0.99999994.
@pytest.mark.parametrize(
    ("expected", "actual", "ulps", "match"),
    [
        ("1", "1.00000012", 1, True),
        ("1", "0.99999994", 1, True),
        ("1", "1.00000024", 1, False),  # two ulps up
        ("1", "1.00000024", 2, True),
        ("0.99999994", "1.00000012", 2, True),  # across the binade: one down, one up
        ("nan", "nan", 2, True),
        ("nan", "1", 2, False),
        ("1", "nan", 2, False),
        ("inf", "inf", 2, True),
        ("inf", "3.40282347e+38", 1, True),  # the largest finite f32 and inf are neighbours
        ("inf", "3.40282347e+38", 0, False),
        ("-inf", "inf", 2, False),
        ("0", "-0", 0, True),  # -0 and +0 share one place
        ("0", "1.40129846e-45", 1, True),  # the smallest subnormal
        ("-1.40129846e-45", "1.40129846e-45", 1, False),  # two places apart
        ("-1.40129846e-45", "1.40129846e-45", 2, True),
        ("true", "true", 2, True),
        ("true", "false", 2, False),
        ("1", "1_0", 100, False),  # Python's float() spellings are not outputs
        ("1", "Infinity", 100, False),
        ("1", "\u0661", 100, False),  # an Arabic-Indic one is not an output's digit
    ],
)
def test_the_tolerance_counts_f32_ulps(expected: str, actual: str, ulps: int, match: bool) -> None:
    assert tokens_match(expected, actual, Tolerance(ulp=ulps)) is match


def test_a_tolerance_compares_each_token_of_a_line() -> None:
    assert lines_match("1 2", "1.00000012 2", Tolerance(ulp=1))
    assert not lines_match("1 2", "1.00000012", Tolerance(ulp=1))


# |got - want| <= A + R * |want|, worked by hand: 100 within 1e-2 rel allows 1 either side, and
# 1e-3 abs adds 0.001 whatever the value.
@pytest.mark.parametrize(
    ("expected", "actual", "tolerance", "match"),
    [
        ("100", "101", Tolerance(rel=0.01), True),
        ("100", "98.99", Tolerance(rel=0.01), False),
        ("-100", "-99.5", Tolerance(rel=0.01), True),  # |want| scales the bound
        ("0", "1e-07", Tolerance(rel=0.5), False),  # rel alone allows nothing at zero
        ("0", "1e-07", Tolerance(abs=1e-06), True),
        ("0", "-0.000002", Tolerance(abs=1e-06), False),
        ("100", "101.001", Tolerance(rel=0.01, abs=0.002), True),  # 1 + 0.002
        ("100", "101.003", Tolerance(rel=0.01, abs=0.002), False),
        ("1e+30", "1.0000001e+30", Tolerance(rel=1e-6), True),  # f32 and f64 spellings alike
        ("1.5", "1.5000000000000002", Tolerance(abs=1e-12), True),
        ("nan", "nan", Tolerance(rel=1.0), True),  # nan only matches nan
        ("nan", "1", Tolerance(abs=1e30), False),
        ("1", "nan", Tolerance(abs=1e30), False),
        ("inf", "inf", Tolerance(rel=1.0), True),  # an infinity only itself
        ("inf", "3.40282347e+38", Tolerance(rel=1.0), False),
        ("3.40282347e+38", "inf", Tolerance(rel=1.0), False),
        ("-inf", "inf", Tolerance(abs=1e30), False),
        ("true", "false", Tolerance(abs=10.0), False),
        ("1", "1_0", Tolerance(abs=100.0), False),
    ],
)
def test_a_rel_abs_tolerance_bounds_the_difference(
    expected: str, actual: str, tolerance: Tolerance, match: bool
) -> None:
    assert tokens_match(expected, actual, tolerance) is match


def test_a_tolerance_applies_to_float_outputs_only() -> None:
    # Two outputs, an i32 then an f32: 5 vs 6 is within 1 abs but the i32 line must be exact.
    program = "%a = CONST i32 5\n%b = CONST f32 0.5\n%out = SINK void %a %b\n"
    test = parse_test("# tolerance: 1 abs\n# expect: 5\n# expect: 0.5\n" + program, "t")
    assert test.tolerance.float_lines == (False, True)
    assert judge(test, _exited(b"5\n1.25\n")).verdict is Verdict.PASS
    wrong = judge(test, _exited(b"6\n0.5\n"))
    assert (wrong.verdict, wrong.detail) == (Verdict.FAIL, "line 1: expected '5', got '6'")
    assert judge(test, _exited(b"5\n1.6\n")).verdict is Verdict.FAIL  # 1.1 away


def test_verdicts_for_each_ending() -> None:
    test = parse_test("# expect: 5\n" + PROGRAM, "t")
    assert judge(test, _exited(b"5\n")).verdict is Verdict.PASS
    assert judge(test, _exited(b"6\n")).verdict is Verdict.FAIL
    assert judge(test, _exited(b"5\n6\n")).verdict is Verdict.FAIL
    assert judge(test, _exited(b"")).verdict is Verdict.FAIL
    assert judge(test, _exited(b"5\n", 4)).verdict is Verdict.WRONG_EXIT
    crashed = Outcome(RunStatus.SIGNALED, None, signal.SIGSEGV, b"5\n", b"", 0.1)
    assert judge(test, crashed).verdict is Verdict.CRASH
    out_of_cpu = Outcome(RunStatus.SIGNALED, None, signal.SIGXCPU, b"", b"", 0.1)
    assert judge(test, out_of_cpu).verdict is Verdict.TIMEOUT
    assert (
        judge(test, Outcome(RunStatus.TIMEOUT, None, None, b"5\n", b"", 9)).verdict
        is Verdict.TIMEOUT
    )
    flood = Outcome(RunStatus.OUTPUT_LIMIT, None, None, b"5\n", b"", 1)
    assert judge(test, flood).verdict is Verdict.OUTPUT_LIMIT
    missing = Outcome(RunStatus.CANNOT_START, None, None, b"", b"", 0, "uirc: not found")
    assert judge(test, missing).verdict is Verdict.CANNOT_START


def test_an_error_test_fails_when_anything_is_printed() -> None:
    test = parse_test("# expect-exit: 3\n" + PROGRAM, "t")
    assert judge(test, _exited(b"", 3)).verdict is Verdict.PASS
    assert judge(test, _exited(b"5\n", 3)).verdict is Verdict.FAIL
