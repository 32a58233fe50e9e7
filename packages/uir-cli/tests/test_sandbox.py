"""`uir test` against the hostile compilers of issue 12 (fixtures/hostile/hostile.py).

Each attack prints the expected output only when it succeeds, so under the full sandbox every
one must end in a verdict other than pass, the suite and the report must be left as they were,
and nothing may outlive the run. Where this machine cannot isolate (no working bwrap, no
cgroups), the grader must say so on standard error and in the report: those tests check that
instead, for the limits the weaker mode does not have.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uir.cli.grading.isolation import (
    SANDBOX_PATH,
    Isolation,
    Mode,
    find_bwrap,
    find_cgroups,
    find_identity,
    hidden_paths,
    no_bwrap_reason,
)
from uir.cli.grading.limits import Limits
from uir.cli.grading.sandbox import run_limited
from uir.cli.main import main

# The compilers run in the sandbox, which has the system's Python, not this one (spec/grading.md
# section 3.2).
PYTHON = shutil.which("python3", path=SANDBOX_PATH) or sys.executable
HOSTILE = Path(__file__).parent / "fixtures" / "hostile" / "hostile.py"
MODE = Isolation(find_bwrap(find_identity()), find_cgroups()).mode  # the grader's own reading
ISOLATED = MODE != Mode.NONE


def hostile(attack: str, *args: str) -> str:
    return shlex.join([PYTHON, str(HOSTILE), attack, *args])


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
    code, document = grade(suite, f"{PYTHON} -c print(7)", tmp_path / "r.json")
    assert code == 0
    assert document["isolation"] == MODE
    err = capsys.readouterr().err
    assert ("WARNING" in err) == (MODE != Mode.FULL)
    if MODE == Mode.NONE:  # the real reason, not a guess
        assert f"(why: {no_bwrap_reason(find_identity())})" in err


def test_no_isolation_is_recorded_and_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    _, document = grade(suite, f"{PYTHON} -c print(7)", tmp_path / "r.json", "--no-isolation")
    assert document["isolation"] == Mode.NONE
    err = capsys.readouterr().err
    assert "NOT isolated" in err and "(why: --no-isolation)" in err  # issue 28 item 6


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
    # Root outside is a dedicated unprivileged uid in and out; anyone else is nobody inside.
    identity = find_identity()
    uid = identity.uid if identity is not None else 65534
    assert seen["uid"] == f"{uid} gid {uid}"
    assert int(seen["processes"]) <= 2  # bwrap's init and the compiler: no grader
    assert seen["interfaces"] == "lo"
    # A private /tmp: its scratch directory, and the ones leading to the compiler's own files
    # (this checkout, when it lives in /tmp).
    in_tmp = {p.parts[2] for p in [HOSTILE] if len(p.parts) > 2 and p.parts[1] == "tmp"}
    assert set(seen["tmp"].split()) - in_tmp == {Path(seen["cwd"]).name}
    # The suite, its tests and the grader's working directory are not in its root at all.
    assert seen[str(suite)] == "FileNotFoundError"
    assert seen[str(suite / "a.uir")] == "FileNotFoundError"
    assert seen[str(grader)] == "FileNotFoundError"


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
    slow = f"{PYTHON} -c 'import time; time.sleep(0.3); print(7)'"
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
    sleeper = shlex.join([PYTHON, "-c", "import time; time.sleep(30)", token])
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


@pytest.mark.parametrize("isolation", [[], ["--no-isolation"]])
def test_a_compiler_that_cannot_start_is_one_usage_error_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], isolation: list[str]
) -> None:
    # Issue 28 item 6: not one cannot-start verdict per test.
    suite = make_suite(tmp_path / "suite", {"a": "7", "b": "7"})
    (tmp_path / "plain.sh").write_text("echo 7\n")  # not executable
    (tmp_path / "orphan.sh").write_text("#!/no/such/interpreter\necho 7\n")
    (tmp_path / "orphan.sh").chmod(0o755)
    cases = {
        str(tmp_path / "no-such-uirc"): f"{tmp_path}/no-such-uirc: no such file",
        str(tmp_path / "plain.sh"): f"{tmp_path}/plain.sh: permission denied",
        str(tmp_path / "orphan.sh"): "its interpreter /no/such/interpreter (line 1) does not exist",
        "no-such-uirc-on-path": "no-such-uirc-on-path: no such command on ",
        str(tmp_path): f"{tmp_path}: permission denied (not an executable file)",
    }
    report = tmp_path / "r.json"
    for compiler, reason in cases.items():
        argv = ["test", str(suite), "--compiler", compiler, "--json", str(report), *isolation]
        assert main(argv) == 1
        captured = capsys.readouterr()
        assert captured.out == ""
        assert "error: --compiler cannot start: " in captured.err
        assert reason in captured.err
        assert not report.exists()


def test_junk_in_a_suite_is_a_verdict_not_a_crash(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    (suite / "notes.txt").write_text("not a test\n")  # not a .uir file: not collected
    (suite / "junk.uir").write_bytes(b"\x00\xff\xfe garbage\n# expect-exit: 9\n")
    (suite / "typo.uir").write_text("# expect-exit: three\n%a = CONST i32 7\n")
    _, document = grade(suite, f"{PYTHON} -c print(7)", tmp_path / "r.json")
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
    segfault = f"{PYTHON} -c 'import os, signal; os.kill(os.getpid(), signal.SIGSEGV)'"
    _, crashed = grade(suite, segfault, tmp_path / "r.json")
    assert crashed["tests"][0]["verdict"] == "crash"
    assert crashed["tests"][0]["signal"] == "SIGSEGV"
    burn = f"{PYTHON} -c 'while True: pass'"
    # The wall clock far off: on a loaded machine one CPU second can take many seconds of it.
    _, burnt = grade(suite, burn, tmp_path / "r.json", "--cpu-limit", "1", "--timeout", "600")
    assert burnt["tests"][0]["verdict"] == "timeout"
    assert burnt["tests"][0]["signal"] == "SIGXCPU"


def test_an_isolated_compiler_gets_only_a_plain_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7"})
    monkeypatch.setenv("COURSE_TOKEN", "s3cret")
    monkeypatch.setenv("WANTED", "yes")
    show = f"{PYTHON} -c 'import os; print(sorted(os.environ))'"
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
    grade(suite, f"{PYTHON} -c print(7)", link)
    assert link.is_symlink() and json.loads(target.read_text())["totals"]["passed"] == 1
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    reader = subprocess.Popen(["cat", str(pipe)], stdout=subprocess.PIPE, text=True)
    main(["test", str(suite), "--compiler", f"{PYTHON} -c print(7)", "--json", str(pipe)])
    out, _ = reader.communicate(timeout=60)
    assert json.loads(out)["totals"]["passed"] == 1
    assert pipe.is_fifo()


def test_every_run_cgroup_is_removed(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", {"a": "7", "b": "escaped"})
    grade(suite, f"{PYTHON} -c print(7)", tmp_path / "r.json")
    grade(suite, hostile("escape", "/nonexistent", "/nonexistent"), tmp_path / "r.json")
    cgroups = find_cgroups()
    if cgroups is not None:
        mine = f"uir-run-{os.getpid()}-"
        assert [p for d in cgroups.parents for p in os.listdir(d) if p.startswith(mine)] == []


def test_a_fork_server_serves_only_the_process_that_started_it() -> None:
    # Even given a way in (its control channel, inherited by a fork), the server refuses a run
    # whose socket another process made: it authenticates every client (SO_PEERCRED).
    from uir.cli.grading.forkserver import ForkServer

    with ForkServer(preload=(), preload_module=False) as server:
        answer_read, answer_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # another process, holding the control channel
            os.close(answer_read)
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            socket.send_fds(server.control, [b"r"], [theirs.fileno()])
            theirs.close()  # the server's copy is then the only other end: closing it is EOF
            request = {"module": "os", "argv": ["x"], "cwd": "/", "env": {}, "rlimits": []}
            _, out_write = os.pipe()
            # the server may close it before the request goes out: refused too
            with contextlib.suppress(OSError):
                socket.send_fds(
                    mine, [json.dumps(request).encode() + b"\n"], [out_write, out_write]
                )
            # A served run answers; a refused one is closed at once. The timeout only guards
            # against a hang, and reads as a failure, not as a refusal.
            mine.settimeout(300)
            try:
                reply = mine.recv(4096) or b"refused"
            except TimeoutError:
                reply = b"no answer in 300 s"
            except OSError:
                reply = b"refused"  # reset by the server's close
            os.write(answer_write, reply)
            os._exit(0)
        os.close(answer_write)
        os.waitpid(pid, 0)
        with os.fdopen(answer_read, "rb") as answer:
            assert answer.read() == b"refused"
        # The harness itself is still served.
        outcome = run_limited(server, ["x", "-c", "print(5)"], str(Path.cwd()), {}, Limits())
        assert outcome.exit_code is not None


def test_the_sandbox_root_holds_nothing_of_the_grader_or_other_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 28: the whole root was visible read-only: /etc/shadow (as root), another checkout's
    # suite, an earlier report with its expected_stdout, other users' homes.
    other = make_suite(tmp_path / "elsewhere" / "suite", {"x": "escaped"})
    earlier = tmp_path / "earlier.json"
    earlier.write_text('{"expected_stdout": ["escaped"]}\n')
    home = Path.home()
    suite = make_suite(tmp_path / "suite", {"a": "escaped"})
    paths = ["/etc/shadow", "/etc/passwd", str(other / "x.uir"), str(earlier), str(home)]
    monkeypatch.setenv("HOSTILE_PATHS", os.pathsep.join(paths))
    _, document = grade(suite, hostile("read"), tmp_path / "r.json", "--env", "HOSTILE_PATHS")
    if ISOLATED:
        assert verdicts(document) == ["fail"], document["tests"][0]["actual_stdout"]


def test_the_reference_cannot_run_inside_the_sandbox(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 28: with the grader's working directory visible a team ran the grader's .venv and
    # passed 75% of the tests. Here the grader works in the checkout that holds its .venv.
    monkeypatch.chdir(Path(sys.prefix).parent)
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "a.uir").write_text(
        "# expect: 5\n%a = CONST i32 2\n%b = ADD i32 %a %a\n"
        "%c = CONST i32 1\n%d = ADD i32 %b %c\n%out = SINK void %d\n"
    )
    _, document = grade(suite, hostile("reference"), tmp_path / "r.json", "--timeout", "60")
    if ISOLATED:
        assert verdicts(document) == ["fail"], document["tests"][0]["stderr"]
    assert main(["test", str(suite)]) == 0  # the reference itself passes it


def test_what_the_sandbox_shows_of_the_grader_and_of_the_compiler(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The grader works in `course`, whose `out/checkouts/team` holds a team's checkout and whose
    # `suite` is hidden; its installation is this Python environment and the uir packages.
    course = tmp_path / "course"
    checkout = course / "out" / "checkouts" / "team"
    checkout.mkdir(parents=True)
    (checkout / "uirc").write_text("#!/bin/sh\n")
    (course / "suite").mkdir()
    (course / "uirc").write_text("#!/bin/sh\n")
    monkeypatch.chdir(course)
    venv_python = str(Path(sys.prefix) / "bin" / "python")
    grader = [str(course / "suite"), str(course)]
    own = [str(checkout / "uirc"), str(checkout), str(course / "uirc"), venv_python]
    hidden, visible = hidden_paths(grader, own)
    # The checkout under the working directory is shown; the working directory itself is not,
    # so a compiler in it is shown alone; the installation never, even when named.
    assert str(checkout) in visible
    assert str(course / "uirc") in visible and str(course) not in visible
    assert not any(v == sys.prefix or v.startswith(sys.prefix + os.sep) for v in visible)
    assert {str(course / "suite"), str(course), os.path.realpath(sys.prefix)} <= set(hidden)
    isolation = Isolation("bwrap", None, tuple(hidden), tuple(visible))
    assert isolation.shows(str(checkout / "uirc")) and isolation.shows("/usr/bin/cc")
    assert not isolation.shows(str(course / "suite" / "a.uir"))
    assert not isolation.shows(str(course / "roster.toml"))
    assert not isolation.shows("/etc/shadow") and not isolation.shows("/home")
    words = isolation.options(str(tmp_path / "scratch")).split(b"\0")
    assert b"/etc/shadow" not in words and b"/" not in words[1::3]  # no bind of the root
