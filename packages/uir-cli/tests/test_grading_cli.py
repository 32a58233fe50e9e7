"""`uir test` and `uir mutants` on the command line: output, exit status, the JSON report."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from uir.cli.grading.guide import load_caught
from uir.cli.grading.isolation import SANDBOX_PATH
from uir.cli.main import main

HERE = Path(__file__).resolve().parent
SUITE = HERE / "fixtures" / "suite"
FAKE = HERE / "fixtures" / "compilers" / "fake_compiler.py"
# A --compiler runs in the sandbox, which has the system's Python, not this installation's.
PYTHON = shutil.which("python3", path=SANDBOX_PATH) or sys.executable


def test_a_passing_suite_exits_0_with_a_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(SUITE), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "5 of 5 passed: all passed" in out
    assert "pass" in out


def test_failures_exit_5_and_show_expected_and_actual(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    command = f"{PYTHON} {FAKE} answer-6"
    argv = ["test", str(SUITE / "add.uir"), "--compiler", command, "--json", str(report), "-v"]
    assert main(argv) == 5
    out = capsys.readouterr().out
    assert "add.uir: fail: line 1: expected '5', got '6'" in out
    assert "  expected (exit 0):\n    5\n  actual (exit 0):\n    6" in out
    document = json.loads(report.read_text())
    assert document["schema_version"] == 1
    assert document["kind"] == "uir-test"
    assert document["totals"]["tests"] == 1
    assert document["totals"]["passed"] == 0
    assert document["totals"]["verdicts"]["fail"] == 1
    (entry,) = document["tests"]
    assert entry["name"] == "add"
    assert entry["verdict"] == "fail"
    assert entry["expected_stdout"] == ["5"] and entry["actual_stdout"] == ["6"]
    assert entry["expected_exit"] == 0 and entry["actual_exit"] == 0
    assert set(entry) == {
        "path",
        "name",
        "verdict",
        "detail",
        "expected_exit",
        "actual_exit",
        "signal",
        "expected_stdout",
        "actual_stdout",
        "tolerance_ulp",
        "tolerance",  # added in schema 1: rel/abs too (uir.md section 10.3)
        "stderr",
        "duration_s",
        "guide",  # spec/grading.md section 12
    }


def test_a_crashing_compiler_is_reported_by_signal(capsys: pytest.CaptureFixture[str]) -> None:
    command = f"{PYTHON} {FAKE} segfault"
    assert main(["test", str(SUITE / "add.uir"), "--compiler", command]) == 5
    assert "crash: killed by SIGSEGV" in capsys.readouterr().out


def test_the_fork_server_gives_the_same_verdicts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(SUITE), "--fork-server"]) == 0
    assert "5 of 5 passed" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["test", "/nonexistent/suite"],
        ["test", str(SUITE), "--compiler", "uirc", "--backend", "c"],
        ["test", str(SUITE), "--compiler", ""],
        ["test", str(SUITE), "--jobs", "0"],
        ["test", str(SUITE), "--timeout", "-1"],
        ["test", str(SUITE), "--fork-server", "--compiler", "uirc"],
        ["mutants", "/nonexistent/suite"],
        ["mutants", str(SUITE)],  # no mutants.toml there
    ],
)
def test_usage_errors_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 1
    assert "error" in capsys.readouterr().err


def test_a_failing_test_shows_its_guide_and_the_failures_are_grouped_by_topic(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    text = (SUITE / "add.uir").read_text()
    lines = text.split("\n")
    first_statement = next(i for i, line in enumerate(lines) if line.startswith("%"))
    lines[first_statement:first_statement] = ["# topic: ADD of ints", "# two plus three is five"]
    (suite / "add.uir").write_text("\n".join(lines))
    (suite / "caught.toml").write_text('[tests]\nadd = ["add-subtracts"]\n')
    report = tmp_path / "report.json"
    command = f"{PYTHON} {FAKE} answer-6"
    argv = ["test", str(suite), "--compiler", command, "--json", str(report), "-v"]
    assert main(argv) == 5
    out = capsys.readouterr().out
    about = "  about this test:\n    2 + 3, worked out by hand.\n    two plus three is five\n"
    assert "  topic: ADD of ints\n" + about in out
    assert (
        "  known to catch these mistakes (planted bugs of `uir mutants`):\n    add-subtracts" in out
    )
    shown = [" ".join(line.split()) for line in out.rstrip("\n").split("\n")]
    at = shown.index("not passed, by topic (1 topic):")
    assert shown[at : at + 4] == [
        "not passed, by topic (1 topic):",
        "ADD of ints 1 test add",
        "mistakes that fit (every test that catches these planted bugs did not pass):",
        "add-subtracts (1 test)",
    ]
    entry = json.loads(report.read_text())["tests"][0]
    assert entry["guide"]["topic"] == "ADD of ints"
    assert entry["guide"]["catches"] == [{"name": "add-subtracts", "description": ""}]
    assert "two plus three is five" in entry["guide"]["explanation"]


def test_an_empty_directory_has_no_tests(tmp_path: Path) -> None:
    assert main(["test", str(tmp_path)]) == 1


def test_mutants_reports_each_bug_and_exits_5_when_one_escapes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(SUITE / "add.uir", suite)
    (suite / "mutants.toml").write_text(
        """
