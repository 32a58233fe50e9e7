"""CPU time of one `uir` process: start-up, parse and verify (check) or run, on a week-1 example.

Run: uv run python benchmarks/startup_bench.py [RUNS]
Each command runs RUNS times in a fresh interpreter; the figure is the mean user+system CPU of
those children, which is what a grader running thousands of processes pays. Nothing here asserts
a time.

Measured on the shared 2-core machine (mean of 10 runs), before and after numpy was kept out of
parsing, checking and printing: check 333 -> 92 ms, fmt 337 -> 94 ms, run 392 -> 397 ms (the
interpreter needs numpy); a bare `python -c pass` is 12 ms.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "add.uir"


def child_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def mean_cpu(argv: list[str], runs: int) -> float:
    code = f"import sys\nfrom uir.cli.main import main\nsys.exit(main({argv!r}))"
    before = child_cpu()
    for _ in range(runs):
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    return (child_cpu() - before) / runs


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    before = child_cpu()
    for _ in range(runs):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    python_only = (child_cpu() - before) / runs
    print(f"python -c pass      {python_only * 1000:7.1f} ms CPU")
    for command in ("check", "fmt", "run"):
        cpu = mean_cpu([command, str(EXAMPLE)], runs)
        print(f"uir {command:<15} {cpu * 1000:7.1f} ms CPU")


if __name__ == "__main__":
    main()
