"""`uir grade` against hostile compilers (uir-cli's tests/fixtures/hostile/hostile.py): what the
sandbox of `uir test` promises holds when the staff's grader runs it, beside the reference's fork
server and a team's build (spec/grading.md section 3)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from uir.cli.grading.isolation import (
    SANDBOX_PATH,
    Isolation,
    Mode,
    find_bwrap,
    find_cgroups,
    find_identity,
)

# The compilers run in the sandbox, which has the system's Python, not this one (spec/grading.md
# section 3.2).
PYTHON = shutil.which("python3", path=SANDBOX_PATH) or sys.executable
# The hostile compilers of uir-cli's sandbox tests, one attack each.
HOSTILE = Path(__file__).parents[2] / "uir-cli" / "tests" / "fixtures" / "hostile" / "hostile.py"
MODE = Isolation(find_bwrap(find_identity()), find_cgroups()).mode  # the grader's own reading
ISOLATED = MODE != Mode.NONE
MakeRepo = Callable[[Path, dict[str, str]], Path]  # the fixture of conftest.py


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


def test_no_socket_of_the_grader_is_reachable_from_the_sandbox(tmp_path: Path) -> None:
    # Issue 28: the reference's fork server listened on $TMPDIR/uir-forkserver-*/socket, and
    # with TMPDIR outside /tmp a team's compiler connected to it and ran code as the grader.
    # `uir grade` runs the fork server (for the reference) and the team at once.
    tmpdir, grader = tmp_path / "tmpdir", tmp_path / "grader"
    tmpdir.mkdir()
    make_suite(grader / "tests" / "staff", {"a": "7"})  # valid: the reference prints 7
    listeners = []
    for path in (str(tmpdir / "grader.sock"), str(grader / "grader.sock"), f"\0uir-{os.getpid()}"):
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(path)
        listener.listen()
        listeners.append(listener)
    command = hostile("sockets", "7", f"@uir-{os.getpid()}")
    (grader / "roster.toml").write_text(
        f'[[team]]\nname = "spy"\ncommand = {json.dumps(command)}\n'
    )
    argv = ["grade", "roster.toml", "--tests", "tests/staff", "--out", "out", "-j", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "uir.cli.main", *argv],
        cwd=grader,
        env=dict(os.environ, TMPDIR=str(tmpdir)),
        capture_output=True,
        text=True,
        timeout=600,
    )
    for listener in listeners:
        listener.close()
    assert done.returncode == 0, done.stderr
    rows = {
        r["name"]: r for r in json.loads((grader / "out" / "grades.json").read_text())["compilers"]
    }
    if ISOLATED:
        assert rows["spy"]["percent"] == 0.0, rows["spy"]["failures"]
    assert rows["reference"]["percent"] == 100.0


def test_a_build_is_bounded_in_bytes_and_its_whole_log_is_kept(
    tmp_path: Path, make_repo: Callable[[Path, dict[str, str]], Path]
) -> None:
    # Issue 28: a build left 3.0 GB in its checkout. Each file stays under the file-size limit;
    # together they pass the checkout limit, which holds during the build too.
    build = "echo starting; for i in 1 2 3 4; do head -c 400000 /dev/zero > f$i; done; sleep 30"
    submission = {"uir-submission.toml": f'build = "{build}"\ncommand = "sh c.sh"\n'}
    make_repo(tmp_path / "repos" / "big", submission)
    make_suite(tmp_path / "tests" / "staff", {"a": "7"})
    roster = '[[team]]\nname = "big"\nrepo = "repos/big"\nref = "main"\n'
    (tmp_path / "roster.toml").write_text(roster)
    argv = [
        "grade",
        "roster.toml",
        "--tests",
        "tests/staff",
        "--out",
        "out",
        "--checkout-limit",
        "1",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "uir.cli.main", *argv],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    rows = {
        r["name"]: r
        for r in json.loads((tmp_path / "out" / "grades.json").read_text())["compilers"]
    }
    assert (
        rows["big"]["problem"]
        == "the build made the checkout larger than the checkout limit of 1 MiB"
    )
    assert (tmp_path / "out" / "checkouts" / "big.log").read_text() == "starting\n"
