"""`uir test` against the hostile compilers of issue 12 (fixtures/hostile/hostile.py).

Each attack prints the expected output only when it succeeds, so under the full sandbox every
one must end in a verdict other than pass, the suite and the report must be left as they were,
and nothing may outlive the run. Where this machine cannot isolate (no working bwrap, no
cgroups), the grader must say so on standard error and in the report: those tests check that
instead, for the limits the weaker mode does not have.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uir.cli.grading.isolation import Mode, find_bwrap, find_cgroups
from uir.cli.main import main

HOSTILE = Path(__file__).parent / "fixtures" / "hostile" / "hostile.py"
MODE = (
    Mode.NONE
    if find_bwrap() is None
    else (Mode.FULL if find_cgroups() is not None else Mode.NAMESPACES)
)
ISOLATED = MODE != Mode.NONE


def hostile(attack: str, *args: str) -> str:
    return shlex.join([sys.executable, str(HOSTILE), attack, *args])


def make_suite(directory: Path, expected: dict[str, str]) -> Path:
    """A suite of tests whose programs print nothing the compiler could guess: each expects
    its line of `expected`, which a compiler can only print by cheating."""
    directory.mkdir(parents=True, exist_ok=True)
    for name, line in expected.items():
        (directory / f"{name}.uir").write_text(
            f"# expect: {line}\n%a = CONST i32 7\n%out = SINK void %a\n"
        )
    return directory


def grade(suite: Path, compiler: str, report: Path, *options: str) -> tuple[int, dict[str, object]]:
    code = main(["test", str(suite), "--compiler", compiler, "--json", str(report), *options])
    return code, json.loads(report.read_text())


def verdicts(document: dict[str, object]) -> list[str]:
    return [t["verdict"] for t in document["tests"]]  # type: ignore[index, union-attr]


def test_the_report_records_the_mode_and_a_weaker_one_is_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    code, document = grade(suite, f"{sys.executable} -c print(7)", tmp_path / "r.json")
    assert code == 0
    assert document["isolation"] == MODE
    warned = "WARNING" in capsys.readouterr().err
    assert warned == (MODE != Mode.FULL)


def test_no_isolation_is_recorded_and_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    _, document = grade(
        suite, f"{sys.executable} -c print(7)", tmp_path / "r.json", "--no-isolation"
    )
    assert document["isolation"] == Mode.NONE
    assert "NOT isolated" in capsys.readouterr().err


def seen_inside(document: dict[str, object]) -> dict[str, str]:
    """whoami's report: `KEY VALUE` lines, `sees PATH: WHAT` keyed by PATH."""
    seen = {}
    for line in document["tests"][0]["actual_stdout"]:  # type: ignore[index]
        key, value = line.split(" ", 1)
        if key == "sees":
            key, value = value.split(": ", 1)
        seen[key] = value
    return seen


def test_inside_the_sandbox_the_compiler_is_nobody_alone_and_offline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    grader = tmp_path / "grader"
    grader.mkdir()
    (grader / "answers.txt").write_text("7\n")
    monkeypatch.chdir(grader)
    paths = [str(suite), str(suite / "a.uir"), str(grader)]
    monkeypatch.setenv("HOSTILE_PATHS", os.pathsep.join(paths))
    _, document = grade(suite, hostile("whoami"), tmp_path / "r.json", "--env", "HOSTILE_PATHS")
    seen = seen_inside(document)
    if not ISOLATED:
        assert document["isolation"] == Mode.NONE
        assert seen[str(grader)] == "['answers.txt']"  # what the warning is about
        return
    assert seen["uid"] == "65534 gid 65534"
    assert int(seen["processes"]) <= 2  # bwrap's init and the compiler: no grader
    assert seen["interfaces"] == "lo"
    # A private /tmp: its scratch directory, the (empty) ones hiding a suite kept in /tmp, and
    # the ones leading to the compiler's own files (this checkout, when it lives in /tmp).
    shown = {tmp_path, Path(sys.executable), HOSTILE}
    in_tmp = {p.parts[2] for p in shown if len(p.parts) > 2 and p.parts[1] == "tmp"}
    assert set(seen["tmp"].split()) - in_tmp == {Path(seen["cwd"]).name}
    # The suite, its tests and the grader's working directory look empty.
    assert seen[str(suite)] == "[]"
    assert seen[str(suite / "a.uir")] in ("", "FileNotFoundError")
    assert seen[str(grader)] == "[]"


