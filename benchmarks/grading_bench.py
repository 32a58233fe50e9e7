"""What isolation and the fork server cost per test of `uir test`, in one run.

Run: uv run python benchmarks/grading_bench.py [TESTS] [JOBS]
     uv run python benchmarks/grading_bench.py --log [COMPILERS] [TESTS]
Grades the first TESTS tests of suites/week1 (default 60) through:
  - a student compiler (a small Python script that prints the expected answer), without isolation
    and in the bubblewrap sandbox (with cgroups where this machine allows them);
  - the reference compiler started as `python -m uir.cli.main` for each test, and forked from the
    fork server (the default).
Prints wall-clock and CPU seconds per test (the grader's and its children's CPU together; the
fork server's too). Under bubblewrap the CPU figure undercounts: processes of the sandbox's PID
namespace are partly reaped outside the grader's process tree. Wall-clock time is the measure.

With --log: what resuming `uir grade` from a results log of COMPILERS x TESTS pairs (default
300 x 3000, 900,000 results, one in ten failed with a detail) costs in memory. A synthetic
results.jsonl is written, then each phase runs in a fresh Python and prints its peak resident
memory (ru_maxrss) and time: the interpreter with the grading modules imported, the log read
back as a list of every entry (how `uir grade` held it before it streamed the log), and the
resume `uir grade` does now (resultlog.Log, matrix.Tally, the grades document).
Nothing here asserts a time or a size.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from uir.cli.grading.forkserver import ForkServer
from uir.cli.grading.harness import Compiler, reference_compiler, run_tests
from uir.cli.grading.isolation import (
    SANDBOX_PATH,
    Isolation,
    find_bwrap,
    find_cgroups,
    find_identity,
)
from uir.cli.grading.limits import Limits
from uir.cli.grading.sandbox import ExecLauncher
from uir.grading import crossgrade, matrix, resultlog

SUITE = Path(__file__).resolve().parents[1] / "suites" / "week1"
# The student compiler runs in the sandbox, which has the system's Python, not this one.
PYTHON = shutil.which("python3", path=SANDBOX_PATH) or sys.executable
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


COMMIT = "0123456789abcdef0123456789abcdef01234567"


def _names(compilers: int, tests: int) -> tuple[list[str], list[str]]:
    return [f"team{i:04d}" for i in range(compilers)], [
        f"tests/author{j % 100:03d}/test_{j:05d}.uir" for j in range(tests)
    ]


def _digest(j: int) -> str:
    """A stand-in for the SHA-256 of test j's file (the log keys results by name and digest)."""
    return f"{j:064x}"


def write_log(directory: str, compilers: int, tests: int) -> int:
    """A results.jsonl as `uir grade` writes it, every pair done; its size in bytes."""
    names, paths = _names(compilers, tests)
    with open(os.path.join(directory, crossgrade.LOG_FILE), "w", encoding="utf-8") as f:
        f.write(json.dumps({"fingerprint": "bench", "shard": None}) + "\n")
        for i, name in enumerate(names):
            for j, path in enumerate(paths):
                failed = (i + j) % 10 == 0
                entry = {
                    "compiler": name,
                    "commit": COMMIT,
                    "test": path,
                    "key": crossgrade.test_key(path, _digest(j)),
                    "verdict": "fail" if failed else "pass",
                    "detail": f"line 1: expected '{j}', got '{j + 1}'" if failed else "",
                    "duration_s": 0.123,
                }
                f.write(json.dumps(entry) + "\n")
    return os.path.getsize(os.path.join(directory, crossgrade.LOG_FILE))


def log_phase(phase: str, directory: str, compilers: int, tests: int) -> None:
    """One phase, in this (fresh) process: prints its seconds and peak resident memory."""
    began = time.monotonic()
    names, paths = _names(compilers, tests)
    kept = 0
    if phase == "whole":  # every entry held, as a list, then the latest of each pair
        with open(os.path.join(directory, crossgrade.LOG_FILE), encoding="utf-8") as f:
            entries = [json.loads(line) for line in f.read().splitlines()[1:]]
        latest = {(e["compiler"], e["test"]): e for e in entries}
        kept = len(latest)
    elif phase == "stream":  # what `uir grade` does on a rerun now
        log = resultlog.Log(os.path.join(directory, crossgrade.LOG_FILE), "bench", None)
        entrants = [crossgrade.Entrant(n, n, Compiler(("x",)), COMMIT) for n in names]
        tally = matrix.Tally(names, paths)
        digests = {path: _digest(j) for j, path in enumerate(paths)}
        tests = crossgrade.Tests(tuple(paths), (), digests)
        kept = crossgrade.replay(log, tally, entrants, tests).taken
        log.close()
        document = matrix.grades([e.describe() for e in entrants], [], tally, {})
        kept = sum(row["tests"] - row["not_run"] for row in document["compilers"])
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{time.monotonic() - began:.2f} {peak_mib:.1f} {kept}")


def log_bench(compilers: int, tests: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        size = write_log(directory, compilers, tests)
        pairs = compilers * tests
        print(f"results.jsonl of {compilers} x {tests} = {pairs:,} results, {size / 2**20:.0f} MiB")
        labels = {
            "import": "interpreter and grading modules only",
            "whole": "the log held as a list of entries (before)",
            "stream": "read line by line into matrix.Tally (now)",
        }
        for phase, label in labels.items():
            argv = [sys.executable, __file__, "--log-phase", phase, directory]
            done = subprocess.run(
                [*argv, str(compilers), str(tests)], capture_output=True, text=True, check=True
            )
            seconds, peak, kept = done.stdout.split()
            print(f"{label:<46} peak {float(peak):8.1f} MiB  {float(seconds):6.2f} s  {kept} kept")


def main() -> None:
    if sys.argv[1:2] == ["--log-phase"]:
        log_phase(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
        return
    if sys.argv[1:2] == ["--log"]:
        compilers = int(sys.argv[2]) if len(sys.argv) > 2 else 300
        log_bench(compilers, int(sys.argv[3]) if len(sys.argv) > 3 else 3000)
        return
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    jobs = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    tests = sorted(str(p) for p in SUITE.glob("*.uir"))[:count]
    with tempfile.TemporaryDirectory() as directory:
        # The student compiler reads the expected output from a file named after the test.
        answers = Path(directory)
        answers.chmod(0o755)  # readable by the sandbox's own uid, when the grader is root
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
        wrapper.write_text(f'#!/bin/sh\nexec {PYTHON} -S {script} "{answers}/$(basename "$2")"\n')
        wrapper.chmod(0o755)
        student = Compiler((str(wrapper),))
        print(f"{len(tests)} tests of {SUITE}, {jobs} at a time, on {os.cpu_count()} CPUs")
        measure("student, no isolation", tests, student, jobs)
        identity = find_identity()  # as root: the dedicated uid, through setpriv
        bwrap, cgroups = find_bwrap(identity), find_cgroups()
        if bwrap is None:
            print("student, bubblewrap: not measured (no working bwrap here)")
        else:
            for label, groups in (("namespaces", None), ("namespaces+cgroups", cgroups)):
                if label.endswith("cgroups") and groups is None:
                    print("student, bubblewrap + cgroups: not measured (no cgroups here)")
                    continue
                isolation = Isolation(bwrap, groups, (str(SUITE),), (str(answers),), identity)
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