[[mutant]]
name = "add-subtracts"
description = "ADD subtracts"
file = "packages/uir-core/src/uir/core/semantics.py"
find = '''
    Op.ADD: _number(np.add),'''
replace = '''
    Op.ADD: _number(np.subtract),'''

[[mutant]]
name = "mul-squares-the-first"
description = "MUL squares its first operand (the suite has no MUL test)"
file = "packages/uir-core/src/uir/core/semantics.py"
find = '''
    Op.MUL: _number(np.multiply),'''
replace = '''
    Op.MUL: _number(lambda a, b: a * a),'''
"""
    )
    report = tmp_path / "mutants.json"
    # --root: the suite lives outside the repository whose sources are planted in.
    root = str(HERE.parents[2])
    (suite / "caught.toml").write_text('[tests]\nadd = ["bug-of-another-file"]\n')
    argv = ["mutants", str(suite), "--root", root, "--record", "--json", str(report)]
    assert main(argv) == 5
    out = capsys.readouterr().out
    assert "caught 1 of 2 planted bugs (1 not caught, 0 do not apply)" in out
    document = json.loads(report.read_text())
    assert document["kind"] == "uir-mutants"
    assert document["totals"] == {"planted": 2, "caught": 1, "not_caught": 1, "does_not_apply": 0}
    first, second = document["mutants"]
    assert first["status"] == "caught"
    assert [c["path"] for c in first["caught_by"]] == [str(suite / "add.uir")]
    assert second["status"] == "not-caught" and second["caught_by"] == []
    # --record: what each test caught, other mutants files' entries kept
    assert load_caught(suite) == {"add": ("bug-of-another-file", "add-subtracts")}
    assert main([*argv[:-2], "--only", "add-subtracts"]) == 0


def test_a_rel_abs_tolerance_in_uir_test_and_its_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # 1/3 in f32 is 0.333333343: 0.3334 is 6.7e-5 away, within 1e-6 abs + 1e-3 rel (3.3e-4);
    # 0.334 is 6.7e-4 away, outside it.
    program = "%a = CONST f32 1\n%b = CONST f32 3\n%c = FDIV f32 %a %b\n%out = SINK void %c\n"
    test = tmp_path / "third.uir"
    test.write_text("# tolerance: 1e-3 rel\n# tolerance: 1e-6 abs\n# expect: 0.333333\n" + program)
    report = tmp_path / "r.json"
    assert main(["test", str(test), "--json", str(report)]) == 0  # the reference's 0.333333343
    for printed, code in (("0.3334", 0), ("0.334", 5)):
        compiler = f"{PYTHON} -c print({printed})"
        argv = ["test", str(test), "--compiler", compiler, "--json", str(report), "-v"]
        assert main(argv) == code
        [result] = json.loads(report.read_text())["tests"]
        assert result["tolerance"] == {"ulp": None, "rel": 0.001, "abs": 1e-06}
        assert result["tolerance_ulp"] is None
    out = capsys.readouterr().out
    assert "expected (exit 0, floats within 1e-06 abs + 0.001 rel):" in out
    assert "line 1: expected '0.333333', got '0.334'" in out