def test_a_compiler_spying_on_its_parent_finds_no_test(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "secret-a", "b": "secret-b"})
    code, document = grade(suite, hostile("spy-parent"), tmp_path / "r.json")
    if ISOLATED:
        assert verdicts(document) == ["fail", "fail"]
        assert code == 5


def test_a_compiler_rewriting_the_suite_changes_nothing(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {f"t{i}": f"secret-{i}" for i in range(4)})
    before = {p.name: p.read_bytes() for p in suite.iterdir()}
    code, document = grade(
        suite, hostile("rewrite-suite", str(suite)), tmp_path / "r.json", "-j", "1"
    )
    # Every test was read before the first ran: no rewrite rigs a later test, isolated or not.
    assert verdicts(document) == ["fail"] * 4
    assert code == 5
    if ISOLATED:
        assert {p.name: p.read_bytes() for p in suite.iterdir()} == before


def test_a_compiler_escaping_the_kill_is_gone_with_its_run(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "escaped"})
    report = tmp_path / "r.json"
    marker = tmp_path / "marker"
    _, document = grade(suite, hostile("escape", str(report), str(marker)), report)
    written = report.read_bytes()
    time.sleep(2.0)  # the grandchild, had it lived, wrote after 1 s
    if ISOLATED:
        assert report.read_bytes() == written
        assert not marker.exists()
    assert document["tests"][0]["verdict"] == "pass"  # it printed its line, then was killed


def test_sigterm_to_the_parent_does_not_stop_the_grader(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "survived", "b": "survived"})
    code, document = grade(suite, hostile("kill-parent"), tmp_path / "r.json")
    if ISOLATED:  # its parent is the sandbox's init, not the grader
        assert verdicts(document) == ["pass", "pass"]
        assert code == 0
        assert document["interrupted"] is None
    else:  # the grader got the signal: it stops, with the report of what finished
        assert document["interrupted"] == "SIGTERM"
        assert code == 128 + signal.SIGTERM


def test_children_together_over_the_memory_limit_are_stopped(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "escaped"})
    # Four children of 100 MiB each, each under the 256 MiB address-space limit.
    compiler = hostile("memory-children", "4", "100")
    _, document = grade(suite, compiler, tmp_path / "r.json", "--memory-limit", "256")
    if MODE == Mode.FULL:
        assert verdicts(document) != ["pass"]


def test_more_processes_than_the_limit_cannot_start(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "escaped"})
    _, document = grade(
        suite, hostile("fork-many", "40"), tmp_path / "r.json", "--process-limit", "16"
    )
    if MODE == Mode.FULL:
        assert verdicts(document) != ["pass"]


def test_no_state_passes_from_one_run_to_the_next(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "escaped", "b": "escaped"})
    _, first = grade(suite, hostile("tmp-state"), tmp_path / "r.json", "-j", "1")
    _, second = grade(suite, hostile("tmp-state"), tmp_path / "r.json", "-j", "1")
    if ISOLATED:
        assert verdicts(first) == verdicts(second) == ["fail", "fail"]


def test_control_characters_are_escaped_in_the_text_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    grade(suite, hostile("ansi"), tmp_path / "r.json", "-v")  # -v: the whole output shown
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\r" not in out and "\x07" not in out
    assert "\\x1b[2J\\x1b[H\\x1b[32mall passed\\r" in out
    assert "\\x1b[2J\\x1b[31mPASS\\x07" in out


