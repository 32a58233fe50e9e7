"""`uir test`'s report as a student reads it: one line a failure, failures that ended alike
told once, the likely mistakes ranked by the evidence, and what pytest users reach for: -x,
--maxfail, -k, --lf, the legend of the progress letters, the command to rerun one test."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from uir.cli.main import main

HERE = Path(__file__).resolve().parent
SUITE = HERE / "fixtures" / "suite"  # add, sin, type_mismatch, unknown_op, wrap
FIVE = "print(5)\n"  # right on add only
CRASH = "raise ZeroDivisionError('integer division by zero')\n"


def _compiler(tmp_path: Path, name: str, source: str) -> str:
    path = tmp_path / name
    path.write_text(source)
    return shlex.join([sys.executable, str(path)])


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out.rstrip("\n").split("\n"), captured.err


def test_the_default_report_is_one_line_a_failure_and_the_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compiler = _compiler(tmp_path, "five.py", FIVE)
    code, lines, _ = _run(["test", str(SUITE), "--compiler", compiler, "-j", "2"], capsys)
    assert code == 5
    # (how a tolerance is worded is the judge's business: only the start of that line here)
    assert lines[0].startswith(f"F {SUITE}/sin.uir: fail: line 1: expected '0.841470957'")
    assert lines[1:4] == [
        f"E {SUITE}/type_mismatch.uir: wrong-exit: exit code 0, expected 3",
        f"E {SUITE}/unknown_op.uir: wrong-exit: exit code 0, expected 2",
        f"F {SUITE}/wrap.uir: fail: line 1: expected '-2147483648', got '5'",
    ]
    assert not any("expected (exit" in line for line in lines)  # the details wait for -v
    assert "progress letters: . pass, F fail, E wrong-exit" in lines
    assert f"rerun one: uir test {SUITE}/sin.uir --compiler {shlex.quote(compiler)}" in lines
    assert lines[-2].startswith("5 tests through `")
    assert lines[-2].endswith(" s: 1 pass, 2 fail, 2 wrong-exit")
    assert lines[-1] == "1 of 5 passed: 4 not passed"


def test_failures_that_ended_alike_are_told_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compiler = _compiler(tmp_path, "crash.py", CRASH)
    _, lines, _ = _run(["test", str(SUITE), "--compiler", compiler], capsys)
    alike = "E 3 tests: wrong-exit: exit code 1, expected 0; stderr: ZeroDivisionError: integer "
    assert lines[0] == alike + "division by zero (add.uir, sin.uir, wrap.uir)"
    assert len([line for line in lines if line.startswith("E ")]) == 3  # and the two others
    assert (
        "3 of 5 tests ended alike, wrong-exit: exit code 1, expected 0 (ZeroDivisionError: "
        "integer division by zero): fix that first" in lines
    )


def test_the_likely_mistakes_are_ranked_by_the_evidence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    program = "%a = CONST i32 -7\n%b = CONST i32 2\n%c = IDIV i32 %a %b\n%out = SINK void %c\n"
    (suite / "idiv.uir").write_text("# expect: -3\n" + program)
    mismatch = (SUITE / "type_mismatch.uir").read_text()
    for name in ("e1", "e2", "e3"):
        (suite / f"{name}.uir").write_text(mismatch)
    (suite / "caught.toml").write_text(
        '[tests]\nidiv = ["floor-division"]\ne1 = ["verify-a"]\ne2 = ["verify-a"]\n'
        'e3 = ["verify-b"]\n'
    )
    # Floor division on IDIV, and a crash (a Python exception, exit 1) on every other test.
    source = "import sys\nif 'IDIV' in open(sys.argv[2]).read():\n    print(-4)\nelse:\n" + (
        "    " + CRASH
    )
    compiler = _compiler(tmp_path, "floor.py", source)
    report = tmp_path / "r.json"
    argv = ["test", str(suite), "--compiler", compiler, "--json", str(report)]
    _, lines, _ = _run(argv, capsys)
    # By tests alone verify-a (2 tests) would lead; but its tests crashed alike with a third,
    # which is one piece of evidence shared by three, while idiv failed its own way.
    at = lines.index("mistakes that fit (every test that catches these planted bugs did not pass):")
    assert [line.split()[0] for line in lines[at + 1 : at + 4]] == [
        "floor-division",
        "verify-a",
        "verify-b",
    ]
    document = json.loads(report.read_text())
    assert [m["name"] for m in document["likely_mistakes"]] == [
        "floor-division",
        "verify-a",
        "verify-b",
    ]


def test_exitfirst_and_maxfail_stop_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    compiler = _compiler(tmp_path, "five.py", FIVE)
    report = tmp_path / "r.json"
    for option in (["-x"], ["--maxfail", "2"]):
        argv = ["test", str(SUITE), "--compiler", compiler, "-j", "1", "--json", str(report)]
        code, lines, _ = _run([*argv, *option], capsys)
        totals = json.loads(report.read_text())["totals"]
        limit = 1 if option == ["-x"] else 2
        assert code == 5 and totals["not_passed"] >= limit and totals["not_run"] >= 1
        assert totals["tests"] + totals["not_run"] == 5
        assert lines[-3].startswith(f"stopped after {totals['not_passed']} not passed (--maxfail")
        assert lines[-3].endswith(f"{totals['not_run']} tests not run")


def test_keyword_expressions_select_tests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = tmp_path / "r.json"
    for expression, names in [
        ("add or wrap", ["add", "wrap"]),
        ("not (add or WRAP)", ["sin", "type_mismatch", "unknown_op"]),
        ("a and not n", ["add", "type_mismatch", "wrap"]),
    ]:
        assert main(["test", str(SUITE), "-k", expression, "--json", str(report)]) == 0
        assert [t["name"] for t in json.loads(report.read_text())["tests"]] == names
    for expression, message in [("add and", "not an expression"), ("zzz", "no test matches")]:
        code, _, err = _run(["test", str(SUITE), "-k", expression], capsys)
        assert code == 1 and message in err


def test_last_failed_reruns_what_did_not_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    crash, five = _compiler(tmp_path, "crash.py", CRASH), _compiler(tmp_path, "five.py", FIVE)
    report = tmp_path / "r.json"

    def ran(compiler: str) -> tuple[list[str], str]:
        argv = ["test", str(SUITE), "--compiler", compiler, "--lf", "--json", str(report)]
        _, _, err = _run(argv, capsys)
        return [t["name"] for t in json.loads(report.read_text())["tests"]], err

    names, err = ran(crash)  # nothing remembered yet: all of them
    assert len(names) == 5 and "--lf: no test here failed last time: running them all" in err
    names, err = ran(five)  # all five failed; add passes now
    assert len(names) == 5 and "--lf: rerunning the 5 tests that did not pass last time" in err
    names, _ = ran(five)
    assert names == ["sin", "type_mismatch", "unknown_op", "wrap"]
    assert main(["test", str(SUITE / "add.uir"), "--compiler", crash]) == 5  # add fails again
    capsys.readouterr()
    names, _ = ran(five)
    assert names == ["add", "sin", "type_mismatch", "unknown_op", "wrap"]
