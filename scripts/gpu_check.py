"""The CUDA backend checked on a GPU in one bounded run (scripts/gpu-check.sh runs this).

Steps, each in its own process under a timeout, all within DEADLINE_S (the whole run fits the
few minutes of device time a check is lent):

1. environment: Python, numpy, cuda-bindings, NVRTC, the driver and the GPU, and whether the
   backend is available (`uir plugins`);
2. suites: every suite (suites/week*) through `uir test --backend cuda`, bit-exact against each
   test's expectations;
3. tests: the backend's GPU tests (packages/uir-backend-cuda/tests/test_driver.py, and the
   driver's bookkeeping and CLI tests beside it);
4. benchmark: benchmarks/cuda_bench.py, each result checked bit for bit against numpy;
5. train: examples/train_lm.py for under a minute on the backend (the persistent session's
   device memory, a training step compiled once); its JSON figures (steps, losses, tokens/s);
6. resources: benchmarks/cuda_resources_bench.py, what thousands of GPU runs keep.

Results go to OUT (default .gpu-check/): a log per step and results.json, one entry a step with
its status (passed, failed, timed-out, skipped), seconds, exit status, counts (tests passed and
failed, benchmark rows bit-exact) and the end of its log. `--dry-run` runs the same steps
through cuda-emu (the CPU) at small benchmark sizes. With `--bundle DIR` the packages come from
the bundle scripts/gpu-prepare.sh made (scripts/gpu_bundle.py), unpacked into a temporary
directory; otherwise from the Python running this.

Exit status: 0 when every step passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gpu_bundle

ROOT = Path(__file__).resolve().parent.parent
# The whole run, setup included, ends within 8 minutes; each step gets its own timeout, cut to
# what is left of this (with room to write the results).
DEADLINE_S = 470.0
RESERVE_S = 10.0
GPU_TESTS = (
    "packages/uir-backend-cuda/tests/test_driver.py",
    "packages/uir-backend-cuda/tests/test_driver_bookkeeping.py",
    "packages/uir-backend-cuda/tests/test_cli.py",
)
# Versions and the GPU, as JSON; fails when the backend the run needs (argv[1]) is unavailable.
PROBE = """
import json, platform, sys
found = {"python": platform.python_version()}
ok = False
try:
    import numpy; found["numpy"] = numpy.__version__
    from cuda import bindings; found["cuda_bindings"] = bindings.__version__
    found["cuda_bindings_from"] = bindings.__file__
    from uir.backend.cuda import driver, emulation, nvrtc; found["nvrtc"] = nvrtc.version()
    found["cxx"] = " ".join(emulation.cxx() or []) or None
    gpu, why = driver.available(); found["gpu_available"] = gpu; found["gpu_why_not"] = why
    ok = gpu if sys.argv[1] == "cuda" else found["cxx"] is not None
    if gpu:
        device = driver.default_device(); d = device.driver
        found["architecture"] = device.arch
        found["driver_version"] = device.check("driver version", d.cuDriverGetVersion())
        name = device.check("device name", d.cuDeviceGetName(100, device.device))
        found["gpu"] = name.split(b"\\0")[0].decode()
