"""The `uir` command run as a user runs it: a child process, for tests of whole courses and
grading runs (signals, exit codes, files written)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def run_uir(cwd: Path, *args: str, check: int | None = 0) -> subprocess.CompletedProcess[str]:
    """`uir ARGS` in `cwd` with this Python; its exit code must be `check` (unless None)."""
    done = subprocess.run(
        [sys.executable, "-m", "uir.cli.main", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if check is not None:
        assert done.returncode == check, done.stdout + done.stderr
    return done