def test_a_test_named_like_an_option_is_a_file_to_the_reference(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"--help": "7"})
    report = tmp_path / "r.json"
    assert main(["test", str(suite), "--json", str(report)]) == 0
    assert verdicts(json.loads(report.read_text())) == ["pass"]


def test_a_test_name_that_is_not_utf8_is_reported(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "ok.uir").write_text("# expect: 7\n%a = CONST i32 7\n%out = SINK void %a\n")
    name = os.fsdecode(b"caf\xe9.uir")
    (suite / name).write_text("# expect: 7\n%a = CONST i32 7\n%out = SINK void %a\n")
    report = tmp_path / "r.json"
    assert main(["test", str(suite), "--json", str(report)]) == 0
    document = json.loads(report.read_text(encoding="utf-8"))
    assert sorted(t["name"] for t in document["tests"]) == ["caf\\xe9", "ok"]
    assert sorted(os.listdir(tmp_path)) == ["r.json", "suite"]  # no temporary file left


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--timeout", "1e308"),
        ("--timeout", "nan"),
        ("--timeout", "inf"),
        ("--timeout", "-1"),
        ("--timeout", "0"),
        ("--cpu-limit", "-1"),
        ("--cpu-limit", "1e9"),
        ("--memory-limit", str(10**30)),
        ("--output-limit", "0"),
        ("--process-limit", "-2"),
        ("--jobs", "0"),
    ],
)
def test_absurd_limits_are_usage_errors(
    option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = Path(__file__).parent / "fixtures" / "suite"
    assert main(["test", str(suite), f"{option}={value}"]) == 1
    err = capsys.readouterr().err
    assert option in err and "must be" in err


def test_sigterm_to_the_grader_ends_the_run_with_its_reports(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {f"t{i:02}": "7" for i in range(20)})
    report = tmp_path / "r.json"
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    slow = f"{sys.executable} -c 'import time; time.sleep(0.3); print(7)'"
    command = [sys.executable, "-m", "uir.cli.main", "test", str(suite), "--compiler", slow]
    grader = subprocess.Popen(
        [*command, "--json", str(report), "-j", "1"],
        env=dict(os.environ, TMPDIR=str(scratch)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3.0)  # a few tests finish, most do not
    grader.send_signal(signal.SIGTERM)
    out, _ = grader.communicate(timeout=60)
    assert grader.returncode == 128 + signal.SIGTERM
    document = json.loads(report.read_text())
    assert document["interrupted"] == "SIGTERM"
    ran = document["totals"]["tests"]
    assert document["totals"]["not_run"] == 20 - ran > 0
    assert verdicts(document) == ["pass"] * ran
    assert f"interrupted by SIGTERM: {20 - ran} tests not run" in out
    assert list(scratch.iterdir()) == []  # every scratch directory removed


def test_nothing_outlives_a_grader_killed_outright(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    token = f"uir-orphan-{os.getpid()}-{time.monotonic_ns()}"
    sleeper = shlex.join([sys.executable, "-c", "import time; time.sleep(30)", token])
    command = [sys.executable, "-m", "uir.cli.main", "test", str(suite), "--compiler", sleeper]
    grader = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def alive() -> list[str]:
        found = []
        for proc in Path("/proc").iterdir():
            try:
                if token.encode() in (proc / "cmdline").read_bytes():
                    found.append(proc.name)
            except OSError:
                pass
        return found

    deadline = time.monotonic() + 30
    while not alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert alive()  # the compiler is running
    grader.kill()
    grader.wait()
    deadline = time.monotonic() + 10
    while alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if ISOLATED:
        assert alive() == []
    else:  # its own session, out of reach of a kill the grader never got to send
        for pid in alive():
            os.kill(int(pid), signal.SIGKILL)


def test_a_missing_compiler_cannot_start_and_the_run_goes_on(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7", "b": "7"})
    code, document = grade(suite, str(tmp_path / "no-such-uirc"), tmp_path / "r.json")
    assert verdicts(document) == ["cannot-start", "cannot-start"]
    assert "no such file" in document["tests"][0]["detail"]
    assert code == 5


def test_junk_in_a_suite_is_a_verdict_not_a_crash(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    (suite / "notes.txt").write_text("not a test\n")  # not a .uir file: not collected
    (suite / "junk.uir").write_bytes(b"\x00\xff\xfe garbage\n# expect-exit: 9\n")
    (suite / "typo.uir").write_text("# expect-exit: three\n%a = CONST i32 7\n")
    _, document = grade(suite, f"{sys.executable} -c print(7)", tmp_path / "r.json")
    # junk.uir has no leading directives (its first line is a statement): it expects exit 0 and
    # no output, and print(7) gets that wrong; typo.uir is a malformed test.
    names = [t["name"] for t in document["tests"]]  # type: ignore[index]
    assert dict(zip(names, verdicts(document), strict=True)) == {
        "a": "pass",
        "junk": "fail",
        "typo": "bad-test",
    }


def test_signals_inside_the_sandbox_are_crashes_and_cpu_timeouts(tmp_path: Path) -> None:
    # bwrap reports a command killed by signal N as exit 128 + N: the grader reads it back.
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    segfault = f"{sys.executable} -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'"
    _, crashed = grade(suite, segfault, tmp_path / "r.json")
    assert crashed["tests"][0]["verdict"] == "crash"
    assert crashed["tests"][0]["signal"] == "SIGSEGV"
    burn = f"{sys.executable} -c 'while True: pass'"
    _, burnt = grade(suite, burn, tmp_path / "r.json", "--cpu-limit", "1", "--timeout", "30")
    assert burnt["tests"][0]["verdict"] == "timeout"
    assert burnt["tests"][0]["signal"] == "SIGXCPU"


def test_an_isolated_compiler_gets_only_a_plain_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    monkeypatch.setenv("COURSE_TOKEN", "s3cret")
    monkeypatch.setenv("WANTED", "yes")
    show = f"{sys.executable} -c 'import os; print(sorted(os.environ))'"
    options = ["--env", "WANTED", "--env", "SET=here"]
    _, document = grade(suite, show, tmp_path / "r.json", *options)
    [line] = document["tests"][0]["actual_stdout"]
    names = set(json.loads(line.replace("'", '"')))
    if ISOLATED:
        assert "COURSE_TOKEN" not in names
        assert {"WANTED", "SET", "PATH", "TMPDIR"} <= names
    else:
        assert "COURSE_TOKEN" in names  # no isolation: the grader's environment, as documented


def test_a_report_through_a_link_or_a_pipe_is_written_not_replaced(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    target = tmp_path / "reports" / "real.json"
    target.parent.mkdir()
    link = tmp_path / "report.json"
    link.symlink_to(target)
    grade(suite, f"{sys.executable} -c print(7)", link)
    assert link.is_symlink() and json.loads(target.read_text())["totals"]["passed"] == 1
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = subprocess.Popen(["cat", str(pipe)], stdout=subprocess.PIPE, text=True)
    main(["test", str(suite), "--compiler", f"{sys.executable} -c print(7)", "--json", str(pipe)])
    out, _ = reader.communicate(timeout=60)
    assert json.loads(out)["totals"]["passed"] == 1
    assert pipe.is_fifo()


def test_every_run_cgroup_is_removed(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7", "b": "escaped"})
    grade(suite, f"{sys.executable} -c print(7)", tmp_path / "r.json")
    grade(suite, hostile("escape", "/nonexistent", "/nonexistent"), tmp_path / "r.json")
    cgroups = find_cgroups()
    if cgroups is not None:
        mine = f"uir-run-{os.getpid()}-"
        assert [p for d in cgroups.parents for p in os.listdir(d) if p.startswith(mine)] == []
