"""Fixtures shared by the CLI tests: git repositories for grading, bad programs for `uir run`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest


def _git(cwd: Path, *args: str) -> str:
    """Run git in `cwd` as a fixed author; its standard output, stripped."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    done = subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)
    return done.stdout.decode().strip()


@pytest.fixture
def git() -> Callable[..., str]:
    return _git


@pytest.fixture
def make_repo() -> Callable[[Path, dict[str, str]], Path]:
    """A function making a git repository at a path with these files, committed on `main`."""

    def make(path: Path, files: dict[str, str]) -> Path:
        path.mkdir(parents=True)
        _git(path, "init", "--quiet", "--initial-branch=main")
        for name, text in files.items():
            (path / name).write_text(text)
        _git(path, "add", ".")
        _git(path, "commit", "--quiet", "-m", "submission")
        return path

    return make


@pytest.fixture
def run_bad_statement(tmp_path, capsys) -> Callable[[str, str, int, int], None]:
    """A check that `uir run` of `program`, with the statement defining `change`'s name replaced
    by `change`, exits `code` blaming `line`, prints nothing and shows no traceback."""
    from uir.cli.main import main

    def check(program: str, change: str, code: int, line: int) -> None:
        name = change.split()[0]
        lines = [change if s.split()[0] == name else s for s in program.splitlines()]
        path = tmp_path / "bad.uir"
        path.write_text("\n".join(lines) + "\n")
        assert main(["run", str(path)]) == code
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"{path}:{line}: error: ")
        assert "Traceback" not in captured.err

    return check
