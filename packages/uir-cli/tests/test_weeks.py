"""The week a test needs, judged by what its program uses (uir.cli.grading.weeks): ops, and
uses of earlier ops that a later week brings (spec/grading.md section 13)."""

from __future__ import annotations

from pathlib import Path

import pytest

from uir.cli.grading.testfile import read_test
from uir.cli.grading.validate import identity_of
from uir.cli.grading.weeks import features, later_than
from uir.cli.main import main
from uir.core import parse

ROOT = Path(__file__).resolve().parents[3]

# name -> (program, the week that first allows it, what a week before it names).
PROGRAMS = {
    "fast_range": (
        "%b = BUFFER i32[3] 0\n%n = CONST i32 3\n%i = RANGE i32 %n (0, FAST)\n"
        "%p = INDEX i32 %b %i\n%s = STORE void %p %i\n%e = END void %s %i\n"
        "%a = AFTER i32[3] %b %e\n%out = SINK void %a\n",
        8,
        "a FAST RANGE, of week 8",
    ),
    "shrink_of_value": (
        "%v = CONST i32[4] (1, 2, 3, 4)\n%w = SHRINK i32[2] %v ((1, 3))\n%out = SINK void %w\n",
        5,
        "a SHRINK of a value, of week 5",
    ),
    "stack_of_vectors": (
        "%v = CONST i32[2] (1, 2)\n%s = STACK i32[2,2] %v %v\n%out = SINK void %s\n",
        5,
        "a STACK of shaped values, of week 5",
    ),
    "reduce_two_axes": (
        "%m = CONST i32[1,2] (1, 2)\n%r = REDUCE i32 %m (ADD, (0, 1))\n%out = SINK void %r\n",
        5,
        "a REDUCE over several axes, of week 5",
    ),
    "rank_two_const": (
        "%m = CONST i32[2,2] (1, 2, 3, 4)\n%out = SINK void %m\n",
        5,
        "a shape of rank 2 or more, of week 5",
    ),
    "shaped_add": (
        "%v = CONST i32[2] (1, 2)\n%a = ADD i32[2] %v %v\n%out = SINK void %a\n",
        4,
        "an elementwise op on shaped values, of week 4",
    ),
    "whole_buffer_load": (
        "%b = BUFFER i32[2] 0\n%v = LOAD i32[2] %b\n%out = SINK void %v\n",
        4,
        "a whole-buffer LOAD or STORE, of week 4",
    ),
    "parallel_range": (
        "%o = BUFFER i32[2] 0\n%n = CONST i32 2\n%k = RANGE i32 %n (0, PARALLEL)\n"
        "%p = INDEX i32 %o %k\n%s = STORE void %p %k\n%e = END void %s %k\n"
        "%o1 = AFTER i32[2] %o %e\n%out = SINK void %o1\n",
        7,
        "a PARALLEL RANGE, of week 7",
    ),
}


def _late(text: str, week: int, rejected: bool = False) -> list[str]:
    return [f.what for f in later_than(features(parse(text).sink.toposort()), week, rejected)]


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_later_use_of_an_earlier_op_needs_its_week(name: str) -> None:
    text, week, what = PROGRAMS[name]
    assert what in _late(text, week - 1)
    assert _late(text, week) == []


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_rejection_test_may_misuse_an_earlier_op(name: str) -> None:
    # Only ops count in a test that expects exit 3: every op here is of week 4 or earlier
    # (STACK, SHRINK, CONST, ADD, LOAD: weeks 1-2; REDUCE: week 4; RANGE: week 3).
    text, _, what = PROGRAMS[name]
    assert what not in _late(text, 1, rejected=True)


def test_one_axis_rank_one_and_memory_windows_stay_in_their_weeks() -> None:
    reduce_one = "%v = CONST i32[3] (1, 2, 3)\n%r = REDUCE i32 %v (ADD, (0))\n%out = SINK void %r\n"
    assert _late(reduce_one, 4) == []
    window = "%b = BUFFER i32[4] 0\n%w = SHRINK i32[2] %b ((1, 3))\n%out = SINK void %w\n"
    assert _late(window, 2) == []
    stack = "%a = CONST i32 1\n%s = STACK i32[2] %a %a\n%out = SINK void %s\n"
    assert _late(stack, 1) == []
    assert _late(stack.replace("%out = SINK void %s", "%out = SINK void %a"), 1) == []


def test_every_suite_test_keeps_to_its_week() -> None:
    for week in (1, 2, 3, 4):
        for path in sorted((ROOT / "suites" / f"week{week}").glob("*.uir")):
            test = read_test(str(path))
            _, used = identity_of(test)
            if used is not None:
                late = later_than(used, week, rejected=test.expected_exit != 0)
                assert late == [], f"{path.name}: {late}"


def test_validate_tests_rejects_a_week_5_shrink_in_week_4(tmp_path: Path, capsys) -> None:
    text, _, what = PROGRAMS["shrink_of_value"]
    (tmp_path / "t").mkdir()
    (tmp_path / "suite").mkdir()
    (tmp_path / "t" / "shrink.uir").write_text("# expect: 2 3\n" + text)  # elements 1 and 2
    (tmp_path / "suite" / "one.uir").write_text(
        "# expect: 1\n%a = CONST i32 1\n%o = SINK void %a\n"
    )
    for week, status in ((4, 5), (5, 0)):
        argv = ["validate-tests", str(tmp_path / "t"), "--week", str(week), "--runs", "1"]
        assert main([*argv, "--suite", str(tmp_path / "suite")]) == status
    assert f"uses {what}, not allowed in week 4" in capsys.readouterr().out