except Exception as exc:
    found["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(found))
sys.exit(0 if ok else 1)
"""


@dataclass
class Step:
    """One step: what it runs, for how long at most, how to read its counts, and how the results
    show its command (`shown`, when the command itself is too long to read)."""

    name: str
    command: list[str]
    timeout_s: float
    counts: Callable[[str, Path], dict[str, Any]] = lambda log, out: {}
    shown: list[str] | None = None


@dataclass
class Result:
    name: str
    command: list[str]
    status: str  # passed, failed, timed-out, skipped
    seconds: float
    returncode: int | None
    timeout_s: float
    counts: dict[str, Any] = field(default_factory=dict)
    log: str = ""
    tail: list[str] = field(default_factory=list)


def run_step(step: Step, out: Path, env: dict[str, str], left_s: float) -> Result:
    """Run `step` in its own session, its output to OUT/NAME.log; killed with its children when
    its timeout (or what is left of the deadline) passes."""
    timeout = min(step.timeout_s, left_s)
    log = out / f"{step.name}.log"
    shown = step.shown or step.command
    if timeout <= 0:
        return Result(step.name, shown, "skipped", 0.0, None, 0.0, log=str(log))
    start = time.monotonic()
    with log.open("w") as f:
        process = subprocess.Popen(
            step.command,
            stdout=f,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )
        try:
            code: int | None = process.wait(timeout=timeout)
            status = "passed" if code == 0 else "failed"
        except subprocess.TimeoutExpired:
            _kill(process)
            code, status = None, "timed-out"
    seconds = time.monotonic() - start
    text = log.read_text(errors="replace")
    try:
        counts = step.counts(text, out)
    except (OSError, ValueError, KeyError, ET.ParseError) as exc:  # a step cut short writes none
        counts = {"unreadable": f"{type(exc).__name__}: {exc}"}
    tail = text.splitlines()[-20:]
    return Result(
        step.name, step.command, status, round(seconds, 2), code, timeout, counts, str(log), tail
    )


def _kill(process: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue


def suite_counts(report: Path) -> Callable[[str, Path], dict[str, Any]]:
    def read(log: str, out: Path) -> dict[str, Any]:
        data = json.loads(report.read_text())
        totals = data["totals"]
        failing = [t["path"] for t in data["tests"] if t["verdict"] != "pass"]
        verdicts = {k: v for k, v in totals["verdicts"].items() if v}
        return {
            "tests": totals["tests"],
            "passed": totals["passed"],
            "not_passed": totals["not_passed"],
            "verdicts": verdicts,
            "not_passed_first": failing[:20],
        }

    return read


def junit_counts(report: Path) -> Callable[[str, Path], dict[str, Any]]:
    def read(log: str, out: Path) -> dict[str, Any]:
        root = ET.parse(report).getroot()
        suite = root if root.tag == "testsuite" else root.find("testsuite")
        assert suite is not None
        n = {k: int(suite.get(k, 0)) for k in ("tests", "failures", "errors", "skipped")}
        n["passed"] = n["tests"] - n["failures"] - n["errors"] - n["skipped"]
        return n

    return read


def bench_counts(log: str, out: Path) -> dict[str, Any]:
    rows = [line for line in log.splitlines() if "bit-exact" in line or "MISMATCH" in line]
    return {
        "rows": len(rows),
        "bit_exact": sum("bit-exact" in r for r in rows),
        "mismatches": sum("MISMATCH" in r for r in rows),
        "figures": rows,
    }


def lines_counts(log: str, out: Path) -> dict[str, Any]:
    return {"figures": [line for line in log.splitlines() if line.strip()]}


def train_counts(figures: Path) -> Callable[[str, Path], dict[str, Any]]:
    def read(log: str, out: Path) -> dict[str, Any]:
        return json.loads(figures.read_text()) if figures.is_file() else {}

    return read


def probe_counts(log: str, out: Path) -> dict[str, Any]:
    return json.loads(log.strip().splitlines()[-1])


# The language model of week 10: on a GPU its default model for about 40 s; in a dry run a tiny
# one for 2 steps (cuda-emu compiles the step with g++).
TRAIN = ["--steps", "2000", "--minutes", "0.6", "--eval-batches", "4", "--sample", "100"]
TRAIN_SMALL = ["--steps", "2", "--d-model", "16", "--layers", "1", "--heads", "2", "--context",
               "8", "--batch", "2", "--eval-batches", "1", "--sample", "5"]  # fmt: skip


def steps(args: argparse.Namespace, out: Path) -> list[Step]:
    python = sys.executable
    backend = "cuda-emu" if args.dry_run else "cuda"
    suites = args.suite or sorted(str(p.relative_to(ROOT)) for p in (ROOT / "suites").glob("week*"))
    report = out / "suites.json"
    test_command = [
        python,
        "-m",
        "uir.cli.main",
        "test",
        *suites,
        "--backend",
        backend,
        "--memory-limit",
        "0",
        "--timeout",
        "60",
        "--json",
        str(report),
    ]
    if not args.dry_run or args.bundle is not None:
        # A CUDA context does not survive fork: each run starts its own Python. (So too from a
        # bundle: the fork server imports this installation without PYTHONPATH, and a bundle's
        # packages are on PYTHONPATH only.)
        test_command.append("--no-fork-server")
    junit = out / "tests.xml"
    trained = out / "train.json"
    for stale in (report, junit, trained):  # a step cut short must not show an earlier run's counts
        stale.unlink(missing_ok=True)
    tests = args.tests or list(GPU_TESTS)
    small = ["--small"] if args.dry_run else []
    resources = [
        "--skip-large",
        "--compiles",
        "5" if args.dry_run else "20",
        "--runs",
        "0" if args.dry_run else "2000",
    ]
    return [
        Step(
            "environment",
            [python, "-c", PROBE, backend],
            60,
            probe_counts,
            [python, "-c", "<gpu_check.PROBE>", backend],
        ),
        Step("suites", test_command, 180, suite_counts(report)),
        Step(
            "tests",
            [
                python,
                "-m",
                "pytest",
                *tests,
                "-p",
                "no:cacheprovider",
                "-q",
                "-rs",
                f"--junitxml={junit}",
            ],
            110,
            junit_counts(junit),
        ),
        Step(
            "benchmark",
            [python, "benchmarks/cuda_bench.py", "--backend", backend, *small],
            60,
            bench_counts,
        ),
        Step(
            "train",
            [
                python,
                "examples/train_lm.py",
                "--backend",
                backend,
                "--json",
                str(trained),
                *(TRAIN_SMALL if args.dry_run else TRAIN),
            ],
            60,
            train_counts(trained),
        ),
        Step(
            "resources",
            [python, "benchmarks/cuda_resources_bench.py", *resources],
            45,
            lines_counts,
        ),
    ]


def environment(bundle: Path | None, scratch: Path) -> dict[str, str]:
    """The environment of the steps: this one, with the bundle's directories first if any."""
    env = dict(os.environ)
    if bundle is not None:
        for name, paths in gpu_bundle.unpack(bundle, scratch).items():
            env[name] = os.pathsep.join([*paths, *filter(None, [env.get(name)])])
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="cuda-emu, small benchmarks")
    parser.add_argument("--bundle", type=Path, help="the packages from this bundle directory")
    parser.add_argument("--out", type=Path, default=ROOT / ".gpu-check", help="logs and JSON")
    parser.add_argument(
        "--suite",
        action="append",
        help="a suite or test file (repeatable; default: every suites/week*)",
    )
    parser.add_argument(
        "--tests",
        action="append",
        help="a pytest path (repeatable; default: the backend's GPU tests)",
    )
    args = parser.parse_args()
    start = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="uir-gpu-") as scratch:
        env = environment(args.bundle, Path(scratch))
        setup_s = time.monotonic() - start
        for step in steps(args, args.out.resolve()):
            left = DEADLINE_S - RESERVE_S - (time.monotonic() - start)
            result = run_step(step, args.out, env, left)
            results.append(result)
            print(
                f"== {result.name}: {result.status} in {result.seconds:.1f} s "
                f"{json.dumps(result.counts)[:300]}",
                flush=True,
            )
    ok = all(r.status == "passed" for r in results)
    summary = {
        "backend": "cuda-emu" if args.dry_run else "cuda",
        "dry_run": args.dry_run,
        "bundle": str(args.bundle) if args.bundle else None,
        "ok": ok,
        "setup_seconds": round(setup_s, 2),
        "total_seconds": round(time.monotonic() - start, 2),
        "deadline_seconds": DEADLINE_S,
        "steps": [asdict(r) for r in results],
    }
    (args.out / "results.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"== {'all passed' if ok else 'NOT all passed'} in {summary['total_seconds']:.0f} s; "
        f"{args.out / 'results.json'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
