"""A command whose standard output cannot be written (a full disk, a pipe with no reader, a
closed descriptor) exits 1 with one message line, not 4 "internal error", and no traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ADD = "%a = CONST i32 2\n%b = CONST i32 3\n%c = ADD i32 %a %b\n%out = SINK void %c\n"


def uir(args: list[str], **stdout) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "uir.cli.main", *args],
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        **stdout,
    )


@pytest.fixture
def program(tmp_path) -> str:
    path = tmp_path / "p.uir"
    path.write_text(ADD)
    return str(path)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
@pytest.mark.parametrize("command", ["run", "check", "fmt", "opt", "render", "plugins"])
def test_a_full_disk_is_exit_1(command, program):
    args = [command] if command == "plugins" else [command, program]
    where = "uir" if command == "plugins" else program
    with open("/dev/full", "w") as full:
        done = uir(args, stdout=full)
    assert (done.returncode, done.stderr) == (
        1,
        f"{where}: error: cannot write standard output: No space left on device\n",
    )


def test_a_pipe_with_no_reader_is_exit_1(program):
    read, write = os.pipe()
    os.close(read)
    try:
        done = uir(["run", program], stdout=write)
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (
        1,
        f"{program}: error: cannot write standard output: Broken pipe\n",
    )


def test_a_closed_standard_output_is_exit_1(program):
    done = uir(["run", program], preexec_fn=lambda: os.close(1))
    assert (done.returncode, done.stderr) == (
        1,
        f"{program}: error: cannot write standard output: it is closed\n",
    )


def test_output_that_can_be_written_is_unchanged(program):
    done = uir(["run", program], stdout=subprocess.PIPE)
    assert (done.returncode, done.stdout, done.stderr) == (0, "5\n", "")
