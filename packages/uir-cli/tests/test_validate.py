"""`uir validate-tests`: students' tests judged by their directives, the reference's answers over
repeated runs, the ops of the week, and duplicates; and the table of ops per week."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from uir.cli.grading.harness import TestResult
from uir.cli.grading.judge import Verdict
from uir.cli.grading.limits import Limits
from uir.cli.grading.validate import canonical_program, reference_reasons
from uir.cli.main import main
from uir.core.ops import Op, ops_of_week, week_of

FORTY_TWO = "%x = CONST i32 40\n%y = CONST i32 2\n%s = ADD i32 %x %y\n%out = SINK void %s\n"

# Only a hang guard: the reference's wall-clock limit (10 s by default) fired on two of these
# tests under a load of 9 on 2 cores. What these tests check never depends on the reference's
# speed, and its CPU-time limit still stops a runaway run.
HANG_GUARD = ["--timeout", "600"]


def test_the_weeks_introduce_every_op_once() -> None:
    assert ops_of_week(9) == frozenset(Op)
    assert ops_of_week(8) == ops_of_week(5) == frozenset(Op) - {Op.GRAD}  # weeks 6-8 add no ops
    assert ops_of_week(10) == ops_of_week(9)
    week1 = ops_of_week(1)
    assert {Op.SINK, Op.CONST, Op.PARAM, Op.CALL, Op.STACK, Op.INDEX, Op.ADD, Op.WHERE} <= week1
    assert Op.BUFFER not in week1 and Op.LOAD in ops_of_week(2) and Op.RANGE not in ops_of_week(2)
    assert [week_of(op) for op in (Op.BITCAST, Op.AFTER, Op.END, Op.STAGE, Op.FLIP)] == [
        1,
        2,
        3,
        4,
        5,
    ]


def _ops(used) -> set[str]:
    return {f.what.partition(",")[0] for f in used if f.is_op}


def test_canonical_programs_ignore_names_spacing_and_comments() -> None:
    renamed = "# a comment\n%a = CONST i32 40\n%b   = CONST i32 2\n"
    renamed += "%c = ADD i32 %a %b\n%o = SINK void %c\n"
    assert canonical_program(renamed) == canonical_program(FORTY_TWO)
    text, used = canonical_program(FORTY_TWO)
    assert _ops(used) == {"CONST", "ADD", "SINK"}
    assert canonical_program(FORTY_TWO.replace("40", "41"))[0] != text


def test_a_dead_statement_keeps_a_program_apart() -> None:
    dead = FORTY_TWO.replace("%out", "%d = CONST i32 7\n%out")
    text, used = canonical_program(dead)
    assert text != canonical_program(FORTY_TWO)[0]
    assert _ops(used) == {"CONST", "ADD", "SINK"}  # the ops it runs: the dead CONST is not run


def test_programs_that_do_not_parse_compare_by_their_statements() -> None:
    a, ops = canonical_program("%x = FOO i32   # one\n%o = SINK void\n")
    assert ops is None
    assert a == canonical_program("\n%x  =  FOO i32\n\n%o = SINK void # two\n")[0]
    assert a != canonical_program("%y = FOO i32\n%o = SINK void\n")[0]


def _result(verdict: Verdict, lines: tuple[str, ...], detail: str = "") -> TestResult:
    return TestResult("t.uir", verdict, detail, 0, 0, None, ("1",), lines, None, "", 0.1)


def test_runs_that_pass_but_differ_are_not_deterministic() -> None:
    same = [_result(Verdict.PASS, ("1",))] * 3
    assert reference_reasons(same, Limits()) == []
    # With a tolerance, two different outputs may both pass: still not deterministic.
    differ = [_result(Verdict.PASS, ("1",)), _result(Verdict.PASS, ("1.0000001",))]
    assert reference_reasons(differ, Limits()) == [
        "not deterministic: 2 runs of the reference gave 2 outputs"
    ]
    slow = [_result(Verdict.PASS, ("1",)), _result(Verdict.TIMEOUT, ())]
    assert "takes too long" in reference_reasons(slow, Limits(wall_s=2.0))[0]


def _write(directory: Path, name: str, text: str) -> None:
    path = directory / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def submitted(tmp_path: Path) -> tuple[Path, Path]:
    """A suite of one test and a directory of students' tests, each with one known fault."""
    suite, tests = tmp_path / "suite", tmp_path / "submitted"
    _write(
        suite,
        "five.uir",
        "# expect: 5\n%a = CONST i32 2\n%b = CONST i32 3\n"
        "%c = ADD i32 %a %b\n%out = SINK void %c\n",
    )
    _write(tests, "alice/good.uir", "# expect: 42\n" + FORTY_TWO)  # 40 + 2
    _write(tests, "alice/wrong.uir", "# expect: 41\n" + FORTY_TWO)
    _write(
        tests,
        "alice/suite_copy.uir",
        "# expect: 5\n# renamed\n%p = CONST i32 2\n"
        "%q = CONST i32 3\n%r = ADD i32 %p %q\n%o = SINK void %r\n",
    )
    _write(tests, "bob/again.uir", "# expect: 42\n" + FORTY_TWO.replace("%x", "%first"))
    _write(tests, "bob/bad_directive.uir", "# expect-exit: three\n%o = SINK void\n")
    _write(
        tests,
        "bob/memory.uir",
        "# expect: 0\n%b = BUFFER i32[1] 0\n%z = CONST i32 0\n"
        "%p = INDEX i32 %b %z\n%v = LOAD i32 %p\n%out = SINK void %v\n",
    )
    _write(tests, "bob/parse_error.uir", "# expect-exit: 2\n%x = FOO i32\n%o = SINK void\n")
    _write(
        tests, "bob/verify_says_2.uir", "# expect-exit: 2\n" + FORTY_TWO.replace("i32 %x", "f32 %x")
    )
    _write(tests, "bob/notes.txt", "not a test\n")
    return suite, tests


