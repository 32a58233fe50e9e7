"""How finely `uir perf` can tell compilers apart: the time it measures for compilers that do a
known amount of work, and how much those times scatter.

Run: uv run python benchmarks/perf_grading_bench.py [RUNS]
Times RUNS runs (default 20) of one benchmark through three shell-script compilers that print the
answer after sleeping 0, 0.05 and 0.2 s, each started as `uir perf` starts a team's compiler
(bubblewrap, and cgroups where this machine allows them; unisolated where it does not), and
prints for each the median, the spread (lowest and highest) and the median minus the sleep: the
sandbox's own start-up cost, which every team pays alike and which bounds how small a
difference the linear score can see. Nothing here asserts a time.
"""

from __future__ import annotations

import dataclasses
import os
import statistics
import sys
import tempfile
from pathlib import Path

from uir.cli.grading.harness import student_compiler
from uir.cli.grading.isolation import compiler_environment, isolate
from uir.cli.grading.limits import Limits
from uir.cli.grading.sandbox import ExecLauncher
from uir.cli.grading.testfile import parse_test
from uir.grading.perf import measure

BENCHMARK = (
    "# expect: 42\n%x = CONST i32 40\n%y = CONST i32 2\n%s = ADD i32 %x %y\n%o = SINK void %s\n"
)
SLEEPS = (0.0, 0.05, 0.2)


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    benchmark = parse_test(BENCHMARK, "forty_two.uir")
    with tempfile.TemporaryDirectory() as directory:
        print(f"{runs} runs each; times in ms")
        print(f"{'sleep':>6} {'median':>8} {'lowest':>8} {'highest':>8} {'overhead':>9}  isolation")
        for sleep in SLEEPS:
            script = Path(directory, f"sleep{sleep}.sh")
            script.write_text(f"sleep {sleep}\necho 42\n")
            compiler = student_compiler(f"sh {script}")
            isolation = isolate([os.curdir], compiler.argv)
            env = compiler_environment(os.environ) if isolation.bwrap else None
            compiler = dataclasses.replace(compiler, env=env, launcher=ExecLauncher(isolation))
            found = measure("bench", None, compiler, benchmark, Limits(), runs)
            assert found is not None and found.verdict == "pass", found
            times = [t * 1000 for t in found.times_s]
            median = statistics.median(times)
            print(
                f"{sleep * 1000:6.0f} {median:8.1f} {min(times):8.1f} {max(times):8.1f} "
                f"{median - sleep * 1000:9.1f}  {isolation.mode}"
            )


if __name__ == "__main__":
    main()
