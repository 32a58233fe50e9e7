"""What isolation and the fork server cost per test of `uir test`, in one run.

Run: uv run python benchmarks/grading_bench.py [TESTS] [JOBS]
Grades the first TESTS tests of suites/week1 (default 60) through:
  - a student compiler (a small Python script that prints the expected answer), without isolation
    and in the bubblewrap sandbox (with cgroups where this machine allows them);
  - the reference compiler started as `python -m uir.cli.main` for each test, and forked from the
    fork server (the default).
Prints wall-clock and CPU seconds per test (the grader's and its children's CPU together; the
fork server's too). Under bubblewrap the CPU figure undercounts: processes of the sandbox's PID
namespace are partly reaped outside the grader's process tree. Wall-clock time is the measure.
Nothing here asserts a time.
"""

from __future__ import annotations

import dataclasses
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

from uir.cli.grading.forkserver import ForkServer
from uir.cli.grading.harness import Compiler, reference_compiler, run_tests
from uir.cli.grading.isolation import Isolation, find_bwrap, find_cgroups
from uir.cli.grading.limits import Limits
from uir.cli.grading.sandbox import ExecLauncher

SUITE = Path(__file__).resolve().parents[1] / "suites" / "week1"
# A compiler that does no work: it prints the expected lines of the test it was given, which the
# bench hands it through a side file. What it costs is the price of starting a Python.
ECHO = """import sys
print(open(sys.argv[1]).read(), end="")
"""


def cpu_seconds(server: int | None = None) -> float:
    """CPU of this process and its reaped children, and of the fork server `server` and the
    children it reaped (they are not ours)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime
    if server is not None:
        fields = Path(f"/proc/{server}/stat").read_text().rsplit(")", 1)[1].split()
        total += sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total


def measure(
    label: str, tests: list[str], compiler: Compiler, jobs: int, server: int | None = None
) -> None:
    cpu, began = cpu_seconds(server), time.monotonic()
    results = run_tests(tests, compiler, Limits(), jobs)
    wall, cpu = time.monotonic() - began, cpu_seconds(server) - cpu
    passed = sum(r.passed for r in results)
    print(
        f"{label:<44} {1000 * wall / len(tests):8.1f} ms wall/test {1000 * cpu / len(tests):8.1f}"
        f" ms CPU/test  {len(tests) / wall:6.1f} tests/s  ({passed}/{len(tests)} passed)"
    )


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    tests = sorted(str(p) for p in SUITE.glob("*.uir"))[:count]
    with tempfile.TemporaryDirectory() as directory:
        # The student compiler reads the expected output from a file named after the test.
        answers = Path(directory)
        for test in tests:
            lines = [
                line.split(":", 1)[1].strip()
                for line in Path(test).read_text().splitlines()
                if line.startswith("# expect:")
            ]
            (answers / Path(test).name).write_text("".join(f"{line}\n" for line in lines))
        script = answers / "echo.py"
        script.write_text(ECHO)
        # `run FILE` comes last: a wrapper turns FILE into the side file's path.
        wrapper = answers / "student"
        wrapper.write_text(
            f'#!/bin/sh\nexec {sys.executable} -S {script} "{answers}/$(basename "$2")"\n'
        )
        wrapper.chmod(0o755)
        student = Compiler((str(wrapper),))
        print(f"{len(tests)} tests of {SUITE}, {jobs} at a time, on {os.cpu_count()} CPUs")
        measure("student, no isolation", tests, student, jobs)
        bwrap, cgroups = find_bwrap(), find_cgroups()
        if bwrap is None:
            print("student, bubblewrap: not measured (no working bwrap here)")
        else:
            for label, groups in (("namespaces", None), ("namespaces+cgroups", cgroups)):
                if label.endswith("cgroups") and groups is None:
                    print("student, bubblewrap + cgroups: not measured (no cgroups here)")
                    continue
                isolation = Isolation(bwrap, groups, (str(SUITE),), (str(answers),))
                sandboxed = dataclasses.replace(student, launcher=ExecLauncher(isolation))
                measure(f"student, bubblewrap ({label})", tests, sandboxed, jobs)
        measure("reference, python -m uir.cli.main per test", tests, reference_compiler(), jobs)
        with ForkServer(pythonpath=os.environ.get("PYTHONPATH", "")) as server:
            forked = Compiler(("uir",), ("run",), None, server)
            run_tests(tests[:1], forked, Limits(), 1)  # wait for the preloading to finish
            label = "reference, fork server (the default)"
            measure(label, tests, forked, jobs, server.server.pid)


if __name__ == "__main__":
    main()