def test_each_rejected_test_says_why(
    submitted: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite, tests = submitted
    report = tmp_path / "report.json"
    argv = [
        "validate-tests",
        str(tests),
        "--week",
        "1",
        "--suite",
        str(suite),
        "--jobs",
        "2",
        *HANG_GUARD,
    ]
    assert main([*argv, "--json", str(report)]) == 5
    document = json.loads(report.read_text())
    reasons = {t["name"]: t["reasons"] for t in document["tests"]}
    assert [name for name, why in reasons.items() if not why] == [
        "alice/good.uir",
        "bob/parse_error.uir",  # the reference agrees: FOO is no op, exit 2
    ]
    assert reasons["alice/wrong.uir"] == [
        "the reference does not agree: fail: line 1: expected '41', got '42'"
    ]
    assert reasons["alice/suite_copy.uir"] == [f"a duplicate of the suite's {suite / 'five.uir'}"]
    assert reasons["bob/again.uir"] == ["a duplicate of alice/good.uir, submitted first (by name)"]
    assert reasons["bob/bad_directive.uir"][0].startswith("malformed: line 1: malformed directive")
    assert reasons["bob/memory.uir"] == [
        "uses BUFFER, an op of week 2, not allowed in week 1",
        "uses LOAD, an op of week 2, not allowed in week 1",
    ]
    # An ADD of f32 on i32 operands is a verification error, exit 3, not the 2 expected.
    assert reasons["bob/verify_says_2.uir"] == [
        "the reference does not agree: wrong-exit: exit code 3, expected 2"
    ]
    assert reasons["bob/notes.txt"] == ["not a test: only .uir files are tests"]
    assert document["totals"] == {"files": 9, "valid": 2, "rejected": 7}
    assert document["week"] == 1 and document["runs"] == 3
    # Copies are correct tests, told apart from wrong ones (the gradebook's tests component).
    status = {t["name"]: t["status"] for t in document["tests"]}
    assert [n for n, s in status.items() if s == "duplicate"] == [
        "alice/suite_copy.uir",
        "bob/again.uir",
    ]
    assert [n for n, s in status.items() if s == "valid"] == [
        n for n, w in reasons.items() if not w
    ]
    good = hashlib.sha256((tests / "alice" / "good.uir").read_bytes()).hexdigest()
    assert document["tests"][0]["name"] == "alice/good.uir"
    assert document["tests"][0]["sha256"] == good
    out = capsys.readouterr().out
    assert "rejected alice/wrong.uir:\n  the reference does not agree" in out
    assert out.endswith("week 1: 9 files, 2 valid tests, 7 rejected\n")


def test_week_2_allows_memory_and_all_valid_exits_0(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "t/memory.uir",
        "# expect: 0\n%b = BUFFER i32[1] 0\n%z = CONST i32 0\n"
        "%p = INDEX i32 %b %z\n%v = LOAD i32 %p\n%out = SINK void %v\n",
    )
    _write(tmp_path, "t/add.uir", "# expect: 42\n" + FORTY_TWO)
    _write(tmp_path, "suite/other.uir", "# expect: 41\n" + FORTY_TWO.replace("2\n", "1\n", 1))
    argv = ["validate-tests", str(tmp_path / "t"), "--week", "2", "--runs", "2", *HANG_GUARD]
    assert main([*argv, "--suite", str(tmp_path / "suite")]) == 0
    # The same tests as the suite: each is a duplicate of itself there.
    assert main([*argv, "--suite", str(tmp_path / "t")]) == 5


@pytest.mark.parametrize(
    "argv",
    [
        ["validate-tests", "/no/such/dir", "--week", "1"],
        ["validate-tests", ".", "--week", "0"],
        ["validate-tests", "."],
    ],
)
def test_usage_errors_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    assert "error" in capsys.readouterr().err


def test_a_file_name_that_is_not_utf8_is_reported_escaped(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "good.uir").write_text("# expect: 42\n" + FORTY_TWO)
    (tmp_path / os.fsdecode(b"t/caf\xe9.txt")).write_text("junk\n")
    report = tmp_path / "report.json"
    argv = [
        "validate-tests",
        str(tmp_path / "t"),
        "--week",
        "1",
        "--suite",
        str(tmp_path / "t"),
        *HANG_GUARD,
    ]
    assert main([*argv, "--runs", "1", "--json", str(report)]) == 5
    names = [t["name"] for t in json.loads(report.read_text())["tests"]]
    assert names == ["caf\\xe9.txt", "good.uir"]


# 1/3 in f32 prints 0.333333343; 0.3333 is 1e-4 away, so 1e-3 rel passes it and 1e-5 rel does not.
THIRD = "%a = CONST f32 1\n%b = CONST f32 3\n%c = FDIV f32 %a %b\n%out = SINK void %c\n"


@pytest.mark.parametrize(("week", "code"), [(7, 5), (8, 0)])
def test_rel_and_abs_tolerances_are_tests_of_week_8(tmp_path: Path, week: int, code: int) -> None:
    _write(tmp_path, "t/third.uir", "# tolerance: 1e-3 rel\n# expect: 0.3333\n" + THIRD)
    _write(tmp_path, "suite/other.uir", "# expect: 42\n" + FORTY_TWO)
    report = tmp_path / "r.json"
    argv = ["validate-tests", str(tmp_path / "t"), "--week", str(week), "--runs", "1", *HANG_GUARD]
    assert main([*argv, "--suite", str(tmp_path / "suite"), "--json", str(report)]) == code
    [test] = json.loads(report.read_text())["tests"]
    if week < 8:
        assert test["reasons"] == ["uses a tolerance in rel/abs, of week 8, not allowed in week 7"]
    else:
        assert test["reasons"] == []


def test_a_tolerance_too_tight_for_the_reference_is_rejected(tmp_path: Path) -> None:
    _write(tmp_path, "t/third.uir", "# tolerance: 1e-5 rel\n# expect: 0.3333\n" + THIRD)
    report = tmp_path / "r.json"
    argv = ["validate-tests", str(tmp_path / "t"), "--week", "8", "--runs", "1", *HANG_GUARD]
    assert main([*argv, "--suite", str(tmp_path / "t"), "--json", str(report)]) == 5
    [test] = json.loads(report.read_text())["tests"]
    assert test["reasons"][0].startswith("the reference does not agree: fail: line 1: expected")
