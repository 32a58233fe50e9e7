"""The grading harness against misbehaving compilers: every misbehaviour gets its own verdict, and
the run goes on. Each case runs twice: started as a program, and forked from the fork server."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from uir.cli.grading.forkserver import ForkServer
from uir.cli.grading.harness import (
    Compiler,
    reference_compiler,
    run_test,
    run_tests,
    student_compiler,
)
from uir.cli.grading.judge import Verdict
from uir.cli.grading.limits import Limits

FIXTURES = Path(__file__).parent / "fixtures"
SUITE = FIXTURES / "suite"
COMPILERS = FIXTURES / "compilers"
ADD = str(SUITE / "add.uir")  # expects the single line 5 and exit 0
QUICK = Limits(wall_s=10.0, cpu_s=10, memory_mb=1024, output_bytes=64 * 1024)


@pytest.fixture(scope="module")
def fork_server() -> Iterator[ForkServer]:
    with ForkServer(module="fake_compiler", pythonpath=str(COMPILERS)) as server:
        yield server


@pytest.fixture(params=["exec", "fork"])
def fake(request: pytest.FixtureRequest, fork_server: ForkServer):
    """A function from a behaviour of fake_compiler.py to a Compiler that has it."""

    def make(behaviour: str) -> Compiler:
        if request.param == "exec":
            return Compiler((sys.executable, str(COMPILERS / "fake_compiler.py"), behaviour))
        env = dict(os.environ, PYTHONPATH=str(COMPILERS))
        return Compiler(("fake_compiler", behaviour), ("run",), env, fork_server)

    return make


def test_the_reference_compiler_passes_the_fixture_suite() -> None:
    tests = sorted(str(p) for p in SUITE.glob("*.uir"))
    results = run_tests(tests, reference_compiler(), Limits(), jobs=2)
    assert [r.verdict for r in results] == [Verdict.PASS] * len(tests)


def test_a_right_answer_passes(fake) -> None:
    result = run_test(ADD, fake("answer-5"), QUICK)
    assert result.verdict is Verdict.PASS
    assert result.actual_lines == ("5",)


def test_a_wrong_answer_fails_and_says_where(fake) -> None:
    result = run_test(ADD, fake("answer-6"), QUICK)
    assert result.verdict is Verdict.FAIL
    assert result.detail == "line 1: expected '5', got '6'"
    assert result.expected_lines == ("5",) and result.actual_lines == ("6",)


def test_a_wrong_exit_code_is_wrong_exit(fake) -> None:
    result = run_test(ADD, fake("exit-3"), QUICK)
    assert result.verdict is Verdict.WRONG_EXIT
    assert (result.expected_exit, result.actual_exit) == (0, 3)


def test_a_compiler_killed_by_a_signal_crashed(fake) -> None:
    result = run_test(ADD, fake("segfault"), QUICK)
    assert result.verdict is Verdict.CRASH
    assert result.detail == "killed by SIGSEGV"


def _alive(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "State:\tZ" not in status  # a zombie has already died


def test_a_hanging_compiler_is_killed_with_what_it_started(fake) -> None:
    result = run_test(ADD, fake("hang"), Limits(wall_s=1.5))
    assert result.verdict is Verdict.TIMEOUT
    grandchild = int(result.actual_lines[0])
    # Killed means dead soon, however loaded the machine; left alive, it would sleep 600 s. The
    # bound is no measure of speed: only a grandchild the harness never killed outlives it.
    patience = time.monotonic() + 120
    while _alive(grandchild) and time.monotonic() < patience:
        time.sleep(0.05)
    assert not _alive(grandchild)


def test_a_compiler_past_its_cpu_time_is_stopped(fake) -> None:
    # The wall clock far off: on a loaded machine one CPU second can take many seconds of it.
    result = run_test(ADD, fake("burn-cpu"), Limits(wall_s=600.0, cpu_s=1))
    assert result.verdict is Verdict.TIMEOUT
    assert "CPU" in result.detail  # the CPU limit stopped it, not the wall-clock limit


def test_flooding_standard_output_stops_at_the_cap(fake) -> None:
    result = run_test(ADD, fake("flood"), QUICK)
    assert result.verdict is Verdict.OUTPUT_LIMIT
    assert len("".join(result.actual_lines)) <= QUICK.output_bytes


def test_flooding_standard_error_stops_at_the_cap(fake) -> None:
    result = run_test(ADD, fake("flood-stderr"), QUICK)
    assert result.verdict is Verdict.OUTPUT_LIMIT
    assert len(result.stderr) <= 16 * 1024


def test_a_memory_hog_meets_the_address_space_limit(fake) -> None:
    # Python turns the refused allocation into MemoryError and exits 1: a wrong exit, not a hang.
    result = run_test(ADD, fake("hog-memory"), Limits(memory_mb=512))
    assert result.verdict is Verdict.WRONG_EXIT
    assert result.actual_exit == 1
    assert "MemoryError" in result.stderr


def test_the_compiler_sees_only_the_program_in_a_fresh_directory(fake, tmp_path: Path) -> None:
    test = tmp_path / "spied.uir"
    test.write_text(
        "# a comment\n# expect: 5\n# expect-exit: 0\n%a = CONST i32 5\n%out = SINK void %a\n"
    )
    first = run_test(str(test), fake("spy"), QUICK)
    second = run_test(str(test), fake("spy"), QUICK)
    seen = [
        dict(line.split(" ", 1) for line in r.actual_lines if not line.startswith("line"))
        for r in (first, second)
    ]
    assert seen[0]["files"] == "spied.uir"
    assert seen[0]["cwd"] != seen[1]["cwd"]
    assert seen[0]["tmpdir"] == seen[0]["cwd"]
    assert not Path(seen[0]["cwd"]).exists()  # removed after the run
    program = [line[len("line ") :] for line in first.actual_lines if line.startswith("line")]
    # The directives are blanked, the other comments and every line number kept.
    assert program == ["# a comment", "", "", "%a = CONST i32 5", "%out = SINK void %a", ""]
    assert str(tmp_path) not in " ".join(first.actual_lines)


def test_a_missing_compiler_cannot_start_and_the_run_goes_on() -> None:
    missing = Compiler(("/nonexistent/uirc",))
    results = run_tests([ADD, str(SUITE / "wrap.uir")], missing, QUICK, jobs=2)
    assert [r.verdict for r in results] == [Verdict.CANNOT_START] * 2
    assert "no such file" in results[0].detail


def test_a_compiler_that_is_not_executable_cannot_start(tmp_path: Path) -> None:
    script = tmp_path / "uirc"
    script.write_text("#!/bin/sh\necho 5\n")
    script.chmod(0o644)
    result = run_test(ADD, Compiler((str(script),)), QUICK)
    assert result.verdict is Verdict.CANNOT_START
    assert "permission denied" in result.detail


def test_a_malformed_test_is_reported_without_running(tmp_path: Path) -> None:
    test = tmp_path / "typo.uir"
    test.write_text("# tolerance: 2\n%a = CONST i32 5\n%out = SINK void %a\n")
    result = run_test(str(test), Compiler(("/nonexistent/uirc",)), QUICK)
    assert result.verdict is Verdict.BAD_TEST
    assert "malformed directive" in result.detail


def test_every_misbehaviour_in_one_run_gets_its_own_verdict(tmp_path: Path) -> None:
    # One run over several tests, the compiler misbehaving differently on each: nothing stops it.
    behaviours = ["answer-5", "segfault", "flood", "exit-3", "answer-6"]
    wrapper = tmp_path / "by_name.py"
    wrapper.write_text(
        "import runpy, sys\n"
        "sys.argv = [sys.argv[0], sys.argv[2].split('.')[0], *sys.argv[1:]]\n"
        f"runpy.run_path({str(COMPILERS / 'fake_compiler.py')!r}, run_name='__main__')\n"
    )
    tests = []
    for name in behaviours:
        path = tmp_path / f"{name}.uir"
        path.write_text("# expect: 5\n%a = CONST i32 5\n%out = SINK void %a\n")
        tests.append(str(path))
    results = run_tests(tests, Compiler((sys.executable, str(wrapper))), QUICK, jobs=3)
    assert [r.verdict for r in results] == [
        Verdict.PASS,
        Verdict.CRASH,
        Verdict.OUTPUT_LIMIT,
        Verdict.WRONG_EXIT,
        Verdict.FAIL,
    ]


def test_relative_paths_in_the_compiler_command_are_resolved_before_it_moves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "main.py").write_text("print(5)\n")
    monkeypatch.chdir(tmp_path)
    compiler = student_compiler("python3 main.py --flag")
    # A bare program name is looked up along the PATH the compiler runs with, at the start.
    assert compiler.argv == ("python3", str(tmp_path / "main.py"), "--flag")
    assert run_test(ADD, compiler, QUICK).verdict is Verdict.PASS


def test_a_compiler_that_exits_is_judged_though_its_leftovers_hold_the_pipes(fake) -> None:
    result = run_test(ADD, fake("daemon"), QUICK)
    assert result.verdict is Verdict.PASS  # not a TIMEOUT at the wall-clock limit
