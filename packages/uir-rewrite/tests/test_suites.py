"""Every suite program that runs prints its `# expect:` lines (worked out by hand) before the
passes, after each pass alone and after the whole pipeline, and every result still verifies
(week 2's memory programs included: the passes rebuild LOADs, STOREs and AFTERs over simplified
indices and values, and must not change what they do; week 3's loop programs too: the passes
must keep every STORE in the loops its END lists, and every gated index provable; rangeify must
turn week 1's vector arithmetic into loops that print the same)."""

from __future__ import annotations

from pathlib import Path

import pytest

from uir.cli.grading.judge import first_difference
from uir.cli.grading.testfile import TestFile, read_test
from uir.core import parse, verify
from uir.core.interpret import evaluate, load
from uir.core.output import format_value
from uir.core.parse import Program
from uir.rewrite.passes import fold, inline, rangeify, simplify

ROOT = Path(__file__).resolve().parents[3]
TESTS = [
    test
    for week in ("week1", "week2", "week3", "week4", "week5", "week6", "week7", "week8")
    for path in sorted((ROOT / "suites" / week).glob("*.uir"))
    # the big_ programs of weeks 4 and 5 hold up to 2^24 + 5 elements: the interpreter runs them
    # as whole arrays in a second, but their rangeified loops one element at a time, for minutes;
    # week 6's big_ and time_ programs hold 2^24 to 2^28 (suites/week6/README.md)
    if not (week in ("week4", "week5", "week6") and path.name.startswith(("big_", "time_")))
    if (test := read_test(str(path))).expected_exit == 0
]


def printed(sink) -> tuple[str, ...]:
    return tuple(format_value(v, s.dtype) for v, s in zip(evaluate(sink), sink.src, strict=True))


def assert_prints_expected(test: TestFile, sink, when: str) -> None:
    """The output lines are the test's, within its `# tolerance:` if it has one."""
    lines = printed(sink)
    index = first_difference(test.expected_lines, lines, test.tolerance)
    assert index is None, f"{when}, line {index + 1}: expected {test.expected_lines}, got {lines}"


def assert_keeps_meaning(test: TestFile, before, after, when: str) -> None:
    verify(Program(after, {}))
    assert_prints_expected(test, after, when)
    assert printed(after) == printed(before)  # within a tolerance too: every bit kept


IDS = [f"{Path(t.path).parent.name}/{t.name}" for t in TESTS]


@pytest.mark.parametrize("test", TESTS, ids=IDS)
def test_every_suite_program_prints_what_it_expects_before_and_after_the_passes(test):
    program = parse(test.program, test.path)
    verify(program)
    assert_prints_expected(test, program.sink, "before the passes")
    optimized = rangeify(simplify(fold(inline(program.sink))))
    assert_keeps_meaning(test, program.sink, optimized, "after the passes")


@pytest.mark.parametrize("test", TESTS, ids=IDS)
def test_every_pass_alone_keeps_every_suite_program(test):
    program = parse(test.program, test.path)
    for run in (inline, fold, simplify, rangeify):
        assert_keeps_meaning(test, program.sink, run(program.sink), f"after {run.__name__} alone")


@pytest.mark.parametrize("test", TESTS, ids=IDS)
def test_loops_in_lanes_print_what_one_iteration_at_a_time_prints(test):
    # uir.core.lanes: the interpreter runs a block of iterations per statement where it can;
    # one iteration at a time (scalar.py on Python numbers) is the other path, sharing no
    # arithmetic with the lanes (semantics.py on arrays)
    lowered = rangeify(simplify(fold(inline(parse(test.program, test.path).sink))))
    in_lanes, one_by_one = (
        [format_value(v, s.dtype) for v, s in zip(outputs, lowered.src, strict=True)]
        for outputs in (load(lowered, lanes=on).run()[0] for on in (True, False))
    )
    assert in_lanes == one_by_one


def test_the_suites_are_there():
    assert len(TESTS) > 100
    assert sum(Path(t.path).parent.name == "week3" for t in TESTS) > 40
    assert sum(Path(t.path).parent.name == "week4" for t in TESTS) > 80
    assert sum(Path(t.path).parent.name == "week6" for t in TESTS) > 100
