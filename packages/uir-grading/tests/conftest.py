"""Fixtures shared by the staff's grader's tests: git repositories of teams' submissions."""

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
